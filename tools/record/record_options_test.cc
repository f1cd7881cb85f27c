#include "tools/record/record_options.h"

#include <gtest/gtest.h>

namespace clpool::record {
namespace {

std::string error_of(const std::vector<std::string>& args) {
  const parse_outcome p = parse_record_options(args);
  EXPECT_FALSE(p.options.has_value());
  return p.error;
}

TEST(RecordOptions, DefaultsAndTheProgram) {
  const parse_outcome p = parse_record_options({"python3", "-u", "x.py", "--out", "y"});
  ASSERT_TRUE(p.options) << p.error;
  EXPECT_EQ(p.options->out, default_trace_path);
  EXPECT_FALSE(p.options->force);
  EXPECT_FALSE(p.options->budget_bytes);
  // Everything from the program on is the program's, flags included.
  EXPECT_EQ(p.options->program, (std::vector<std::string>{"python3", "-u", "x.py", "--out", "y"}));
}

TEST(RecordOptions, FlagsBothWaysThenDashDash) {
  const parse_outcome p = parse_record_options(
      {"--budget", "2GiB", "--profile=nvidia", "--out=a.trace", "--force", "--", "-weird"});
  ASSERT_TRUE(p.options) << p.error;
  EXPECT_EQ(p.options->budget_bytes, std::uint64_t{2} << 30);
  EXPECT_EQ(p.options->profile, "nvidia");
  EXPECT_EQ(p.options->out, "a.trace");
  EXPECT_TRUE(p.options->force);
  EXPECT_EQ(p.options->program, std::vector<std::string>{"-weird"});
}

TEST(RecordOptions, HelpRunsNothing) {
  const parse_outcome p = parse_record_options({"--out", "x", "--help"});
  ASSERT_TRUE(p.options);
  EXPECT_TRUE(p.options->help);
}

TEST(RecordOptions, EveryMistakeNamesItsFlag) {
  EXPECT_EQ(error_of({"--budget", "2GB", "prog"}),
            "--budget: '2GB' is ambiguous: decimal units are not accepted; write 2GiB");
  EXPECT_EQ(error_of({"--budget", "0", "prog"}).rfind("--budget: '0' is zero", 0), 0u);
  EXPECT_EQ(error_of({"--budget=-1", "prog"}).rfind("--budget: '-1' ", 0), 0u);
  EXPECT_EQ(error_of({"--budget"}), "--budget: needs a value");
  EXPECT_EQ(error_of({"--budget=", "prog"}), "--budget: needs a value");
  EXPECT_EQ(error_of({"--budget", "1GiB", "--profile", "amd", "prog"}).rfind("--profile: ", 0), 0u);
  EXPECT_EQ(error_of({"--profile", "nvidia", "prog"}).rfind("--profile: needs --budget", 0), 0u);
  EXPECT_EQ(error_of({"--out", "a", "--out", "b", "prog"}), "--out: given twice");
  EXPECT_EQ(error_of({"--force=1", "prog"}), "--force takes no value");
  EXPECT_EQ(error_of({"--outt", "a", "prog"}),
            "unknown option '--outt'; did you mean --out? (see clpool record --help)");
  EXPECT_EQ(error_of({"-x", "prog"}), "unknown option '-x' (see clpool record --help)");
  EXPECT_EQ(error_of({}).rfind("no program to run", 0), 0u);
  EXPECT_EQ(error_of({"--force", "--"}).rfind("no program to run", 0), 0u);
}

}  // namespace
}  // namespace clpool::record
