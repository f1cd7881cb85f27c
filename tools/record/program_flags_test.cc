// The scanner `clpool record` and `clpool sweep` share: where the program starts, how values are
// given, and each mistake as one line.
#include "tools/record/program_flags.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace clpool::record {
namespace {

struct scanned {
  std::string error;
  bool help = false;
  std::vector<std::string> program;
  std::vector<std::pair<std::string, std::string>> values;
  std::vector<std::string> bare;
};

scanned scan(const std::vector<std::string>& args) {
  scanned r;
  const flag_grammar g{{"--out", "-j"}, {"--force"}, "tool --help"};
  r.error = scan_program_flags(
      args, g, r.help, r.program,
      [&r](const std::string& flag, const std::string& value) {
        if (value.empty()) return flag + ": needs a value";
        r.values.emplace_back(flag, value);
        return std::string();
      },
      [&r](const std::string& flag) { r.bare.push_back(flag); });
  return r;
}

TEST(ProgramFlags, TheProgramStartsAfterDashDashOrAtTheFirstWord) {
  scanned r = scan({"--out", "t.trace", "-j=4", "--force", "--force", "./app", "--out", "x"});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.program, (std::vector<std::string>{"./app", "--out", "x"}));
  EXPECT_EQ(r.values,
            (std::vector<std::pair<std::string, std::string>>{{"--out", "t.trace"}, {"-j", "4"}}));
  EXPECT_EQ(r.bare, (std::vector<std::string>{"--force", "--force"}));
  r = scan({"--force", "--", "-weird-program", "--force"});
  EXPECT_EQ(r.program, (std::vector<std::string>{"-weird-program", "--force"}));
  EXPECT_EQ(r.bare.size(), 1u);
  r = scan({"--out", "--force"});  // a value may start with '-'
  EXPECT_EQ(r.values, (std::vector<std::pair<std::string, std::string>>{{"--out", "--force"}}));
  EXPECT_TRUE(r.program.empty());
  EXPECT_TRUE(scan({}).program.empty());
}

TEST(ProgramFlags, HelpStopsTheScan) {
  for (const char* h : {"--help", "-h"}) {
    const scanned r = scan({"--force", h, "--bogus"});
    EXPECT_TRUE(r.help) << h;
    EXPECT_EQ(r.error, "") << h;
  }
  EXPECT_FALSE(scan({"--", "--help"}).help);  // the program's own
}

TEST(ProgramFlags, EachMistakeIsOneLine) {
  EXPECT_EQ(scan({"--force=yes", "./app"}).error, "--force takes no value");
  EXPECT_EQ(scan({"--help=1"}).error, "--help takes no value");
  EXPECT_NE(scan({"--out", "a", "--out=b", "./app"}).error.find("--out"), std::string::npos);
  EXPECT_NE(scan({"--out", "a", "--out=b", "./app"}).error.find("twice"), std::string::npos);
  const std::string unknown = scan({"--froce", "./app"}).error;
  EXPECT_NE(unknown.find("--froce"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("--force"), std::string::npos) << unknown;  // did you mean
  EXPECT_NE(unknown.find("tool --help"), std::string::npos) << unknown;
  EXPECT_EQ(scan({"--out"}).error, "--out: needs a value");  // the callback's word
  // '--' starts the program: never a flag's value.
  EXPECT_EQ(scan({"--out", "--", "./app"}).error, "--out: needs a value");
  for (const std::string& e :
       {scan({"--force=yes"}).error, scan({"--froce"}).error, scan({"-j", "1", "-j", "2"}).error}) {
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace clpool::record
