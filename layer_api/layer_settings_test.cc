#include "layer_api/layer_settings.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <string>
#include <vector>

namespace clpool::layer {
namespace {

parse_result parse(std::vector<env_entry> entries) { return parse_layer_settings(entries); }

// Parses one variable and returns its single error (fails the test if there is not exactly one).
std::string error_of(std::string_view name, std::string_view value) {
  parse_result r = parse({{name, value}});
  EXPECT_FALSE(r.ok()) << name << "=" << value;
  EXPECT_EQ(r.errors.size(), 1u) << r.error_text();
  return r.error_text();
}

TEST(ParseU64, AcceptsDigitsUpToMax) {
  EXPECT_EQ(parse_u64("0").value, 0u);
  EXPECT_EQ(parse_u64("007").value, 7u);
  EXPECT_EQ(parse_u64("18446744073709551615").value, UINT64_MAX);
}

TEST(ParseU64, RejectsEverythingElse) {
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1.0", "0x10", "1e3", "18446744073709551616",
                          "99999999999999999999999"}) {
    EXPECT_FALSE(parse_u64(bad).value) << bad;
    EXPECT_FALSE(parse_u64(bad).error.empty()) << bad;
  }
}

// The grammar itself is tabled in common/byte_size_test.cc; here: the layer uses it.
TEST(ParseByteSize, OneSpellingOfEachClass) {
  EXPECT_EQ(parse_byte_size("4096").value, 4096u);
  EXPECT_EQ(parse_byte_size("4096B").value, 4096u);
  EXPECT_EQ(parse_byte_size("512MiB").value, 512ull << 20);
  EXPECT_EQ(parse_byte_size("2gib").value, 2ull << 30);
  EXPECT_EQ(parse_byte_size("2g").value, 2ull << 30);
  u64_or_error r = parse_byte_size("2GB");
  EXPECT_FALSE(r.value);
  EXPECT_EQ(r.error, "\"2GB\" is ambiguous: decimal units are not accepted; write 2GiB");
  EXPECT_FALSE(parse_byte_size("18446744073709551616").value);
}

TEST(ParseLayerSettings, BudgetTakesTheSharedGrammar) {
  EXPECT_EQ(parse({{"CLPOOL_LAYER_BUDGET", "256m"}}).settings->budget_bytes, 256ull << 20);
  EXPECT_EQ(error_of("CLPOOL_LAYER_BUDGET", "2GB"),
            "CLPOOL_LAYER_BUDGET \"2GB\" is ambiguous: decimal units are not accepted; write 2GiB");
}

// One limit for every budget (issue 21): the variable stops where --budget and --capacity stop.
TEST(ParseLayerSettings, BudgetHasTheDeviceLimit) {
  EXPECT_EQ(parse({{"CLPOOL_LAYER_BUDGET", "4611686018427387904"}}).settings->budget_bytes,
            std::uint64_t{1} << 62);
  for (const char* too_big : {"4611686018427387905", "18446744073709551615", "4194305TiB"}) {
    const std::string e = error_of("CLPOOL_LAYER_BUDGET", too_big);
    EXPECT_NE(e.find("is larger than the largest device, 2^62 bytes"), std::string::npos)
        << too_big << ": " << e;
  }
}

// A budget not above its profile's headroom leaves nothing usable: refused, naming both.
TEST(ParseLayerSettings, BudgetMustExceedTheProfilesHeadroom) {
  const std::string profile = std::string(std::getenv("TEST_TMPDIR")) + "/big_headroom.profile";
  std::ofstream(profile) << "name = big_headroom\nheadroom = 256MiB\n";
  const parse_result r =
      parse({{"CLPOOL_LAYER_BUDGET", "128MiB"}, {"CLPOOL_LAYER_PROFILE", profile}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error_text(),
            "CLPOOL_LAYER_BUDGET 128 MiB is not more than the headroom of profile 'big_headroom', "
            "256 MiB: "
            "nothing would be usable (give a larger capacity or another profile)");
  EXPECT_TRUE(parse({{"CLPOOL_LAYER_BUDGET", "257MiB"}, {"CLPOOL_LAYER_PROFILE", profile}}).ok());
}

TEST(ParseProbability, Range) {
  EXPECT_EQ(parse_probability("0").value, 0.0);
  EXPECT_EQ(parse_probability("1").value, 1.0);
  EXPECT_EQ(parse_probability("0.25").value, 0.25);
  EXPECT_EQ(parse_probability(".5").value, 0.5);
  EXPECT_EQ(parse_probability("1.000").value, 1.0);
  for (const char* bad :
       {"", ".", "1.5", "-0.1", "nan", "inf", "1e-3", "0x1p-2", " 0.5", "0,5", "2"}) {
    EXPECT_FALSE(parse_probability(bad).value) << bad;
  }
}

// A value written above 1 is refused even where it rounds to 1.0 as a double: the text decides.
TEST(ParseProbability, AboveOneIsRefusedWhateverItsRounding) {
  for (const char* above : {"1.0000000000000000000001", "1.00000000000000000000000000000000001",
                            "01.0000000000000001", "10", "1.1"}) {
    const probability_or_error r = parse_probability(above);
    EXPECT_FALSE(r.value) << above;
    EXPECT_NE(r.error.find("must be between 0 and 1 inclusive"), std::string::npos) << r.error;
  }
  // Exactly 1, however written, and values just below it stay accepted.
  for (const char* one : {"1", "1.", "01", "001.000000000000000000000000"})
    EXPECT_EQ(parse_probability(one).value, 1.0) << one;
  EXPECT_EQ(parse_probability("0.99999999999999999999999").value, 1.0);  // below 1, rounds up
  EXPECT_NE(error_of("CLPOOL_LAYER_FAIL_PROB", "1.0000000000000000000001")
                .find("CLPOOL_LAYER_FAIL_PROB must be between 0 and 1 inclusive"),
            std::string::npos);
}

TEST(ParseLayerSettings, EmptyEnvironmentIsPassThrough) {
  parse_result r = parse({{"PATH", "/usr/bin"}, {"HOME", "/root"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r.settings, layer_settings{});
}

TEST(ParseLayerSettings, AllSettings) {
  parse_result r = parse({{"CLPOOL_LAYER_TRACE", "/tmp/t.trace"},
                          {"CLPOOL_LAYER_BUDGET", "2GiB"},
                          {"CLPOOL_LAYER_FAIL_NTH", "3"},
                          {"CLPOOL_LAYER_FAIL_PROB", "0.01"},
                          {"CLPOOL_LAYER_SEED", "42"},
                          {"CLPOOL_LAYER_ERRORS", "/tmp/layer errors.txt"}});
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r.settings->errors_path, "/tmp/layer errors.txt");
  EXPECT_EQ(r.settings->trace_path, "/tmp/t.trace");
  EXPECT_EQ(r.settings->budget_bytes, 2ull << 30);
  EXPECT_EQ(r.settings->fail_nth, 3u);
  EXPECT_EQ(r.settings->fail_probability, 0.01);
  EXPECT_EQ(r.settings->seed, 42u);
}

TEST(ParseLayerSettings, ErrorsNameTheVariable) {
  EXPECT_NE(error_of("CLPOOL_LAYER_BUDGET", "2GB").find("CLPOOL_LAYER_BUDGET"), std::string::npos);
  EXPECT_NE(error_of("CLPOOL_LAYER_BUDGET", "0").find("greater than 0"), std::string::npos);
  EXPECT_NE(error_of("CLPOOL_LAYER_TRACE", "").find("CLPOOL_LAYER_TRACE is empty"),
            std::string::npos);
  EXPECT_NE(error_of("CLPOOL_LAYER_FAIL_NTH", "0").find("at least 1"), std::string::npos);
  EXPECT_NE(error_of("CLPOOL_LAYER_FAIL_NTH", "x").find("CLPOOL_LAYER_FAIL_NTH"),
            std::string::npos);
  EXPECT_NE(error_of("CLPOOL_LAYER_FAIL_PROB", "1.5").find("between 0 and 1"), std::string::npos);
  EXPECT_NE(error_of("CLPOOL_LAYER_BUGDET", "1GiB").find("not a setting"), std::string::npos);
  EXPECT_NE(error_of("CLPOOL_LAYER_ERRORS", "").find("CLPOOL_LAYER_ERRORS is empty"),
            std::string::npos);
  EXPECT_NE(error_of("CLPOOL_LAYER_REPORT", "").find("CLPOOL_LAYER_REPORT is empty"),
            std::string::npos);
  EXPECT_NE(error_of("CLPOOL_LAYER_FAIL_FIRST_USE_NTH", "0").find("at least 1"), std::string::npos);
  EXPECT_NE(error_of("CLPOOL_LAYER_KEEP_TRACE", "yes").find("must be 1 (on) or 0 (off)"),
            std::string::npos);
  EXPECT_NE(error_of("CLPOOL_LAYER_KEEP_TRACE", "1").find("CLPOOL_LAYER_TRACE is not"),
            std::string::npos);
  EXPECT_NE(error_of("CLPOOL_LAYER_FAIL_UNTIL_FREE", "yes").find("must be 1 (on) or 0 (off)"),
            std::string::npos);
  EXPECT_NE(error_of("CLPOOL_LAYER_FAIL_UNTIL_FREE", "1").find("neither CLPOOL_LAYER_FAIL_NTH nor"),
            std::string::npos);
}

TEST(ParseLayerSettings, ProfileIsADeviceModelProfileAndNeedsABudget) {
  const parse_result r =
      parse_layer_settings({{"CLPOOL_LAYER_BUDGET", "4GiB"}, {"CLPOOL_LAYER_PROFILE", "nvidia"}});
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r.settings->profile, device_model::load_profile("nvidia"));
  EXPECT_NE(error_of("CLPOOL_LAYER_PROFILE", "nvidia").find("CLPOOL_LAYER_BUDGET is not"),
            std::string::npos);
  const parse_result bad =
      parse_layer_settings({{"CLPOOL_LAYER_BUDGET", "4GiB"}, {"CLPOOL_LAYER_PROFILE", "amd"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error_text().find("CLPOOL_LAYER_PROFILE is not a usable profile: profile 'amd': "
                                  "no such built-in profile"),
            std::string::npos)
      << bad.error_text();
  const parse_result missing = parse_layer_settings(
      {{"CLPOOL_LAYER_BUDGET", "4GiB"}, {"CLPOOL_LAYER_PROFILE", "/no/such.profile"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error_text().find("/no/such.profile: cannot be opened"), std::string::npos);
}

TEST(ParseLayerSettings, StacksAreAModeAndNeedATrace) {
  for (const char* m : {"none", "native", "python", "all"}) {
    parse_result r = parse({{"CLPOOL_LAYER_TRACE", "/tmp/t.trace"}, {"CLPOOL_LAYER_STACKS", m}});
    ASSERT_TRUE(r.ok()) << r.error_text();
    EXPECT_EQ(r.settings->stacks, m);
  }
  EXPECT_EQ(parse({{"CLPOOL_LAYER_TRACE", "/tmp/t.trace"}}).settings->stacks, "none");
  parse_result bad =
      parse({{"CLPOOL_LAYER_TRACE", "/tmp/t.trace"}, {"CLPOOL_LAYER_STACKS", "yes"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error_text().find("CLPOOL_LAYER_STACKS"), std::string::npos) << bad.error_text();
  EXPECT_NE(bad.error_text().find("none, native, python or all"), std::string::npos);
  parse_result alone = parse({{"CLPOOL_LAYER_STACKS", "all"}});
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.error_text().find("CLPOOL_LAYER_TRACE is not"), std::string::npos)
      << alone.error_text();
}

TEST(ParseLayerSettings, FailFirstUseNthNeedsAProfileThatCommitsAtFirstUse) {
  const parse_result ok = parse_layer_settings({{"CLPOOL_LAYER_BUDGET", "4GiB"},
                                                {"CLPOOL_LAYER_PROFILE", "nvidia"},
                                                {"CLPOOL_LAYER_FAIL_FIRST_USE_NTH", "3"},
                                                {"CLPOOL_LAYER_REPORT", "/tmp/r.txt"}});
  ASSERT_TRUE(ok.ok()) << ok.error_text();
  EXPECT_EQ(ok.settings->fail_first_use_nth, 3u);
  EXPECT_EQ(ok.settings->report_path, "/tmp/r.txt");
  for (const auto& env : std::vector<std::vector<env_entry>>{
           {{"CLPOOL_LAYER_FAIL_FIRST_USE_NTH", "3"}},
           {{"CLPOOL_LAYER_BUDGET", "4GiB"}, {"CLPOOL_LAYER_FAIL_FIRST_USE_NTH", "3"}},
           {{"CLPOOL_LAYER_BUDGET", "4GiB"},
            {"CLPOOL_LAYER_PROFILE", "exact"},
            {"CLPOOL_LAYER_FAIL_FIRST_USE_NTH", "3"}}}) {
    const parse_result r = parse_layer_settings(env);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error_text().find("CLPOOL_LAYER_FAIL_FIRST_USE_NTH needs CLPOOL_LAYER_BUDGET and a "
                                  "CLPOOL_LAYER_PROFILE whose device commits memory at first use"),
              std::string::npos)
        << r.error_text();
  }
}

TEST(ParseLayerSettings, SeedNeedsProbability) {
  EXPECT_NE(error_of("CLPOOL_LAYER_SEED", "7").find("CLPOOL_LAYER_FAIL_PROB is not"),
            std::string::npos);
}

TEST(ParseLayerSettings, ReportsEveryProblemAndDuplicates) {
  parse_result r = parse({{"CLPOOL_LAYER_BUDGET", "x"},
                          {"CLPOOL_LAYER_FAIL_NTH", "-1"},
                          {"CLPOOL_LAYER_BUDGET", "1GiB"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors.size(), 3u) << r.error_text();
  EXPECT_NE(r.error_text().find("set more than once"), std::string::npos);
}

TEST(ParseLayerSettings, ControlCharactersAreEscapedInMessages) {
  const std::string msg = error_of("CLPOOL_LAYER_BUDGET", std::string_view("1\nGiB", 5));
  EXPECT_NE(msg.find("\\x0a"), std::string::npos) << msg;
}

TEST(ParseLayerSettingsFromEnviron, SplitsAtFirstEquals) {
  const char* envp[] = {"CLPOOL_LAYER_TRACE=/tmp/a=b", "NOEQUALS", "OTHER=1", nullptr};
  parse_result r = parse_layer_settings_from_environ(envp);
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r.settings->trace_path, "/tmp/a=b");
  EXPECT_TRUE(parse_layer_settings_from_environ(nullptr).ok());
}

TEST(ParseLayerSettingsText, OneStringInSettingsOrErrorsOut) {
  parse_result r =
      parse_layer_settings_text("CLPOOL_LAYER_BUDGET=4GiB\n\nPATH=/bin\nCLPOOL_LAYER_FAIL_NTH=9");
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r.settings->budget_bytes, 4ull << 30);
  EXPECT_EQ(r.settings->fail_nth, 9u);
  EXPECT_FALSE(parse_layer_settings_text("CLPOOL_LAYER_BUDGET").ok());
  EXPECT_TRUE(parse_layer_settings_text("").ok());
  // Arbitrary bytes never crash and always give settings or at least one error.
  const char junk_bytes[] = "CLPOOL_LAYER_\0\xff=\n=\n==\nCLPOOL_LAYER_SEED=1=2";
  const std::string junk(junk_bytes, sizeof(junk_bytes) - 1);
  parse_result j = parse_layer_settings_text(junk);
  EXPECT_NE(j.ok(), !j.errors.empty());
  EXPECT_NE(j.error_text().find("\"CLPOOL_LAYER_\\x00\\xff\" is not a setting"), std::string::npos)
      << j.error_text();
}

}  // namespace
}  // namespace clpool::layer
