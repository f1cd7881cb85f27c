#include "common/cli.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace clpool::common {
namespace {

const std::vector<std::string> names = {"--capacity", "--compare", "--granule", "--json",
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
