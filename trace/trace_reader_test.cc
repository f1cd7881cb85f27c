#include "trace/trace_reader.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace clpool::trace {
namespace {

const std::string header = "clpool-trace 1\n";

// Reads `body` (after the header) and returns the error, expecting one.
trace_error error_of(const std::string& text) {
  read_result r = read_all_from_string(text, "t.trace");
  if (!r.error) {
    ADD_FAILURE() << "expected an error for:\n" << text;
    return trace_error("", 0, "", 0);
  }
  return *r.error;
}

void expect_error(const std::string& text, std::uint64_t line, const std::string& fragment,
                  std::uint64_t valid_before) {
  const trace_error e = error_of(text);
  EXPECT_EQ(e.file(), "t.trace");
  EXPECT_EQ(e.line(), line) << e.what();
  EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
      << "message: " << e.what() << "\nexpected to contain: " << fragment;
  EXPECT_EQ(e.events_read(), valid_before) << e.what();
  EXPECT_EQ(std::string(e.what()).rfind("t.trace:" + std::to_string(line) + ": ", 0), 0u)
      << "what() starts with FILE:LINE: " << e.what();
}

TEST(TraceReader, ReadsEventsCommentsAndMetadata) {
  read_result r =
      read_all_from_string(header +
                           "# source: test\n"
                           "# a prose comment: ignored as metadata? no, key has blanks\n"
                           "\n"
                           "0 10 1 2 alloc 7 4096 svm 0x11\n"
                           "  \t\n"
                           "5\t20  1 0 free 7 4096 svm 17   \n"
                           "6 30 0 0 alloc_failed 0 1 host 0\n"
                           "7 31 0 0 free_held 0 0 buffer 0\n"
                           "8 32 0 0 stop_holding 0 0 buffer 0\n"
                           "9 33 0 0 alloc 7 0 sub 0\r\n");
  ASSERT_FALSE(r.error) << r.error->what();
  ASSERT_EQ(r.events.size(), 6u);
  EXPECT_EQ(r.events[0],
            (trace_event{0, 10, 1, 2, trace_action::alloc, 7, 4096, trace_kind::svm, 0x11}));
  EXPECT_EQ(r.events[1],
            (trace_event{5, 20, 1, 0, trace_action::free, 7, 4096, trace_kind::svm, 17}));
  EXPECT_EQ(r.events[2].action, trace_action::alloc_failed);
  EXPECT_EQ(r.events[2].kind, trace_kind::host);
  EXPECT_EQ(r.events[3].action, trace_action::free_held);
  EXPECT_EQ(r.events[4].action, trace_action::stop_holding);
  EXPECT_EQ(r.events[5].kind, trace_kind::sub);
  ASSERT_EQ(r.metadata.size(), 1u);
  EXPECT_EQ(r.metadata[0].first, "source");
  EXPECT_EQ(r.metadata[0].second, "test");
}

TEST(TraceReader, LineNumbersCountCommentsAndBlankLines) {
  trace_reader reader = trace_reader::from_string(header + "# c\n\n0 0 0 0 alloc 1 1 buffer 0\n");
  trace_event e;
  ASSERT_TRUE(reader.next(e));
  EXPECT_EQ(reader.line(), 4u);
  EXPECT_FALSE(reader.next(e));
  EXPECT_EQ(reader.events_read(), 1u);
}

TEST(TraceReader, HeaderOnlyIsAnEmptyTrace) {
  read_result r = read_all_from_string(header);
  EXPECT_FALSE(r.error);
  EXPECT_TRUE(r.events.empty());
}

TEST(TraceReaderErrors, EmptyFile) { expect_error("", 1, "empty: no header", 0); }

TEST(TraceReaderErrors, NotATrace) {
  expect_error("hello world\n0 0 0 0 alloc 1 1 buffer 0\n", 1, "not a clpool trace", 0);
  expect_error("Thread,Time,Action,Pointer,Size,Stream\n", 1, "not a clpool trace", 0);
}

TEST(TraceReaderErrors, UnknownVersion) {
  expect_error("clpool-trace 5\n", 1,
               "unknown trace version '5' (this reader knows versions 1, 2, 3 and 4)", 0);
  expect_error("clpool-trace 0\n", 1, "unknown trace version '0'", 0);
  expect_error("clpool-trace x\n", 1, "unknown trace version 'x'", 0);
  expect_error("clpool-trace\n", 1, "not a clpool trace", 0);
}

// Version 3 (FORMAT.md "Two moments of a free"): the program's release and its waits, beside the
// driver's free; sites allowed.
TEST(TraceReaderV3, ReleaseAndWait) {
  read_result r = read_all_from_string(
      "clpool-trace 3\n"
      "0 1 0 0 alloc 1 4096 buffer 0x1\n"
      "1 2 0 0 release 1 4096 buffer 0x1\n"
      "2 3 0 1 wait 0 0 buffer 0\n"
      "3 4 1 0 free 1 4096 buffer 0x1\n"
      "frame 1 py 3 a.py f\n"
      "stack 1 0 1\n"
      "4 5 0 0 alloc 1 8 svm 0 1\n",
      "t.trace");
  ASSERT_FALSE(r.error) << r.error->what();
  EXPECT_EQ(r.version, 3u);
  ASSERT_EQ(r.events.size(), 5u);
  EXPECT_EQ(r.events[1],
            (trace_event{1, 2, 0, 0, trace_action::release, 1, 4096, trace_kind::buffer, 1}));
  EXPECT_EQ(r.events[2].action, trace_action::wait);
  EXPECT_EQ(r.events[2].queue, 1u);
  EXPECT_EQ(r.events[4].stack, 1u);
}

TEST(TraceReaderV3, Errors) {
  const std::string v3 = "clpool-trace 3\n";
  // Only version 3 has them, on the fast path and the careful one.
  expect_error(header + "0 0 0 0 release 1 4096 buffer 0\n", 2,
               "action release needs version 3 (the header says version 1)", 0);
  expect_error(header + "0 0 0 0 wait 0 0 buffer 0 \n", 2, "action wait needs version 3", 0);
  expect_error("clpool-trace 2\n0 0 0 0 wait 0 0 buffer 0\n", 2,
               "action wait needs version 3 (the header says version 2)", 0);
  // A release names a live block, once.
  expect_error(v3 + "0 0 0 0 release 5 1 buffer 0\n", 2, "release of id 5, which is not live", 0);
  expect_error(v3 + "0 0 0 0 alloc 5 1 buffer 0\n1 0 0 0 release 5 1 buffer 0\n2 0 0 0 release 5 1 "
                    "buffer 0\n",
               4, "release of id 5, which was already released at line 3", 2);
  // Released is still live until its free.
  expect_error(
      v3 + "0 0 0 0 alloc 5 1 buffer 0\n1 0 0 0 release 5 1 buffer 0\n2 0 0 0 alloc 5 1 buffer 0\n",
      4, "alloc of id 5, which is already live (released at line 3 and not freed)", 2);
  expect_error(
      v3 + "0 0 0 0 alloc 5 1 buffer 0\n1 0 0 0 free 5 1 buffer 0\n2 0 0 0 release 5 1 buffer 0\n",
      4, "release of id 5, which is not live", 2);
  expect_error(v3 + "0 0 0 0 launch 5 1 buffer 0\n", 2,
               "unknown action 'launch' (expected alloc, alloc_failed, free, free_held, "
               "stop_holding, release or wait)",
               0);
}

TEST(TraceReaderV4, UsesAndTheirErrors) {
  const std::string v4 = "clpool-trace 4\n# first_uses: buffer\n";
  read_result r = read_all_from_string(
      v4 + "0 0 0 0 alloc 5 4096 buffer 0\n1 0 0 0 use 5 4096 buffer 0\n2 0 0 0 use 5 4096 "
           "buffer 0\n3 0 0 0 free 5 4096 buffer 0\n",
      "t.trace");
  ASSERT_FALSE(r.error) << r.error->what();
  ASSERT_EQ(r.events.size(), 4u);
  EXPECT_EQ(r.events[1].action, trace_action::use);
  EXPECT_EQ(r.version, 4u);
  // Only version 4 has it.
  expect_error("clpool-trace 3\n0 0 0 0 alloc 5 1 buffer 0\n1 0 0 0 use 5 1 buffer 0\n", 3,
               "action use needs version 4 (the header says version 3)", 1);
  // A use names a live block the program still holds.
  expect_error(v4 + "0 0 0 0 use 5 1 buffer 0\n", 3, "use of id 5, which is not live", 0);
  expect_error(v4 + "0 0 0 0 alloc 5 1 buffer 0\n1 0 0 0 free 5 1 buffer 0\n2 0 0 0 use 5 1 "
                    "buffer 0\n",
               5, "use of id 5, which is not live", 2);
  // A block the program released is live until its free: a sub-buffer it kept may use it.
  EXPECT_FALSE(read_all_from_string(v4 + "0 0 0 0 alloc 5 1 buffer 0\n1 0 0 0 release 5 1 buffer "
                                         "0\n2 0 0 0 use 5 1 buffer 0\n3 0 0 0 free 5 1 buffer 0\n",
                                    "t.trace")
                   .error);
  expect_error(v4 + "0 0 0 0 launch 5 1 buffer 0\n", 3,
               "unknown action 'launch' (expected alloc, alloc_failed, free, free_held, "
               "stop_holding, release, wait or use)",
               0);
}

// The layer's failure comment for a refused first use names its block; no other comment does.
TEST(TraceReaderV4, FirstUseFailureComments) {
  EXPECT_EQ(first_use_failure_id("first use of id 7 (1048576 bytes) by clEnqueueFillBuffer: "
                                 "status -4 from the layer"),
            7u);
  EXPECT_EQ(first_use_failure_id("first use of id 18446744073709551615 (1 bytes) by x"),
            ~std::uint64_t{0});
  EXPECT_FALSE(first_use_failure_id("seq 9 status -61 (CL_INVALID_BUFFER_SIZE) from the driver"));
  EXPECT_FALSE(first_use_failure_id("first use of id 7"));    // nothing after the id
  EXPECT_FALSE(first_use_failure_id("first use of id x7 "));  // no id
  EXPECT_FALSE(first_use_failure_id("first use of id 18446744073709551616 (1 bytes)"));
  EXPECT_FALSE(first_use_failure_id("first use of id 7:"));
}

// The recorder's failure comment after an alloc_failed names its seq and status; a size refusal
// is CL_INVALID_BUFFER_SIZE for a non-empty request.
TEST(TraceReaderV4, AllocFailureComments) {
  const std::string refusal =
      "seq 9 status -61 (CL_INVALID_BUFFER_SIZE) from the layer: above "
      "CL_DEVICE_MAX_MEM_ALLOC_SIZE, 8388608 bytes";
  const std::optional<alloc_failure> f = alloc_failure_of(refusal);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->seq, 9u);
  EXPECT_EQ(f->status, -61);
  trace_event failed{.seq = 9, .action = trace_action::alloc_failed, .size = 1};
  EXPECT_TRUE(is_size_refusal(failed, refusal));
  failed.size = 0;
  EXPECT_FALSE(is_size_refusal(failed, refusal));  // size 0 is a wrong request, not one too large
  failed.size = 1;
  failed.seq = 8;
  EXPECT_FALSE(is_size_refusal(failed, refusal));  // another event's comment
  failed.seq = 9;
  failed.action = trace_action::alloc;
  EXPECT_FALSE(is_size_refusal(failed, refusal));  // only an alloc_failed is refused
  const std::string oom_text =
      "seq 18446744073709551615 status -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE) from the driver";
  const std::optional<alloc_failure> oom = alloc_failure_of(oom_text);
  ASSERT_TRUE(oom);
  EXPECT_EQ(oom->seq, ~std::uint64_t{0});
  EXPECT_FALSE(is_size_refusal(
      {.seq = ~std::uint64_t{0}, .action = trace_action::alloc_failed, .size = 1}, oom_text));
  EXPECT_FALSE(
      alloc_failure_of("first use of id 7 (1048576 bytes) by clEnqueueFillBuffer: "
                       "status -4 from the layer"));
  EXPECT_FALSE(alloc_failure_of("seq 9 NULL from the driver's clSVMAlloc"));  // no status
  EXPECT_EQ(alloc_failure_of("seq 9 status -61")->status, -61);  // nothing after the status
  EXPECT_FALSE(alloc_failure_of("seq 9 status -61("));
  EXPECT_FALSE(alloc_failure_of("seq 9status -61 ("));
  EXPECT_FALSE(alloc_failure_of("seq 9"));
  EXPECT_FALSE(alloc_failure_of("seq x status -4 ("));          // no seq
  EXPECT_FALSE(alloc_failure_of("seq 9 status 2147483648 ("));  // not an int32
  EXPECT_FALSE(alloc_failure_of("seq -9 status -4 ("));
}

TEST(TraceReaderErrors, TruncatedLastLineKeepsEarlierEvents) {
  const std::string text = header + "0 0 0 0 alloc 1 4096 buffer 0\n1 0 0 0 alloc 2 40";
  expect_error(text, 3, "truncated", 1);
  read_result r = read_all_from_string(text, "t.trace");
  ASSERT_EQ(r.events.size(), 1u) << "nothing already read is lost";
  EXPECT_EQ(r.events[0].size, 4096u);
}

TEST(TraceReaderErrors, WrongFieldCount) {
  expect_error(header + "0 0 0 0 alloc 1 4096 buffer\n", 2, "only 8 fields", 0);
  expect_error(header + "0 0 0 0 alloc 1 4096 buffer 0 9\n", 2, "too many fields", 0);
}

TEST(TraceReaderErrors, Garbage) {
  expect_error(header + "0 0 0 0 alloc 1 4096 buffer 0\n\x01\x02garbage\xff\n", 3, "only 1 fields",
               1);
  expect_error(header + "zero 0 0 0 alloc 1 4096 buffer 0\n", 2,
               "field seq: 'zero' is not a decimal number", 0);
  expect_error(header + "0 0 0 0 alloc 1 12k buffer 0\n", 2, "field size: '12k'", 0);
  expect_error(header + "0 0 0 0 alloc 1 1 buffer 0xZZ\n", 2, "field flags", 0);
  expect_error(header + std::string(5000, 'x') + "\n", 2, "longer than 4096", 0);
}

TEST(TraceReaderErrors, NegativeAndAbsurdSizes) {
  expect_error(header + "0 0 0 0 alloc 1 -4096 buffer 0\n", 2, "field size: '-4096' is negative",
               0);
  expect_error(header + "0 0 0 0 alloc 1 4611686018427387905 buffer 0\n", 2, "above 2^62", 0);
  expect_error(header + "0 0 0 0 alloc 1 99999999999999999999 buffer 0\n", 2,
               "does not fit in 64 bits", 0);
  // Exactly 2^62 is the largest accepted size.
  EXPECT_FALSE(
      read_all_from_string(header + "0 0 0 0 alloc 1 4611686018427387904 buffer 0\n").error);
}

TEST(TraceReaderErrors, SeqMustIncrease) {
  expect_error(header + "5 0 0 0 alloc 1 1 buffer 0\n5 0 0 0 free 1 1 buffer 0\n", 3,
               "seq 5 does not follow 5", 1);
  expect_error(header + "5 0 0 0 alloc 1 1 buffer 0\n4 0 0 0 free 1 1 buffer 0\n", 3,
               "strictly increasing", 1);
}

TEST(TraceReaderErrors, AllocOfLiveId) {
  expect_error(header + "0 0 0 0 alloc 1 1 buffer 0\n1 0 0 0 alloc 1 1 buffer 0\n", 3,
               "alloc of id 1, which is already live (allocated at line 2", 1);
}

TEST(TraceReaderErrors, FreeOfUnknownId) {
  expect_error(header + "0 0 0 0 free 9 1 buffer 0\n", 2, "free of id 9, which is not live", 0);
  expect_error(
      header + "0 0 0 0 alloc 9 1 buffer 0\n1 0 0 0 free 9 1 buffer 0\n2 0 0 0 free 9 1 buffer 0\n",
      4, "free of id 9", 2);
}

TEST(TraceReaderErrors, IdsMayBeReusedAfterFree) {
  EXPECT_FALSE(read_all_from_string(header +
                                    "0 0 0 0 alloc 9 1 buffer 0\n1 0 0 0 free 9 1 buffer 0\n"
                                    "2 0 0 0 alloc 9 1 buffer 0\n")
                   .error);
}

TEST(TraceReaderErrors, LivenessCheckCanBeTurnedOff) {
  read_result r =
      read_all_from_string(header + "0 0 0 0 free 9 1 buffer 0\n", "t", {.check_liveness = false});
  EXPECT_FALSE(r.error);
  EXPECT_EQ(r.events.size(), 1u);
}

TEST(TraceReaderErrors, UnknownActionAndKind) {
  expect_error(header + "0 0 0 0 allocate 1 1 buffer 0\n", 2, "unknown action 'allocate'", 0);
  expect_error(header + "0 0 0 0 alloc 1 1 image 0\n", 2, "unknown kind 'image'", 0);
}

TEST(TraceReaderErrors, ErrorIsSticky) {
  trace_reader reader = trace_reader::from_string(
      header + "0 0 0 0 bogus 1 1 buffer 0\n0 0 0 0 alloc 1 1 buffer 0\n");
  trace_event e;
  EXPECT_THROW(reader.next(e), trace_error);
  EXPECT_THROW(reader.next(e), trace_error);
}

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

TEST(TraceReaderFile, MissingFileNamesThePath) {
  try {
    trace_reader reader(temp_path("does-not-exist.trace"));
    FAIL() << "expected trace_error";
  } catch (const trace_error& e) {
    EXPECT_EQ(e.line(), 0u);
    EXPECT_NE(std::string(e.what()).find("does-not-exist.trace: cannot open"), std::string::npos)
        << e.what();
  }
}

// A file several times the reader's 1 MiB buffer: lines straddle buffer refills.
TEST(TraceReaderFile, StreamsAcrossBufferBoundaries) {
  const std::string path = temp_path("big.trace");
  {
    std::ofstream out(path);
    out << header;
    for (int i = 0; i < 200000; ++i) {
      out << 2 * i << " " << i << " 0 0 alloc " << i << " " << i + 1 << " buffer 0\n";
      out << 2 * i + 1 << " " << i << " 0 0 free " << i << " " << i + 1 << " buffer 0\n";
    }
  }
  trace_reader reader(path);
  trace_event e;
  std::uint64_t n = 0;
  while (reader.next(e)) {
    ASSERT_EQ(e.seq, n);
    ASSERT_EQ(e.size, n / 2 + 1);
    ++n;
  }
  EXPECT_EQ(n, 400000u);
  EXPECT_EQ(reader.line(), 400001u);
  EXPECT_EQ(reader.bytes_consumed(), reader.total_bytes());
}

TEST(TraceReaderFile, TruncatedFileReportsLastLine) {
  const std::string path = temp_path("cut.trace");
  {
    std::ofstream out(path);
    out << header << "0 0 0 0 alloc 1 4096 buffer 0\n1 0 0 0 fr";
  }
  read_result r = read_all(path);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->line(), 3u);
  EXPECT_EQ(r.events.size(), 1u);
  EXPECT_NE(std::string(r.error->what()).find("cut.trace:3: truncated"), std::string::npos);
}

}  // namespace
}  // namespace clpool::trace

namespace clpool::trace {
namespace {

// Bare-CR line ends are named as such, not as a truncation; CRLF still reads; garbage with a CR
// is still garbage.
TEST(TraceReader, CrOnlyLineEndsAreNamed) {
  expect_error("clpool-trace 1\r0 0 0 0 alloc 1 10 buffer 0\r", 1, "bare CR", 0);
  std::string long_cr = "clpool-trace 1\r";
  for (int i = 0; i < 400; ++i)
    long_cr += std::to_string(i) + " 0 0 0 alloc " + std::to_string(i + 1) + " 10 buffer 0\r";
  expect_error(long_cr + "\n", 1, "bare CR", 0);
  expect_error(long_cr, 1, "bare CR", 0);
  read_result ok =
      read_all_from_string("clpool-trace 1\r\n0 0 0 0 alloc 1 10 buffer 0\r\n", "t.trace");
  EXPECT_FALSE(ok.error) << ok.error->what();
  EXPECT_EQ(ok.events.size(), 1u);
  const trace_error garbage = error_of(std::string("\x01\x02\r\x03garbage\n", 12));
  EXPECT_EQ(std::string(garbage.what()).find("bare CR"), std::string::npos) << garbage.what();
}

}  // namespace
}  // namespace clpool::trace

namespace clpool::trace {
namespace {

// FORMAT.md: a text trace may end in NUL bytes (the OpenCL layer's memory-mapped file after
// _exit or SIGKILL). Only a tail of zeros after the last complete line is ignored.
TEST(TraceReaderZeroTail, ZerosAfterTheLastLineAreTheEnd) {
  const std::string events =
      header + "0 0 0 0 alloc 1 4096 buffer 0\n1 0 0 0 free 1 4096 buffer 0\n";
  for (const std::size_t zeros : {std::size_t{1}, std::size_t{100}, std::size_t{5000}}) {
    read_result r = read_all_from_string(events + std::string(zeros, '\0'), "t.trace");
    EXPECT_FALSE(r.error) << zeros << ": " << r.error->what();
    EXPECT_EQ(r.events.size(), 2u) << zeros;
  }
}

// The reader says whether the trace ended so: a recorder that did not reach the program's exit.
TEST(TraceReaderZeroTail, TheReaderSaysTheTraceEndedInOne) {
  const std::string events = header + "0 0 0 0 alloc 1 4096 buffer 0\n";
  for (const bool tail : {false, true}) {
    trace_reader reader =
        trace_reader::from_string(events + std::string(tail ? 64 : 0, '\0'), "t.trace");
    trace_event e;
    EXPECT_TRUE(reader.next(e));
    EXPECT_FALSE(reader.ended_in_zero_tail()) << "not before its end";
    EXPECT_FALSE(reader.next(e));
    EXPECT_EQ(reader.ended_in_zero_tail(), tail);
  }
}

TEST(TraceReaderZeroTail, ALineCutOffBeforeTheZerosIsTruncated) {
  const std::string text =
      header + "0 0 0 0 alloc 1 4096 buffer 0\n1 0 0 0 fr" + std::string(64, '\0');
  expect_error(text, 3, "truncated: the last line '1 0 0 0 fr' has no newline", 1);
}

TEST(TraceReaderZeroTail, DataAfterZerosIsAnError) {
  const std::string zeros(10, '\0');
  // NULs then another line: not a tail.
  const trace_error e = error_of(header + "0 0 0 0 alloc 1 4096 buffer 0\n" + zeros + "junk\n");
  EXPECT_EQ(e.events_read(), 1u);
  // NULs then bytes without a newline, beyond a long run of zeros.
  const trace_error e2 =
      error_of(header + "0 0 0 0 alloc 1 4096 buffer 0\n" + std::string(6000, '\0') + "x");
  EXPECT_EQ(e2.events_read(), 1u);
}

// A tail longer than the reader's 1 MiB buffer, from a file (the layer grows its file by 1 MiB).
TEST(TraceReaderZeroTail, ALongTailInAFile) {
  const std::string path = temp_path("tail.trace");
  std::string body = header;
  for (int i = 0; i < 30000; ++i) {
    body += std::to_string(i) + " 0 0 0 alloc " + std::to_string(i + 1) + " 4096 buffer 0x1\n";
  }
  {
    std::ofstream out(path, std::ios::binary);
    out << body << std::string((std::size_t{3} << 20) - body.size() % (1 << 20), '\0');
  }
  read_result r = read_all(path);
  EXPECT_FALSE(r.error) << r.error->what();
  EXPECT_EQ(r.events.size(), 30000u);
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << "1";
  }
  r = read_all(path);
  ASSERT_TRUE(r.error);
  EXPECT_NE(std::string(r.error->what()).find("are followed by more data"), std::string::npos)
      << r.error->what();
  EXPECT_EQ(r.events.size(), 30000u);
}

// /dev/zero was read forever ("empty: no header" only at its end, never for a device): NULs
// where the header belongs are refused at byte 0, and a zero tail is bounded.
TEST(TraceReaderBounds, AFileOfZerosIsRefusedAtOnce) {
  const trace_error e = [] {
    try {
      trace_reader r("/dev/zero");
    } catch (const trace_error& e) {
      return e;
    }
    ADD_FAILURE() << "/dev/zero read as a trace";
    return trace_error("", 0, "", 0);
  }();
  EXPECT_EQ(std::string(e.what()),
            "/dev/zero:1: not a clpool trace: it starts with NUL bytes (byte 0), not 'clpool-trace "
            "1' (a file "
            "of zeros, or one never written?)");
  expect_error(std::string(100, '\0'), 1, "it starts with NUL bytes (byte 0)", 0);
}

TEST(TraceReaderBounds, AZeroTailLongerThanARecorderLeavesIsAnError) {
  const std::string path = temp_path("long_tail.trace");
  const std::string events = header + "0 0 0 0 alloc 1 4096 buffer 0\n";
  {
    std::ofstream out(path, std::ios::binary);
    out << events << std::string(max_zero_tail_bytes - 1, '\0');
  }
  read_result r = read_all(path);
  EXPECT_FALSE(r.error) << r.error->what();
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << std::string(std::size_t{2} << 20, '\0');
  }
  r = read_all(path);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->problem(), "more than 16 MiB of NUL bytes from byte " +
                                    std::to_string(events.size()) +
                                    ": not the unwritten tail of a killed recorder (FORMAT.md)");
  EXPECT_EQ(r.events.size(), 1u);
}

// A UTF-8 byte-order mark showed as '???clpool-trace 1'.
TEST(TraceReaderBounds, AByteOrderMarkIsNamed) {
  expect_error("\xEF\xBB\xBF" + header, 1,
               "starts with a UTF-8 byte-order mark (bytes EF BB BF) before its header", 0);
}

}  // namespace
}  // namespace clpool::trace
