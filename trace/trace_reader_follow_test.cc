// trace_reader's follow mode: a trace read while it is written, as the pytest plugin reads the
// layer's, with every way the written bytes can end (the file's end, a line cut short, the
// zero-filled rest of a memory map) and the comments delivered between their events.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "trace/trace_reader.h"

namespace clpool::trace {
namespace {

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

// A file written piece by piece at chosen offsets, as a recorder writes.
class growing_file {
 public:
  explicit growing_file(const std::string& name) : path_(temp_path(name)) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    EXPECT_GE(fd_, 0);
  }
  ~growing_file() { ::close(fd_); }
  void append(const std::string& s) { write_at(size_, s); }
  void write_at(std::size_t at, const std::string& s) {
    ASSERT_EQ(::pwrite(fd_, s.data(), s.size(), static_cast<off_t>(at)),
              static_cast<ssize_t>(s.size()));
    if (at + s.size() > size_) size_ = at + s.size();
  }
  // Zeros up to `bytes` from the written end: a memory map's unwritten rest.
  void zeros(std::size_t bytes) {
    ASSERT_EQ(::ftruncate(fd_, static_cast<off_t>(size_ + bytes)), 0);
  }
  std::size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::size_t size_ = 0;
};

std::vector<std::uint64_t> drain_seqs(trace_reader& r) {
  std::vector<std::uint64_t> out;
  trace_event e;
  while (r.next(e)) out.push_back(e.seq);
  return out;
}

using seqs = std::vector<std::uint64_t>;

TEST(TraceReaderFollow, ReadsOnWhereTheFileEnded) {
  growing_file f("follow_end.trace");
  f.append("clpool-trace 3\n0 0 0 0 alloc 1 10 buffer 0x0\n");
  trace_reader r(f.path(), {.follow = true});
  EXPECT_EQ(drain_seqs(r), seqs{0});
  EXPECT_EQ(drain_seqs(r), seqs{});  // nothing new: false again, not an error
  f.append("1 0 0 0 release 1 10 buffer 0x0\n2 0 0 0 free 1 10 buffer 0x0\n");
  EXPECT_EQ(drain_seqs(r), (seqs{1, 2}));
  EXPECT_EQ(r.line(), 4u);
}

TEST(TraceReaderFollow, ALineCutShortIsReadWhenItIsWhole) {
  growing_file f("follow_cut.trace");
  f.append("clpool-trace 3\n0 0 0 0 alloc 1 10 buffer 0x0\n1 0 0 0 al");
  trace_reader r(f.path(), {.follow = true});
  EXPECT_EQ(drain_seqs(r), seqs{0});
  f.append("loc 2 20 buffer 0x0");  // still no newline: the fast path must not take it either
  EXPECT_EQ(drain_seqs(r), seqs{});
  f.append("\n");
  trace_event e;
  ASSERT_TRUE(r.next(e));
  EXPECT_EQ(e.id, 2u);
  EXPECT_EQ(e.size, 20u);
  EXPECT_EQ(r.line(), 3u);
}

TEST(TraceReaderFollow, TheZeroFilledRestOfAMapIsNotYetWritten) {
  growing_file f("follow_zeros.trace");
  f.append("clpool-trace 3\n0 0 0 0 alloc 1 10 buffer 0x0\n");
  f.zeros(1 << 20);  // the mapped chunk's unwritten rest
  trace_reader r(f.path(), {.follow = true});
  EXPECT_EQ(drain_seqs(r), seqs{0});
  // Half a line copied into the map, then the rest.
  const std::size_t at = f.size();
  f.write_at(at, "1 0 0 0 free 1 1");
  EXPECT_EQ(drain_seqs(r), seqs{});
  f.write_at(at + 16, "0 buffer 0x0\n2 0 0 0 alloc 3 7 svm 0x0\n");
  EXPECT_EQ(drain_seqs(r), (seqs{1, 2}));
}

TEST(TraceReaderFollow, ManyLinesAcrossBufferRefills) {
  growing_file f("follow_big.trace");
  f.append("clpool-trace 3\n");
  trace_reader r(f.path(), {.follow = true});
  std::uint64_t next = 0, read = 0;
  for (int round = 0; round < 5; ++round) {
    std::string chunk;
    for (int i = 0; i < 30000; ++i, ++next) {
      chunk +=
          std::to_string(2 * next) + " 0 0 0 alloc " + std::to_string(next) + " 4096 buffer 0x0\n";
      chunk += std::to_string(2 * next + 1) + " 0 0 0 free " + std::to_string(next) +
               " 4096 buffer 0x0\n";
    }
    f.append(chunk.substr(0, chunk.size() - 7));  // the last line cut short
    trace_event e;
    while (r.next(e)) ASSERT_EQ(e.seq, read++);
    f.append(chunk.substr(chunk.size() - 7));
    while (r.next(e)) ASSERT_EQ(e.seq, read++);
  }
  EXPECT_EQ(read, 2 * next);
}

TEST(TraceReaderFollow, CommentsArriveBetweenTheirEvents) {
  growing_file f("follow_comments.trace");
  f.append("clpool-trace 3\n# source: layer\n0 0 0 0 alloc 1 10 buffer 0x0\n");
  std::vector<std::string> seen;
  std::uint64_t events = 0;
  reader_options o{.follow = true};
  o.on_comment = [&](std::string_view key, std::string_view value) {
    seen.push_back(std::to_string(events) + " " + std::string(key) + "=" + std::string(value));
  };
  trace_reader r(f.path(), o);
  trace_event e;
  while (r.next(e)) ++events;
  f.append(
      "# failure: first use of id 1 (10 bytes) by clEnqueueWriteBuffer: status -4\n"
      "# prose, not a key: value\n1 0 0 0 free 1 10 buffer 0x0\n");
  while (r.next(e)) ++events;
  EXPECT_EQ(seen,
            (std::vector<std::string>{
                "0 source=layer",
                "1 failure=first use of id 1 (10 bytes) by clEnqueueWriteBuffer: status -4"}));
  EXPECT_EQ(events, 2u);
}

TEST(TraceReaderFollow, AMalformedLineIsStillAnError) {
  growing_file f("follow_bad.trace");
  f.append("clpool-trace 3\n0 0 0 0 alloc 1 10 buffer 0x0\n1 0 0 0 explode 1 10 buffer 0x0\n");
  trace_reader r(f.path(), {.follow = true});
  trace_event e;
  ASSERT_TRUE(r.next(e));
  EXPECT_THROW(r.next(e), trace_error);
  EXPECT_THROW(r.next(e), trace_error);  // sticky, even after more is written
}

TEST(TraceReaderFollow, DataAfterZerosIsNotSkipped) {
  // A follower never skips zeros: a second writer's bytes beyond them wait until the gap is
  // written (the layer writes one region in order; a gap is never left behind).
  growing_file f("follow_gap.trace");
  f.append("clpool-trace 3\n");
  f.write_at(f.size() + 10, "0 0 0 0 alloc 1 10 buffer 0x0\n");
  trace_reader r(f.path(), {.follow = true});
  trace_event e;
  EXPECT_FALSE(r.next(e));
}

TEST(TraceReaderFollow, RefusesWhatCannotBeFollowed) {
  EXPECT_THROW(trace_reader("-", {.follow = true}), trace_error);
  const std::string fifo = temp_path("follow.fifo");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // O_NONBLOCK open for the writer side is not needed: fopen of a FIFO for reading blocks until a
  // writer comes, so open one first.
  const int w = ::open(fifo.c_str(), O_RDWR);
  try {
    trace_reader r(fifo, {.follow = true});
    ADD_FAILURE() << "a FIFO was followed";
  } catch (const trace_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  ::close(w);
  growing_file b("follow_binary.trace");
  b.append(std::string("CLPTRACE\x03\0\0\0\0\0\0\0", 16));
  try {
    trace_reader r(b.path(), {.follow = true});
    ADD_FAILURE() << "a binary trace was followed";
  } catch (const trace_error& e) {
    EXPECT_NE(std::string(e.what()).find("binary"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace clpool::trace
