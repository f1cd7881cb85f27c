// Small inputs are read with a bound: /dev/zero and a huge file are errors, never a hang.
#include "common/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace clpool::common {
namespace {

std::string temp(const std::string& name, const std::string& bytes) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(InputFile, AFileWithinTheBoundIsReadWhole) {
  std::string error;
  EXPECT_EQ(read_bounded(temp("a", "name = x\n"), 64, error), "name = x\n");
  EXPECT_EQ(read_bounded(temp("b", std::string(64, 'x')), 64, error), std::string(64, 'x'));
  EXPECT_EQ(read_bounded(temp("c", ""), 64, error), "");
}

TEST(InputFile, MoreThanTheBoundIsAnError) {
  std::string error;
  EXPECT_EQ(read_bounded(temp("d", std::string(65, 'x')), 64, error), std::nullopt);
  EXPECT_EQ(error, "larger than 64 B");
  EXPECT_EQ(read_bounded("/dev/zero", 64 * 1024, error), std::nullopt);
  EXPECT_EQ(error, "larger than 64 KiB");
}

TEST(InputFile, WhatCannotBeReadIsNamed) {
  std::string error;
  EXPECT_EQ(read_bounded("/no/such/file", 64, error), std::nullopt);
  EXPECT_EQ(error, "No such file or directory");
  EXPECT_EQ(read_bounded(std::getenv("TEST_TMPDIR"), 64, error), std::nullopt);
  EXPECT_EQ(error, "is a directory");
}

TEST(InputFile, AFifoWithNoWriterReadsAsEmpty) {
  const std::string fifo = std::string(std::getenv("TEST_TMPDIR")) + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string error;
  EXPECT_EQ(read_bounded(fifo, 64, error), "");
}

TEST(InputFile, TheFirstLineReadsNoFurther) {
  std::string error;
  EXPECT_EQ(read_first_line(temp("e", "libpocl.so.2\nrest"), 64, error), "libpocl.so.2");
  EXPECT_EQ(read_first_line(temp("f", "no newline"), 64, error), "no newline");
  // A first line longer than the bound, and one that never ends.
  EXPECT_EQ(read_first_line(temp("g", std::string(100, 'x') + "\n"), 64, error), std::nullopt);
  EXPECT_EQ(error, "its first line is longer than 64 B");
  EXPECT_EQ(read_first_line("/dev/zero", 4096, error), std::nullopt);
  EXPECT_EQ(error, "its first line is longer than 4 KiB");
  // A long file whose first line is short is fine.
  EXPECT_EQ(read_first_line(temp("h", "short\n" + std::string(1 << 20, 'y')), 64, error), "short");
}

// What a tool that opens its input more than once refuses, without opening it (a FIFO with no
// writer would wait forever): a NUL in the path, a directory, a FIFO, a socket. A file, a device
// (judged by what it holds) and a path that does not open (its reader says why) pass.
TEST(InputFile, WhatCannotBeReadTwiceIsRefusedUnopened) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  const std::string fifo = dir + "/fifo2";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(reread_input_refusal(temp("i", "clpool-trace 1\n")), "");
  EXPECT_EQ(reread_input_refusal("/dev/zero"), "");
  EXPECT_EQ(reread_input_refusal("/no/such/file"), "");
  EXPECT_EQ(reread_input_refusal(temp("j", "x") + std::string(1, '\0') + "x"),
            "holds a NUL byte: no file is named so");
  EXPECT_EQ(reread_input_refusal(dir), "is a directory, not a trace");
  EXPECT_EQ(reread_input_refusal(fifo),
            "is a FIFO (a named pipe): it can be read only once, and the replay reads its trace "
            "more than once; "
            "give a file");
}

}  // namespace
}  // namespace clpool::common
