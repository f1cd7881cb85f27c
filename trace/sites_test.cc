// Version 2 (FORMAT.md "Sites"): frames, stacks and stack ids, text and binary, and every way a
// site line or record can be wrong.
#include "trace/sites.h"

#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace clpool::trace {
namespace {

const std::string v2 = "clpool-trace 2\n";

TEST(Sites, EscapeRoundTripsBlanksPercentHashAndEmpty) {
  for (const std::string& s :
       std::vector<std::string>{"", "plain", "a b\tc", "100%", "#x", "operator new(unsigned long)",
                                std::string("nul\0in", 6), "\xc3\xa9t\xc3\xa9"}) {
    const std::string e = escape_field(s);
    EXPECT_EQ(e.find_first_of(" \t\n#"), std::string::npos) << e;
    std::string back;
    ASSERT_TRUE(unescape_field(e, back)) << e;
    EXPECT_EQ(back, s);
  }
  std::string out;
  EXPECT_FALSE(unescape_field("bad%2", out));
  EXPECT_FALSE(unescape_field("bad%zz", out));
  EXPECT_FALSE(unescape_field("%", out) && !out.empty());
}

TEST(Sites, TextTraceWithSitesReads) {
  read_result r = read_all_from_string(v2 +
                                       "frame 1 py 10 app.py main\n"
                                       "stack 1 0 1\n"
                                       "frame 2 py 42 /src/my%20app/cache.py Cache.grow\n"
                                       "stack 2 1 2\n"
                                       "0 1 0 0 alloc 1 4096 buffer 0x1 2\n"
                                       "1 2 0 0 alloc 2 4096 buffer 0x1\n"
                                       "2 3 0 0 alloc_failed 0 8192 buffer 0x1 1\n"
                                       "stack 3 2 9\n"
                                       "frame 9 native 0 /usr/lib/libfoo.so 0x1234\n");
  ASSERT_FALSE(r.error) << r.error->what();
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[0].stack, 2u);
  EXPECT_EQ(r.events[1].stack, 0u);
  EXPECT_EQ(r.events[2].stack, 1u);
  EXPECT_EQ(r.sites.frames_of(2), (std::vector<std::uint64_t>{2, 1}));
  EXPECT_EQ(r.sites.frames_of(3), (std::vector<std::uint64_t>{9, 2, 1}));
  ASSERT_NE(r.sites.find_frame(2), nullptr);
  EXPECT_EQ(r.sites.find_frame(2)->file, "/src/my app/cache.py");
  EXPECT_EQ(r.sites.describe_frame(2), "Cache.grow (/src/my app/cache.py:42)");
  EXPECT_EQ(r.sites.find_frame(9)->lang, frame_lang::native);
  EXPECT_EQ(r.sites.describe_frame(77), "? (frame 77 not defined)");
}

TEST(Sites, Version1StillReadsAndRefusesSites) {
  read_result ok = read_all_from_string("clpool-trace 1\n0 1 0 0 alloc 1 10 buffer 0\n");
  ASSERT_FALSE(ok.error);
  EXPECT_EQ(ok.events[0].stack, 0u);
  EXPECT_TRUE(ok.sites.empty());
  read_result ten = read_all_from_string("clpool-trace 1\n0 1 0 0 alloc 1 10 buffer 0 1\n");
  ASSERT_TRUE(ten.error);
  EXPECT_NE(std::string(ten.error->what()).find("too many fields"), std::string::npos);
  read_result frame = read_all_from_string("clpool-trace 1\nframe 1 py 1 a b\n");
  ASSERT_TRUE(frame.error);
}

struct bad_case {
  std::string body;
  std::uint64_t line;
  std::string fragment;
  std::uint64_t valid_before;
};

TEST(Sites, EachBadSiteLineIsAClearErrorAndKeepsEarlierEvents) {
  const bad_case cases[] = {
      {"0 1 0 0 alloc 1 10 buffer 0 5\n", 2, "stack 5 is not defined before this event", 0},
      {"stack 1 0 1\n0 1 0 0 free_held 0 0 buffer 0 1\n", 3, "only alloc, alloc_failed and use", 0},
      {"stack 1 2 1\n", 2, "parent stack 2, which is not defined", 0},
      {"stack 1 0 1\nstack 1 0 1\n", 3, "stack 1 is defined twice", 0},
      {"frame 1 py 1 a b\nframe 1 py 1 a b\n", 3, "frame 1 is defined twice", 0},
      {"stack 0 0 1\n", 2, "stack id 0 is reserved", 0},
      {"frame 0 py 1 a b\n", 2, "frame id 0 is reserved", 0},
      {"stack 1 0 0\n", 2, "names frame 0", 0},
      {"stack 1 0\n", 2, "a stack line has 4 fields", 0},
      {"frame 1 py 1 a\n", 2, "a frame line has 6 fields", 0},
      {"frame 1 rust 1 a b\n", 2, "LANG must be py or native", 0},
      {"frame 1 py x a b\n", 2, "ID and LINE must be decimal", 0},
      {"frame 1 py 1 a%2 b\n", 2,
       "frame line: FILE: bad %-escape '%2' at byte 1 (% takes two hex digits)", 0},
      {"frame 1 py 1 a b%zz\n", 2, "frame line: FUNCTION: bad %-escape '%zz' at byte 1", 0},
      {"frame 1 py 1 a " + std::string(601, 'x') + "\n", 2,
       "frame line: FUNCTION: longer than 600 bytes (601)", 0},
      {"frame 1 py 1 " + std::string(300, 'x') + std::string(100, '%') + " b\n", 2,
       "frame line: FILE: bad %-escape '%%%' at byte 300", 0},
      {"stack -1 0 1\n", 2, "must be decimal numbers", 0},
      {"0 1 0 0 alloc 1 10 buffer 0\nsideways 1\n", 3, "unknown site line", 1},
      {"0 1 0 0 alloc 1 10 buffer 0 x\n", 2, "field stack", 0},
  };
  for (const bad_case& c : cases) {
    read_result r = read_all_from_string(v2 + c.body, "t.trace");
    ASSERT_TRUE(r.error) << c.body;
    EXPECT_EQ(r.error->line(), c.line) << c.body << r.error->what();
    EXPECT_NE(std::string(r.error->what()).find(c.fragment), std::string::npos)
        << c.body << " -> " << r.error->what();
    EXPECT_EQ(r.events.size(), c.valid_before) << c.body;
  }
}

std::string write_sample(trace_encoding encoding) {
  std::ostringstream out;
  {
    trace_writer w(out, encoding, sites_format_version);
    w.comment("source", "test");
    w.write_frame(1, frame_info{frame_lang::python, 7, "my app.py", "main"});
    w.write_stack(1, 0, 1);
    w.write_stack(2, 1, 2);
    w.write(trace_event{.seq = 0, .time_ns = 5, .id = 1, .size = 100, .stack = 2});
    w.write(
        trace_event{.seq = 1, .time_ns = 6, .action = trace_action::free, .id = 1, .size = 100});
    w.write(trace_event{
        .seq = 2, .time_ns = 7, .action = trace_action::alloc_failed, .size = 1 << 30, .stack = 1});
    w.write_frame(2, frame_info{frame_lang::native, 0, "/usr/lib/libx.so", "grow_cache(int)"});
    w.flush();
  }
  return out.str();
}

TEST(Sites, WriterRoundTripsTextAndBinary) {
  for (const trace_encoding enc : {trace_encoding::text, trace_encoding::binary}) {
    read_result r = read_all_from_string(write_sample(enc));
    ASSERT_FALSE(r.error) << r.error->what();
    ASSERT_EQ(r.events.size(), 3u);
    EXPECT_EQ(r.events[0].stack, 2u);
    EXPECT_EQ(r.events[1].stack, 0u);
    EXPECT_EQ(r.events[2].stack, 1u);
    EXPECT_EQ(r.events[2].size, 1u << 30);
    EXPECT_EQ(r.sites.describe_frame(2), "grow_cache(int) (/usr/lib/libx.so)");
    EXPECT_EQ(r.sites.describe_frame(1), "main (my app.py:7)");
    EXPECT_EQ(r.sites.frames_of(2), (std::vector<std::uint64_t>{2, 1}));
  }
  EXPECT_EQ(write_sample(trace_encoding::text).rfind("clpool-trace 2\n", 0), 0u);
}

TEST(Sites, IdsUpTo2To64Minus1ReadInText) {
  // Found by trace_parsers_fuzzer: a binary trace's 20-digit ids, written back as text.
  read_result r = read_all_from_string(v2 +
                                       "stack 18446744073709551615 0 18446744073709551614\n"
                                       "0 1 0 0 alloc 1 1 buffer 0 18446744073709551615\n");
  ASSERT_FALSE(r.error) << r.error->what();
  EXPECT_EQ(r.events[0].stack, 18446744073709551615u);
  read_result over = read_all_from_string(v2 + "stack 18446744073709551616 0 1\n");
  ASSERT_TRUE(over.error);
}

TEST(Sites, WriterRefusesStacksInVersion1) {
  std::ostringstream out;
  trace_writer w(out);
  EXPECT_THROW(w.write_frame(1, frame_info{}), std::logic_error);
  EXPECT_THROW(w.write(trace_event{.seq = 0, .stack = 1}), std::invalid_argument);
  trace_writer w2(out, trace_encoding::text, sites_format_version);
  EXPECT_THROW(w2.write(trace_event{.seq = 0, .action = trace_action::free, .stack = 1}),
               std::invalid_argument);
}

TEST(Sites, LongNamesAreCutToFitALine) {
  std::ostringstream out;
  {
    trace_writer w(out, trace_encoding::text, sites_format_version);
    w.write_frame(
        1, frame_info{frame_lang::python, 1, std::string(5000, ' '), std::string(5000, 'f')});
  }
  read_result r = read_all_from_string(out.str());
  ASSERT_FALSE(r.error) << r.error->what();
  ASSERT_NE(r.sites.find_frame(1), nullptr);
  EXPECT_EQ(r.sites.find_frame(1)->file, std::string(max_frame_text, ' '));  // every byte escaped
  EXPECT_LE(r.sites.find_frame(1)->function.size(), max_frame_text);
}

TEST(Sites, BinaryCorruptSiteRecordsAreErrors) {
  std::string good = write_sample(trace_encoding::binary);
  // Cut the trace inside the first frame record (header 16, metadata 1+1+6+1+4 = 13, tag, ...).
  const std::size_t frame_at = good.find('\x05', 16);
  ASSERT_NE(frame_at, std::string::npos);
  read_result cut = read_all_from_string(good.substr(0, frame_at + 4));
  ASSERT_TRUE(cut.error);
  EXPECT_NE(std::string(cut.error->what()).find("frame record"), std::string::npos)
      << cut.error->what();
  // A version-1 binary trace refuses a stack bit and site tags.
  std::string v1 = good;
  v1[8] = 1;
  read_result old = read_all_from_string(v1);
  ASSERT_TRUE(old.error);
  EXPECT_NE(std::string(old.error->what()).find("bad record tag"), std::string::npos)
      << old.error->what();
}

}  // namespace
}  // namespace clpool::trace
