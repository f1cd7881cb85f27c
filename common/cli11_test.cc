// The CLI11 adapter: every parse mistake is one line in the tools' words, --help is exit 0, an
// empty value is refused.
#include "common/cli11.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/cli.h"

namespace clpool::common {
namespace {

struct tool {
  CLI::App app{"a tool"};
  std::string trace, capacity, output;
  std::vector<std::string> compare, pair;
  unsigned bits = 4;
  bool quiet = false;
  tool() {
    app.add_option("trace", trace, "the trace");
    app.add_option("--capacity", capacity, "a size");
    app.add_option("--output", output, "a file");
    app.add_option("--compare", compare, "configurations")->expected(1, -1);
    app.add_option("--pair", pair, "two profiles")->expected(2);
    app.add_option("--leading-bits", bits, "bits")->check(CLI::Range(0u, 12u));
    app.add_flag("--quiet", quiet, "quiet");
  }
  // The message, or "" when parsing went on; `rc` receives the exit code.
  std::string parse(std::vector<std::string> args, int* rc = nullptr) {
    args.insert(args.begin(), "tool");
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    if (std::string e = empty_assignment_error(app, static_cast<int>(argv.size()), argv.data());
        !e.empty()) {
      if (rc != nullptr) *rc = exit_usage;
      return e;
    }
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError& e) {
      if (rc != nullptr) *rc = exit_usage;
      return cli11_error_message(app, e);
    }
    if (rc != nullptr) *rc = exit_ok;
    return empty_value_error(app);
  }
};

TEST(Cli11, AnOptionGivenTwice) {
  EXPECT_EQ(tool().parse({"t", "--capacity", "1GiB", "--capacity", "2GiB"}),
            "--capacity: given twice");
  EXPECT_EQ(tool().parse({"t", "--output=a", "--output=b", "--output=c"}),
            "--output: given 3 times");
}

TEST(Cli11, AnOptionWithoutItsValue) {
  EXPECT_EQ(tool().parse({"t", "--compare"}), "--compare: needs a value");
  // An option of two values (clpool_probe's --compare A B): a wrong count is not "given 3 times".
  EXPECT_EQ(tool().parse({"t", "--pair", "a", "b", "c"}), "--pair: takes 2 values, got 3");
  EXPECT_EQ(tool().parse({"t", "--pair", "a", "b", "--pair", "c", "d"}), "--pair: given twice");
  EXPECT_EQ(tool().parse({"t", "--capacity"}), "--capacity: needs a value");
}

TEST(Cli11, AnEmptyValueIsRefused) {
  EXPECT_EQ(tool().parse({"t", "--capacity", ""}), "--capacity: needs a value");
  EXPECT_EQ(tool().parse({"t", "--output="}), "--output: needs a value");
  EXPECT_EQ(tool().parse({"t", "--output=", "--quiet"}), "--output: needs a value")
      << "CLI11 alone would take --quiet as the file";
  EXPECT_EQ(tool().parse({"t", "--", "--output="}), "unexpected argument '--output=' (see --help)");
  EXPECT_EQ(tool().parse({"t", "--compare", "pool", ""}), "--compare: needs a value");
  EXPECT_EQ(tool().parse({"", "--capacity", "1GiB"}), "")
      << "a positional argument is the tool's to check";
}

TEST(Cli11, ASecondPositionalArgument) {
  EXPECT_EQ(tool().parse({"a.trace", "b.trace"}), "unexpected argument 'b.trace' (see --help)");
}

TEST(Cli11, AMistypedOptionGetsTheNearestOne) {
  EXPECT_EQ(tool().parse({"t", "--capcity", "1GiB"}),
            "unknown option '--capcity'; did you mean --capacity? (see --help)");
}

TEST(Cli11, ANumberOutOfItsRangeAndAFlagGivenAValueAreSaidInTheToolsWords) {
  int rc = 0;
  const std::string m = tool().parse({"t", "--leading-bits", "99"}, &rc);
  EXPECT_EQ(m, "--leading-bits: '99' is not a number from 0 to 12");
  EXPECT_EQ(rc, exit_usage);
  EXPECT_EQ(tool().parse({"t", "--leading-bits", "4x"}),
            "--leading-bits: '4x' is not a number from 0 to 12");
  EXPECT_EQ(tool().parse({"t", "--quiet=out.json"}), "--quiet takes no value (given 'out.json')");
  // Fewer values than an option of several takes.
  EXPECT_EQ(tool().parse({"t", "--pair", "a"}), "--pair: takes 2 values, got 1");
}

TEST(Cli11, OtherCheckFailuresKeepCli11sWordsOnOneLine) {
  CLI::App app{"a tool"};
  std::string path;
  app.add_option("--file", path, "a file")->check(CLI::ExistingFile);
  const char* argv[] = {"tool", "--file", "/no/such/file"};
  std::string m;
  try {
    app.parse(3, argv);
  } catch (const CLI::ParseError& e) {
    m = cli11_error_message(app, e);
  }
  EXPECT_NE(m.find("/no/such/file"), std::string::npos) << m;
  EXPECT_NE(m.find("(see --help)"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos);
}

TEST(Cli11, ParseCliReportsOneLineAndExit2) {
  tool t;
  const char* argv[] = {"tool", "a", "b"};
  testing::internal::CaptureStderr();
  const std::optional<int> rc = parse_cli(t.app, 3, argv, "mytool");
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "mytool: error: unexpected argument 'b' (see --help)\n");
  EXPECT_EQ(rc, exit_usage);
  tool good;
  const char* ok[] = {"tool", "a", "--capacity", "1GiB"};
  EXPECT_EQ(parse_cli(good.app, 4, ok, "mytool"), std::nullopt);
}

TEST(Cli11, HelpIsExit0) {
  tool t;
  const char* argv[] = {"tool", "--help"};
  testing::internal::CaptureStdout();
  EXPECT_EQ(parse_cli(t.app, 2, argv, "mytool"), exit_ok);
  EXPECT_NE(testing::internal::GetCapturedStdout().find("--capacity"), std::string::npos);
}

}  // namespace
}  // namespace clpool::common
