#include "common/output_file.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace clpool::common {
namespace {

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* t = std::getenv("TEST_TMPDIR");
    std::string templ = std::string(t && *t ? t : "/tmp") + "/outXXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  static void write(const std::string& p, const std::string& text) { std::ofstream(p) << text; }
  static std::string read(const std::string& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  int entries() const {
    int n = 0;
    DIR* d = opendir(dir_.c_str());
    while (dirent* e = readdir(d)) n += std::string(e->d_name) != "." && std::string(e->d_name) != "..";
    closedir(d);
    return n;
  }
  std::string dir_;
};

std::string message_of(const std::string& flag, const std::string& out, const std::string& in) {
  try {
    refuse_if_same_file(flag, out, {{"--in", in}});
  } catch (const output_error& e) {
    return e.what();
  }
  return "";
}

TEST_F(OutputFileTest, SameFileIsRefusedUnderEverySpelling) {
  write(path("a"), "data");
  ASSERT_EQ(link(path("a").c_str(), path("hard").c_str()), 0);
  ASSERT_EQ(symlink(path("a").c_str(), path("soft").c_str()), 0);
  ASSERT_EQ(mkdir(path("sub").c_str(), 0700), 0);
  for (const std::string& out : {path("a"), path("sub/../a"), path("hard"), path("soft")}) {
    const std::string m = message_of("--out", out, path("a"));
    EXPECT_NE(m.find("--out: '" + out + "' is the same file as the input"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
    // And the other way round: the input named through the link.
    EXPECT_NE(message_of("--out", path("a"), out), "");
  }
  EXPECT_EQ(read(path("a")), "data");
}

TEST_F(OutputFileTest, DifferentOrMissingFilesAreAllowed) {
  write(path("a"), "x");
  write(path("b"), "x");
  EXPECT_EQ(message_of("--out", path("b"), path("a")), "");
  EXPECT_EQ(message_of("--out", path("new"), path("a")), "");
  EXPECT_EQ(message_of("--out", path("a"), path("missing")), "");
  // Character devices are never clobbered: reading and writing /dev/null is fine.
  EXPECT_EQ(message_of("--out", "/dev/null", "/dev/null"), "");
}

TEST_F(OutputFileTest, CommitReplacesAtomically) {
  write(path("out"), "old");
  {
    atomic_output_file f(path("out"), "--out");
    f.stream() << "new";
    EXPECT_EQ(read(path("out")), "old");  // nothing visible before commit
    EXPECT_EQ(entries(), 2);
    f.commit();
  }
  EXPECT_EQ(read(path("out")), "new");
  EXPECT_EQ(entries(), 1);
  struct stat st;
  ASSERT_EQ(stat(path("out").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & 0044, 0u) << "not left at mkstemp's 0600";
}

TEST_F(OutputFileTest, NoCommitLeavesTheOldFileAndNoTemp) {
  write(path("out"), "old");
  {
    atomic_output_file f(path("out"));
    f.stream() << "half";
    EXPECT_NE(f.temp_path().find("/.out.tmp"), std::string::npos);
  }
  EXPECT_EQ(read(path("out")), "old");
  EXPECT_EQ(entries(), 1);
}

TEST_F(OutputFileTest, SymlinkKeepsTheLinkAndReplacesTheTarget) {
  write(path("target"), "old");
  ASSERT_EQ(symlink("target", path("link").c_str()), 0);
  atomic_output_file f(path("link"));
  f.stream() << "new";
  f.commit();
  struct stat st;
  ASSERT_EQ(lstat(path("link").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(read(path("target")), "new");
}

TEST_F(OutputFileTest, NonRegularOutputsAreWrittenInPlace) {
  atomic_output_file f("/dev/null");
  EXPECT_EQ(f.temp_path(), "");
  f.stream() << "x";
  f.commit();
  struct stat st;
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(OutputFileTest, UnwritablePlacesAreOneLineErrors) {
  try {
    atomic_output_file f(dir_, "--svg");
    FAIL() << "a directory was accepted";
  } catch (const output_error& e) {
    EXPECT_EQ(std::string(e.what()), "--svg: cannot write '" + dir_ + "': Is a directory");
  }
  try {
    atomic_output_file f(path("no/such/dir/x"), "--svg");
    FAIL() << "a missing directory was accepted";
  } catch (const output_error& e) {
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos);
  }
}

}  // namespace
}  // namespace clpool::common
