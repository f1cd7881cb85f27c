#include "common/cli.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace clpool::common {
namespace {

const std::vector<std::string> names = {"--capacity", "--compare", "--granule",     "--json",
                                        "--svg",      "--limit",   "--min-capacity"};

TEST(EditDistance, Basics) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("--capcity", "--capacity"), 1u);
}

TEST(UnknownOption, OneLineWithTheSuggestionAndWhereHelpIs) {
  EXPECT_EQ(unknown_option("--capcity=1GiB", names, "tool --help"),
            "unknown option '--capcity=1GiB'; did you mean --capacity? (see tool --help)");
  EXPECT_EQ(unknown_option("--frobnicate", names, "tool --help"),
            "unknown option '--frobnicate' (see tool --help)");
  EXPECT_EQ(unknown_option("recrod", {"record"}, "clpool --help"),
            "unknown command 'recrod'; did you mean record? (see clpool --help)");
}

TEST(Messages, OneWordingEach) {
  EXPECT_EQ(given_twice("--out"), "--out: given twice");
  EXPECT_EQ(given_twice("--out", 4), "--out: given 4 times");
  EXPECT_EQ(needs_value("--budget"), "--budget: needs a value");
  EXPECT_EQ(unexpected_argument("b.trace", "--help"), "unexpected argument 'b.trace' (see --help)");
}

TEST(Messages, AUsageErrorIsOneLineAndExit2) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(report_usage_error("tool", "two\nlines"), exit_usage);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "tool: error: two\\x0Alines\n");
  // A path the user typed cannot drive the terminal; UTF-8 is kept.
  EXPECT_EQ(error_line("tool", "profile file a\x1b[31mb: cannot be opened: caf\xc3\xa9"),
            "tool: error: profile file a\\x1B[31mb: cannot be opened: caf\xc3\xa9");
}

TEST(SizeOption, UnitsAndPlainBytes) {
  EXPECT_EQ(size_option("0", "size"), 0u);
  EXPECT_EQ(size_option("4096", "size"), 4096u);
  EXPECT_EQ(size_option("4096B", "size"), 4096u);
  EXPECT_EQ(size_option("1KiB", "size"), 1024u);
  EXPECT_EQ(size_option("512MiB", "size"), 512ull << 20);
  EXPECT_EQ(size_option("4GiB", "size"), 4ull << 30);
  EXPECT_EQ(size_option("4gib", "size"), 4ull << 30);
  EXPECT_EQ(size_option("4G", "size"), 4ull << 30);
  EXPECT_EQ(size_option("2TiB", "size"), 2ull << 40);
  EXPECT_EQ(size_option("18446744073709551615", "size"), ~0ull);
}

void expect_bad(const char* text, const char* fragment) {
  try {
    size_option(text, "--capacity");
    ADD_FAILURE() << "accepted " << text;
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--capacity"), std::string::npos) << e.what();
  }
}

TEST(SizeOption, RejectsGarbage) {
  expect_bad("", "empty");
  expect_bad("-1", "negative");
  expect_bad("-4GiB", "negative");
  expect_bad("abc", "not a number");
  expect_bad("1.5GiB", "whole number");
  expect_bad("4GB", "is ambiguous: decimal units are not accepted; write 4GiB");
  expect_bad("4 potatoes", "unknown unit");
  expect_bad("18446744073709551616", "larger than");
  expect_bad("17179869184GiB", "larger than");
}

// The grammar is tabled in common/byte_size_test.cc; here: every tool's flags use it.
TEST(SizeOption, OneSpellingOfEachClass) {
  EXPECT_EQ(size_option("128MiB", "size"), 128ull << 20);
  EXPECT_EQ(size_option("128mib", "size"), 128ull << 20);
  EXPECT_EQ(size_option("128m", "size"), 128ull << 20);
  EXPECT_EQ(size_option("4096B", "size"), 4096u);
  try {
    size_option("128MB", "--capacity");
    ADD_FAILURE() << "accepted 128MB";
  } catch (const usage_error& e) {
    EXPECT_STREQ(e.what(),
                 "--capacity: '128MB' is ambiguous: decimal units are not accepted; write 128MiB");
  }
}

TEST(SizeOption, ADeviceIsAtMostTwoToThe62) {
  EXPECT_EQ(size_option("4611686018427387904", "size", {.device = true}), std::uint64_t{1} << 62);
  try {
    size_option("18446744073709551615", "--capacity", {.device = true});
    ADD_FAILURE() << "accepted 2^64 - 1";
  } catch (const usage_error& e) {
    EXPECT_STREQ(e.what(),
                 "--capacity: '18446744073709551615' is larger than the largest device, "
                 "2^62 bytes (4 EiB)");
  }
}

TEST(SizeOption, APositiveSizeRefusesZero) {
  EXPECT_EQ(size_option("0", "--granule"), 0u);
  try {
    size_option("0KiB", "--granule", {.positive = true});
    ADD_FAILURE() << "accepted 0KiB";
  } catch (const usage_error& e) {
    EXPECT_STREQ(e.what(), "--granule: must be positive, got '0KiB'");
  }
  std::string why;
  EXPECT_FALSE(parse_size("0", {.positive = true}, why));
  EXPECT_EQ(why, "is zero");
}

TEST(ExitCodes, OneMeaningEach) {
  EXPECT_EQ(exit_ok, 0);
  EXPECT_EQ(exit_usage, 2);
  EXPECT_NE(exit_finding, exit_usage);
  EXPECT_EQ(exit_cannot_run, 127);
}

TEST(SuggestOption, NearMissesAndNothingForStrangers) {
  EXPECT_EQ(suggest_option("--capcity", names), "--capacity");
  EXPECT_EQ(suggest_option("--capacty=1GiB", names), "--capacity");
  EXPECT_EQ(suggest_option("--cpaacity", names), "--capacity");
  EXPECT_EQ(suggest_option("--jsno", names), "--json");
  EXPECT_EQ(suggest_option("--min-capcity", names), "--min-capacity");
  EXPECT_EQ(suggest_option("--sgv", names), "");  // two edits on a 3-letter name: too far
  EXPECT_EQ(suggest_option("--frobnicate", names), "");
  EXPECT_EQ(suggest_option("--x", names), "");
}

TEST(UnderWorkingDirectory, OnlyRelativePathsUnderBazelRun) {
  unsetenv("BUILD_WORKING_DIRECTORY");
  EXPECT_EQ(under_working_directory("a/x.trace"), "a/x.trace");
  setenv("BUILD_WORKING_DIRECTORY", "/home/me", 1);
  EXPECT_EQ(under_working_directory("a/x.trace"), "/home/me/a/x.trace");
  EXPECT_EQ(under_working_directory("/abs/x.trace"), "/abs/x.trace");
  EXPECT_EQ(under_working_directory("-"), "-");
  EXPECT_EQ(under_working_directory(""), "");
  setenv("BUILD_WORKING_DIRECTORY", "/", 1);
  EXPECT_EQ(under_working_directory("x"), "/x");
  unsetenv("BUILD_WORKING_DIRECTORY");
}

}  // namespace
}  // namespace clpool::common
