#include "tools/replay/cli_fixes.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace clpool::replay {
namespace {

const std::vector<std::string> names = {"--capacity", "--compare", "--granule", "--json",
                                        "--svg",      "--limit",   "--min-capacity"};

TEST(EditDistance, Basics) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("--capcity", "--capacity"), 1u);
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
}  // namespace clpool::replay
