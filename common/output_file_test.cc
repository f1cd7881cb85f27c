#include "common/output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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
    while (dirent* e = readdir(d))
      n += std::string(e->d_name) != "." && std::string(e->d_name) != "..";
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

std::string overlap(const io_files& files) {
  try {
    refuse_overlaps(files);
  } catch (const output_error& e) {
    return e.what();
  }
  return "";
}

// The one rule: every declared output against every declared input, by every spelling, and
// relative paths too (the test's working directory is made the files' directory).
TEST_F(OutputFileTest, AnyOutputOnAnyInputIsRefused) {
  write(path("t.trace"), "trace");
  write(path("keep.profile"), "profile");
  write(path("m.so"), "library");
  ASSERT_EQ(link(path("m.so").c_str(), path("m_hard.so").c_str()), 0);
  ASSERT_EQ(symlink(path("keep.profile").c_str(), path("p_link").c_str()), 0);
  char old_cwd[4096];
  ASSERT_NE(getcwd(old_cwd, sizeof old_cwd), nullptr);
  ASSERT_EQ(chdir(dir_.c_str()), 0);
  const std::vector<named_input> inputs = {{"trace", path("t.trace")},
                                           {"--profile", "keep.profile"},
                                           {"--mockcl-so", "./m.so"},
                                           {"--rmm-csv", ""}};
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"keep.profile", "--profile"}, {path("p_link"), "--profile"}, {"./keep.profile", "--profile"},
      {"m.so", "--mockcl-so"},       {"m_hard.so", "--mockcl-so"},  {"sub/../t.trace", "trace"},
      {"t.trace", "trace"}};
  ASSERT_EQ(mkdir("sub", 0700), 0);
  for (const auto& [out, in_flag] : cases) {
    for (const char* out_flag : {"--svg", "--write-trace"}) {
      const std::string m =
          overlap({.inputs = inputs, .outputs = {{"--json-file", ""}, {out_flag, out}}});
      EXPECT_NE(m.find(std::string(out_flag) + ": '" + out + "' is the same file as the input"),
                std::string::npos)
          << m;
      EXPECT_NE(m.find("(" + in_flag + ")"), std::string::npos) << m;
    }
  }
  // Nothing was touched, and distinct outputs pass.
  EXPECT_EQ(read(path("keep.profile")), "profile");
  EXPECT_EQ(read(path("m.so")), "library");
  EXPECT_EQ(
      overlap({.inputs = inputs, .outputs = {{"--svg", "a.svg"}, {"--write-trace", "b.trace"}}}),
      "");
  ASSERT_EQ(chdir(old_cwd), 0);
}

TEST_F(OutputFileTest, TwoOutputsOnOneFileAreRefusedBeforeEitherExists) {
  char old_cwd[4096];
  ASSERT_NE(getcwd(old_cwd, sizeof old_cwd), nullptr);
  ASSERT_EQ(chdir(dir_.c_str()), 0);
  const std::string m =
      overlap({.inputs = {}, .outputs = {{"--svg", "x.out"}, {"--write-trace", "./x.out"}}});
  EXPECT_EQ(m, "--write-trace: './x.out' is also the --svg output; give them different files");
  EXPECT_NE(
      overlap({.inputs = {}, .outputs = {{"--svg", path("x.out")}, {"--write-trace", "x.out"}}}),
      "");
  EXPECT_EQ(overlap({.inputs = {}, .outputs = {{"--svg", "-"}, {"--write-trace", "-"}}}),
            "--write-trace: standard output is also the --svg output; give them different files");
  EXPECT_EQ(entries(), 0);
  ASSERT_EQ(chdir(old_cwd), 0);
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

// A dangling link given as an output was replaced by a regular file: now its target is written.
TEST_F(OutputFileTest, ADanglingSymlinkKeepsTheLinkAndCreatesTheTarget) {
  ASSERT_EQ(mkdir(path("o").c_str(), 0700), 0);
  ASSERT_EQ(symlink("x", path("o/y").c_str()), 0);
  atomic_output_file f(path("o/y"), "--write-trace");
  f.stream() << "new";
  f.commit();
  struct stat st;
  ASSERT_EQ(lstat(path("o/y").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(read(path("o/x")), "new");
}

// `--svg o/x --write-trace o/y` with o/y a link to x: both were written and the link replaced.
TEST_F(OutputFileTest, TwoOutputsThroughALinkToAFileNotYetWrittenAreRefused) {
  ASSERT_EQ(mkdir(path("o").c_str(), 0700), 0);
  ASSERT_EQ(symlink("x", path("o/y").c_str()), 0);
  ASSERT_EQ(symlink(path("o/y").c_str(), path("chain").c_str()), 0);
  for (const std::string& second : {path("o/y"), path("chain")}) {
    try {
      refuse_overlaps(
          {.inputs = {}, .outputs = {{"--svg", path("o/x")}, {"--write-trace", second}}});
      ADD_FAILURE() << second << " accepted";
    } catch (const output_error& e) {
      EXPECT_EQ(std::string(e.what()), "--write-trace: '" + second +
                                           "' is also the --svg output; give them different files");
    }
  }
  EXPECT_EQ(entries(), 2);  // o and chain: nothing written
}

TEST_F(OutputFileTest, ASymlinkLoopIsAnError) {
  ASSERT_EQ(symlink("b", path("a").c_str()), 0);
  ASSERT_EQ(symlink("a", path("b").c_str()), 0);
  try {
    atomic_output_file f(path("a"), "--svg");
    FAIL() << "a loop was accepted";
  } catch (const output_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "--svg: '" + path("a") + "': Too many levels of symbolic links");
  }
}

// `--svg /dev/full` and a full disk: the write's failure is the commit's error, never lost.
TEST_F(OutputFileTest, AFailedWriteIsAnErrorNamingTheOutput) {
  atomic_output_file f("/dev/full", "--svg");
  f.stream() << std::string(100000, 'x');
  try {
    f.commit();
    FAIL() << "/dev/full took the bytes";
  } catch (const output_error& e) {
    EXPECT_EQ(std::string(e.what()), "--svg: cannot write '/dev/full': No space left on device");
  }
  atomic_output_file small("/dev/full", "--json");
  small.stream() << "{}";
  EXPECT_THROW(small.commit(), output_error);
}

// output_rules: a harness's own files in its own folder (the pytest plugin's artifacts).
TEST_F(OutputFileTest, RefusedLinksAreNotFollowedAndTheirTargetsKept) {
  write(path("target"), "keep");
  ASSERT_EQ(symlink(path("target").c_str(), path("link").c_str()), 0);
  ASSERT_EQ(symlink(path("nowhere").c_str(), path("dangling").c_str()), 0);
  for (const char* name : {"link", "dangling"}) {
    try {
      atomic_output_file f(path(name), "artifact", {.refuse_links = true});
      FAIL() << name << " was accepted";
    } catch (const output_error& e) {
      EXPECT_EQ(std::string(e.what()),
                "artifact: refusing to write through a symbolic link at '" + path(name) + "'");
    }
  }
  EXPECT_EQ(read(path("target")), "keep");
  struct stat st;
  EXPECT_NE(::stat(path("nowhere").c_str(), &st), 0);
  atomic_output_file plain(path("plain"), "artifact", {.refuse_links = true, .regular_only = true});
  plain.stream() << "x";
  plain.commit();
  EXPECT_EQ(read(path("plain")), "x");
}

TEST_F(OutputFileTest, RegularOnlyRefusesFifosDevicesAndDirectories) {
  ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
  ASSERT_EQ(mkdir(path("dir").c_str(), 0700), 0);
  const output_rules rules{.refuse_links = true, .regular_only = true};
  EXPECT_THROW(atomic_output_file(path("fifo"), "a", rules), output_error);  // would block
  EXPECT_THROW(atomic_output_file("/dev/null", "a", rules), output_error);
  try {
    atomic_output_file f(path("dir"), "a", rules);
    FAIL();
  } catch (const output_error& e) {
    EXPECT_EQ(std::string(e.what()), "a: cannot write '" + path("dir") + "': Is a directory");
  }
}

TEST_F(OutputFileTest, MakeOutputDirectory) {
  make_output_directory(path("d"), "artifacts");
  make_output_directory(path("d"), "artifacts");  // already there: taken
  struct stat st;
  ASSERT_EQ(::stat(path("d").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  write(path("f"), "x");
  ASSERT_EQ(symlink(path("d").c_str(), path("l").c_str()), 0);
  const auto message = [&](const std::string& name) {
    try {
      make_output_directory(path(name), "artifacts");
    } catch (const output_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("f"), "artifacts: cannot make the directory '" + path("f") +
                              "': something other than a directory is there");
  EXPECT_EQ(message("l"), "artifacts: cannot make the directory '" + path("l") +
                              "': a symbolic link is there (not followed)");
  EXPECT_EQ(message("missing/sub"), "artifacts: cannot make the directory '" + path("missing/sub") +
                                        "': No such file or directory");
  try {
    make_output_directory("", "artifacts");
    FAIL() << "an empty path was taken";
  } catch (const output_error& e) {
    EXPECT_EQ(std::string(e.what()), "artifacts: cannot make the directory '': the path is empty");
  }
}

// Standard output on a full device or closed: an error naming it, where the report was lost in
// silence with exit 0.
class StandardOutputTest : public OutputFileTest {
 protected:
  void SetUp() override {
    OutputFileTest::SetUp();
    std::fflush(stdout);
    saved_ = dup(STDOUT_FILENO);
    ASSERT_GE(saved_, 0);
  }
  void TearDown() override {
    std::fflush(stdout);
    std::clearerr(stdout);
    dup2(saved_, STDOUT_FILENO);
    close(saved_);
  }
  int saved_ = -1;
};

std::string error_writing(const std::string& text) {
  try {
    write_standard_output(text);
    check_standard_output();
  } catch (const output_error& e) {
    return e.what();
  }
  return "";
}

TEST_F(StandardOutputTest, AFullDeviceIsAnError) {
  // gtest reports on standard output too: the messages are checked once it is back.
  const int full = open("/dev/full", O_WRONLY);
  ASSERT_GE(full, 0);
  dup2(full, STDOUT_FILENO);
  close(full);
  const std::string direct = error_writing("report\n");
  std::printf("through stdio\n");
  std::string buffered;
  try {
    check_standard_output();
  } catch (const output_error& e) {
    buffered = e.what();
  }
  dup2(saved_, STDOUT_FILENO);
  EXPECT_EQ(direct, "standard output: cannot write: No space left on device");
  EXPECT_EQ(buffered, "standard output: cannot write: No space left on device");
}

TEST_F(StandardOutputTest, AClosedStandardOutputIsAnErrorNotTheNextFile) {
  close(STDOUT_FILENO);
  guard_standard_streams();
  // The first file opened does not become standard output.
  std::string message;
  {
    atomic_output_file f(path("out.svg"), "--svg");
    message = error_writing("report\n");
    f.stream() << "svg";
    f.commit();
  }
  // Nor does /dev/stdout lead to the placeholder, where the bytes would vanish.
  std::string through_dev;
  try {
    atomic_output_file f("/dev/stdout", "--svg");
    f.stream() << "svg";
    f.commit();
  } catch (const output_error& e) {
    through_dev = e.what();
  }
  dup2(saved_, STDOUT_FILENO);
  EXPECT_EQ(message, "standard output: cannot write: Bad file descriptor");
  EXPECT_EQ(read(path("out.svg")), "svg");
  EXPECT_EQ(through_dev, "--svg: cannot write '/dev/stdout': Bad file descriptor");
}

TEST_F(StandardOutputTest, AWritableStandardOutputTakesEverything) {
  const std::string file = path("stdout");
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  dup2(fd, STDOUT_FILENO);
  close(fd);
  std::printf("a");
  EXPECT_EQ(error_writing(std::string(200000, 'b')), "");
  EXPECT_EQ(read(file), "a" + std::string(200000, 'b'));
}

// `--json /dev/stdout >> log`: the output goes through standard output's own descriptor, so log
// keeps what it had and the new text is appended; renaming a new file over log would lose both.
TEST_F(StandardOutputTest, AnOutputNamingARedirectedStandardOutputAppendsToItsFile) {
  const std::string log = path("log");
  write(log, "precious\n");
  const int fd = open(log.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  dup2(fd, STDOUT_FILENO);
  close(fd);
  struct stat before, after;
  ASSERT_EQ(stat(log.c_str(), &before), 0);
  std::printf("text before\n");
  // gtest reports on standard output: nothing is checked until it is back.
  std::string temps, errors;
  const int linked = symlink("/dev/stdout", path("to_stdout").c_str());
  for (const std::string& name : {std::string("/dev/stdout"), std::string("/dev/fd/1"),
                                  std::string("/proc/self/fd/1"), path("to_stdout")}) {
    try {
      atomic_output_file f(name, "--json");
      temps += f.temp_path();
      f.stream() << (name == path("to_stdout") ? "through a link" : name) << "\n";
      f.commit();
    } catch (const output_error& e) {
      errors += e.what();
    }
  }
  const int stated = stat(log.c_str(), &after);
  std::fflush(stdout);
  dup2(saved_, STDOUT_FILENO);
  ASSERT_EQ(linked, 0);
  ASSERT_EQ(stated, 0);
  EXPECT_EQ(temps, "");
  EXPECT_EQ(errors, "");
  EXPECT_EQ(read(log),
            "precious\ntext before\n/dev/stdout\n/dev/fd/1\n/proc/self/fd/1\nthrough a link\n");
  EXPECT_EQ(before.st_ino, after.st_ino);  // the same file, not a new one under its name
}

}  // namespace
}  // namespace clpool::common
