#include "trace/rmm_import.h"

#include <gtest/gtest.h>

namespace clpool::trace {
namespace {

const std::string header = "Thread,Time,Action,Pointer,Size,Stream\n";

std::vector<trace_event> read_csv(const std::string& text) {
  rmm_csv_reader r = rmm_csv_reader::from_string(text, "log.csv");
  std::vector<trace_event> events;
  trace_event e;
  while (r.next(e)) events.push_back(e);
  return events;
}

TEST(RmmImport, MapsRowsToEvents) {
  const auto events =
      read_csv(header +
               "140573312345856,1634567890.123456,allocate,0x7f8a40000000,1024,0x7f8a38001020\n"
               "140573303953152,1634567890.234567,allocate,0x7f8a40000400,2048,0x0\n"
               "140573312345856,1634567890.345678,free,0x7f8a40000000,1024,0x7f8a38001020\n"
               "140573312345856,1634567890.4,allocate failure,0x0,4096,0x0\n"
               "140573312345856,1634567890.5,deallocate,0x7f8a40000400,2048,0x0\n");
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0], (trace_event{0, 0, 0, 1, trace_action::alloc, 0x7f8a40000000, 1024,
                                    trace_kind::buffer, 0}));
  EXPECT_EQ(events[1].thread, 1u);
  EXPECT_EQ(events[1].queue, 0u) << "stream 0 is queue 0";
  EXPECT_EQ(events[1].time_ns, 111111000u);
  EXPECT_EQ(events[2].action, trace_action::free);
  EXPECT_EQ(events[2].id, 0x7f8a40000000u);
  EXPECT_EQ(events[3].action, trace_action::alloc_failed);
  EXPECT_EQ(events[3].size, 4096u);
  EXPECT_EQ(events[4].action, trace_action::free);
  EXPECT_EQ(events[4].seq, 4u);
}

TEST(RmmImport, ClockAndDateTimes) {
  const auto events = read_csv(header +
                               "1,16:43:03:393917,allocate,0x10,1,0\n"
                               "1,16:43:04.5,allocate,0x20,1,0\n");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].time_ns, 1106083000u);
  const auto dated = read_csv(header +
                              "1,2024-01-15 10:30:45.123,allocate,0x10,1,0\n"
                              "1,2024-01-15 10:30:46.123,free,0x10,1,0\n");
  EXPECT_EQ(dated[1].time_ns, 1000000000u);
}

void expect_error(const std::string& text, std::uint64_t line, const std::string& fragment,
                  std::uint64_t valid = 0) {
  try {
    rmm_csv_reader r = rmm_csv_reader::from_string(text, "log.csv");
    trace_event e;
    std::uint64_t n = 0;
    while (r.next(e)) ++n;
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const trace_error& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("log.csv:", 0), 0u) << e.what();
    EXPECT_EQ(e.events_read(), valid) << e.what();
  }
}

TEST(RmmImport, BadCsv) {
  expect_error("", 1, "empty");
  expect_error("a,b,c\n", 1, "not an RMM log");
  expect_error("clpool-trace 1\n", 1, "not an RMM log");
  expect_error("\xEF\xBB\xBF" + header, 1,
               "starts with a UTF-8 byte-order mark (bytes EF BB BF) before its header");
  expect_error(std::string(5000, '\0'), 1, "longer than 4096 bytes");
  expect_error(header + "1,0,allocate,0x10,1\n", 2, "5 fields");
  expect_error(header + "1,0,allocate,0x10,1,0,7\n", 2, "7 fields");
  expect_error(header + "x,0,allocate,0x10,1,0\n", 2, "Thread 'x'");
  expect_error(header + "1,yesterday,allocate,0x10,1,0\n", 2, "Time 'yesterday'");
  expect_error(header + "1,25:00:00.0,allocate,0x10,1,0\n", 2, "Time");
  expect_error(header + "1,0,reallocate,0x10,1,0\n", 2, "Action 'reallocate' is unknown");
  expect_error(header + "1,0,allocate,0xZZ,1,0\n", 2, "Pointer '0xZZ'");
  expect_error(header + "1,0,allocate,0x10,-1,0\n", 2, "Size '-1' is negative");
  expect_error(header + "1,0,allocate,0x10,1e3,0\n", 2, "Size '1e3'");
  expect_error(header + "1,0,allocate,0x10,9223372036854775807,0\n", 2, "above 2^62");
  expect_error(header + "1,0,allocate,0x10,1,stream\n", 2, "Stream 'stream'");
  expect_error(header + "1,0,allocate,0x10,1,0\n1,0,free,0x20,1,0\n", 3,
               "free of pointer '0x20', which is not live", 1);
  expect_error(header + "1,0,allocate,0x10,1,0\n1,0,allocate,0x10,1,0\n", 3,
               "already live (allocated at line 2", 1);
  expect_error(header + "1,0,allocate,0x10,1,0\n1,0,free,0x1", 3, "truncated", 1);
}

// A huge row is refused as soon as it passes the limit, not read whole into memory (a 1 GB row
// once made the reader grow to 2 GB).
TEST(RmmImport, AnOverlongRowIsRefusedAtOnce) {
  expect_error(header + std::string(max_line_bytes + 1, '1') + "\n", 2,
               "row is longer than 4096 bytes");
  expect_error(std::string(1 << 20, 'x'), 1, "row is longer than 4096 bytes");
  expect_error(header + std::string(max_line_bytes, '1') + "\n", 2,
               "1 fields: expected 6");  // at the limit: read
}

TEST(RmmImport, ShippedExampleReads) {
  rmm_csv_reader r("tools/replay/examples/rmm_log.csv");
  trace_event e;
  std::uint64_t n = 0, failed = 0;
  while (r.next(e)) {
    ++n;
    failed += e.action == trace_action::alloc_failed;
  }
  EXPECT_EQ(n, 41u);
  EXPECT_EQ(failed, 1u);
}

TEST(RmmImport, MissingFile) { EXPECT_THROW(rmm_csv_reader("no/such/file.csv"), trace_error); }

}  // namespace
}  // namespace clpool::trace

namespace clpool::trace {
namespace {

std::string csv_error(const std::string& text) {
  try {
    read_csv(text);
  } catch (const trace_error& e) {
    return e.what();
  }
  return "";
}

TEST(RmmImport, ZeroByteNullAllocationsMayOverlap) {
  const auto events = read_csv(header +
                               "1,0,allocate,(nil),0,0\n"
                               "1,0,allocate,(nil),0,0\n"
                               "1,0,allocate,0x10,8,0\n"
                               "1,0,free,(nil),0,0\n"
                               "1,0,free,0x10,8,0\n"
                               "1,0,free,(nil),0,0\n");
  ASSERT_EQ(events.size(), 6u);
  EXPECT_NE(events[0].id, events[1].id);
  EXPECT_EQ(events[3].id, events[1].id) << "freed last-in first-out";
  EXPECT_EQ(events[5].id, events[0].id);
  // A third free has nothing to free; a null allocation with bytes is still a single pointer.
  EXPECT_NE(csv_error(header + "1,0,allocate,(nil),0,0\n1,0,free,(nil),0,0\n1,0,free,(nil),0,0\n")
                .find("log.csv:4: free of pointer '(nil)', which is not live"),
            std::string::npos);
  EXPECT_NE(
      csv_error(header + "1,0,allocate,(nil),4,0\n1,0,allocate,(nil),4,0\n").find("already live"),
      std::string::npos);
}

TEST(RmmImport, ImpossibleDatesAreRefused) {
  for (const char* d : {"2024-13-45", "2024-00-10", "2024-01-00", "2023-02-29", "2024-04-31"}) {
    const std::string e = csv_error(header + "1," + d + " 10:00:00.000,allocate,0x10,1,0\n");
    EXPECT_NE(e.find("log.csv:2: Time '"), std::string::npos) << d << ": " << e;
  }
  EXPECT_EQ(read_csv(header + "1,2024-02-29 10:00:00.000,allocate,0x10,1,0\n").size(), 1u);
}

TEST(RmmImport, CrOnlyLineEndsAreNamed) {
  EXPECT_NE(
      csv_error("Thread,Time,Action,Pointer,Size,Stream\r1,0,allocate,0x10,1,0\r").find("bare CR"),
      std::string::npos);
  EXPECT_EQ(read_csv("Thread,Time,Action,Pointer,Size,Stream\r\n1,0,allocate,0x10,1,0\r\n").size(),
            1u);
}

TEST(RmmImport, DirectoryIsNamedAsSuch) {
  try {
    rmm_csv_reader r("/");
    FAIL() << "a directory opened";
  } catch (const trace_error& e) {
    EXPECT_NE(std::string(e.what()).find("Is a directory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace clpool::trace
