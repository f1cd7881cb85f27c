#include "trace/trace_writer.h"

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "trace/trace_reader.h"

namespace clpool::trace {
namespace {

// Random valid events: every action and kind, extreme numbers, ids reused after free.
std::vector<trace_event> random_events(unsigned seed, int count) {
  std::mt19937_64 rng(seed);
  std::vector<trace_event> events;
  std::vector<std::uint64_t> live;
  std::uint64_t seq = rng() % 1000;
  for (int i = 0; i < count; ++i) {
    trace_event e;
    e.seq = seq;
    seq += 1 + rng() % 3;
    e.time_ns = rng();
    e.thread = rng() % 4;
    e.queue = rng() % 2 ? 0 : rng();
    e.kind = static_cast<trace_kind>(rng() % 4);
    e.flags = rng() % 2 ? 0 : rng();
    const int choice = static_cast<int>(rng() % 10);
    if (choice < 5 || live.empty()) {
      e.action = trace_action::alloc;
      e.id = rng() % 2 ? rng() % 64 : rng();
      bool clash = false;
      for (auto id : live) clash |= id == e.id;
      if (clash) continue;
      e.size = rng() % 3 == 0 ? max_event_size : rng() % (1 << 30);
      live.push_back(e.id);
    } else if (choice < 8) {
      e.action = trace_action::free;
      const std::size_t k = rng() % live.size();
      e.id = live[k];
      live.erase(live.begin() + static_cast<long>(k));
      e.size = rng() % 4096;
    } else if (choice == 8) {
      e.action = trace_action::alloc_failed;
      e.id = rng();
      e.size = rng() % max_event_size;
    } else {
      e.action = rng() % 2 ? trace_action::free_held : trace_action::stop_holding;
    }
    events.push_back(e);
  }
  return events;
}

TEST(TraceWriter, RoundTrip) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const std::vector<trace_event> events = random_events(seed, 20000);
    std::ostringstream out;
    {
      trace_writer writer(out);
      writer.comment("source", "round-trip test");
      for (const auto& e : events) writer.write(e);
      writer.flush();
      EXPECT_EQ(writer.events_written(), events.size());
    }
    read_result r = read_all_from_string(out.str(), "roundtrip");
    ASSERT_FALSE(r.error) << r.error->what();
    ASSERT_EQ(r.events.size(), events.size());
    for (std::size_t i = 0; i < events.size(); ++i)
      ASSERT_EQ(r.events[i], events[i]) << "event " << i;
    ASSERT_EQ(r.metadata.size(), 1u);
    EXPECT_EQ(r.metadata[0].second, "round-trip test");
  }
}

TEST(TraceWriter, EmptyTraceIsValid) {
  std::ostringstream out;
  { trace_writer writer(out); }
  EXPECT_EQ(out.str(), "clpool-trace 1\n");
}

TEST(TraceWriter, RefusesWhatTheReaderWouldRefuse) {
  std::ostringstream out;
  trace_writer writer(out);
  writer.write(trace_event{.seq = 3});
  EXPECT_THROW(writer.write(trace_event{.seq = 3}), std::invalid_argument);
  EXPECT_THROW(writer.write(trace_event{.seq = 4, .size = max_event_size + 1}),
               std::invalid_argument);
  EXPECT_THROW(writer.comment("two words", "x"), std::invalid_argument);
  EXPECT_THROW(writer.comment("k", "line\nbreak"), std::invalid_argument);
  writer.write(trace_event{.seq = 4});
  EXPECT_EQ(writer.events_written(), 2u);
}

TEST(TraceWriter, UnwritablePathThrows) {
  EXPECT_THROW(trace_writer("/nonexistent-dir/x.trace"), std::runtime_error);
}

}  // namespace
}  // namespace clpool::trace

namespace clpool::trace {
namespace {

// --write-trace /dev/full (a full disk): the write's reason reaches the caller, naming the flag.
TEST(TraceWriter, AFullDeviceIsAnErrorWithItsReason) {
  for (const trace_encoding enc : {trace_encoding::text, trace_encoding::binary}) {
    trace_writer w("/dev/full", enc, "--write-trace");
    trace_event e;
    e.action = trace_action::alloc;
    e.size = 4096;
    try {
      for (std::uint64_t i = 0; i < 200000; ++i) {
        e.seq = i;
        e.id = i + 1;
        w.write(e);
      }
      w.commit();
      FAIL() << "/dev/full took the trace";
    } catch (const std::exception& err) {
      EXPECT_EQ(std::string(err.what()),
                "--write-trace: cannot write '/dev/full': No space left on device");
    }
  }
}

// A binary trace's metadata records reach reader_options::on_comment as a text trace's comments
// do, in the same places between the events and beyond the first 256 that metadata() keeps.
TEST(TraceWriterBinary, CommentsReachOnCommentAsInText) {
  std::vector<std::string> seen[2];
  for (const trace_encoding enc : {trace_encoding::text, trace_encoding::binary}) {
    std::ostringstream out;
    {
      trace_writer writer(out, enc);
      writer.write({.seq = 0, .action = trace_action::alloc, .id = 1, .size = 10});
      for (int i = 0; i < 300; ++i) writer.comment("failure", "refusal " + std::to_string(i));
      writer.write({.seq = 1, .action = trace_action::free, .id = 1, .size = 10});
      writer.comment("source", "the end");
    }
    std::vector<std::string>& got = seen[enc == trace_encoding::binary];
    std::uint64_t events = 0;
    trace_reader r = trace_reader::from_string(
        out.str(), "comments", {.on_comment = [&](std::string_view key, std::string_view value) {
          got.push_back(std::to_string(events) + " " + std::string(key) + "=" + std::string(value));
        }});
    trace_event e;
    while (r.next(e)) ++events;
    EXPECT_EQ(events, 2u);
    EXPECT_EQ(r.metadata().size(), trace_reader::max_metadata_kept);
  }
  ASSERT_EQ(seen[1].size(), 301u);
  EXPECT_EQ(seen[1][0], "1 failure=refusal 0");  // after the alloc, before the free
  EXPECT_EQ(seen[1][299], "1 failure=refusal 299");
  EXPECT_EQ(seen[1][300], "2 source=the end");
  EXPECT_EQ(seen[0], seen[1]);
}

TEST(TraceWriterBinary, RoundTrip) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const std::vector<trace_event> events = random_events(seed, 20000);
    std::ostringstream out;
    {
      trace_writer writer(out, trace_encoding::binary);
      writer.comment("source", "binary round-trip test");
      for (const auto& e : events) writer.write(e);
    }
    const std::string bytes = out.str();
    read_result r = read_all_from_string(bytes, "roundtrip.bin");
    ASSERT_FALSE(r.error) << r.error->what();
    ASSERT_EQ(r.events.size(), events.size());
    for (std::size_t i = 0; i < events.size(); ++i)
      ASSERT_EQ(r.events[i], events[i]) << "event " << i;
    ASSERT_EQ(r.metadata.size(), 1u);
    EXPECT_EQ(r.metadata[0].second, "binary round-trip test");
  }
}

TEST(TraceWriterBinary, SmallerThanText) {
  const std::vector<trace_event> events = random_events(3, 5000);
  std::ostringstream text, binary;
  {
    trace_writer t(text);
    trace_writer b(binary, trace_encoding::binary);
    for (const auto& e : events) {
      t.write(e);
      b.write(e);
    }
  }
  EXPECT_LT(binary.str().size(), text.str().size());
}

std::string binary_of(const std::vector<trace_event>& events) {
  std::ostringstream out;
  {
    trace_writer writer(out, trace_encoding::binary);
    for (const auto& e : events) writer.write(e);
  }
  return out.str();
}

void expect_binary_error(const std::string& bytes, const std::string& fragment,
                         std::uint64_t valid) {
  read_result r = read_all_from_string(bytes, "t.bin");
  ASSERT_TRUE(r.error) << "no error";
  EXPECT_NE(std::string(r.error->what()).find(fragment), std::string::npos) << r.error->what();
  EXPECT_EQ(r.events.size(), valid) << r.error->what();
  EXPECT_EQ(std::string(r.error->what()).rfind("t.bin:", 0), 0u);
}

TEST(TraceReaderBinary, MalformedInput) {
  const std::vector<trace_event> two = {
      {.seq = 0, .action = trace_action::alloc, .id = 1, .size = 4096},
      {.seq = 1, .action = trace_action::free, .id = 1, .size = 4096}};
  const std::string good = binary_of(two);
  // Truncated in the middle of the last record: the first event survives.
  expect_binary_error(good.substr(0, good.size() - 1), "truncated", 1);
  // Unknown version and corrupt header.
  std::string v2 = good;
  v2[8] = 5;
  expect_binary_error(v2, "unknown trace version '5'", 0);
  expect_binary_error(good.substr(0, 12), "truncated binary header", 0);
  // A bad tag (action 5) and the high bit.
  std::string bad_tag = good;
  bad_tag[16] = 5;
  expect_binary_error(bad_tag, "bad record tag 5", 0);
  // A varint longer than 64 bits.
  std::string longnum = good.substr(0, 16);
  longnum += '\x00';
  longnum += std::string(11, '\xff');
  expect_binary_error(longnum, "longer than 64 bits", 0);
  // Liveness rules apply as in text: a free of an unknown id.
  expect_binary_error(binary_of({{.seq = 0, .action = trace_action::free, .id = 9}}),
                      "free of id 9", 0);
  // An absurd size.
  expect_binary_error(
      binary_of({{.seq = 0, .action = trace_action::alloc_failed, .size = max_event_size}})
              .substr(0, 16) +
          std::string("\x01\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 13),
      "above 2^62", 0);
}

// Version 3: release and wait round-trip in both encodings; their binary records always carry
// thread and queue, so a tag byte of exactly 5 or 6 stays a frame or stack record; an older
// writer refuses them, and an older binary trace holding action 5 or 6 is refused.
TEST(TraceWriterV3, ReleaseAndWaitRoundTrip) {
  const std::vector<trace_event> events = {
      {.seq = 0, .action = trace_action::alloc, .id = 1, .size = 4096},
      {.seq = 1, .action = trace_action::release, .id = 1, .size = 4096},
      {.seq = 2, .action = trace_action::wait},
      {.seq = 3, .action = trace_action::free, .id = 1, .size = 4096},
      {.seq = 4,
       .action = trace_action::alloc,
       .id = 2,
       .size = 8,
       .kind = trace_kind::svm,
       .stack = 1},
      {.seq = 5,
       .thread = 2,
       .queue = 3,
       .action = trace_action::release,
       .id = 2,
       .size = 8,
       .kind = trace_kind::svm}};
  for (const trace_encoding encoding : {trace_encoding::text, trace_encoding::binary}) {
    std::ostringstream out;
    {
      trace_writer writer(out, encoding, release_format_version);
      writer.write_frame(1,
                         {.lang = frame_lang::python, .line = 3, .file = "a.py", .function = "f"});
      writer.write_stack(1, 0, 1);
      for (const auto& e : events) writer.write(e);
    }
    read_result r = read_all_from_string(out.str(), "v3");
    ASSERT_FALSE(r.error) << r.error->what();
    EXPECT_EQ(r.version, 3u);
    ASSERT_EQ(r.events.size(), events.size());
    for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(r.events[i], events[i]) << i;
  }
  std::ostringstream old;
  trace_writer v2(old, trace_encoding::binary, sites_format_version);
  EXPECT_THROW(v2.write({.seq = 0, .action = trace_action::wait}), std::invalid_argument);
  // A version-1 binary trace with an action-5 record (thread and queue set) is corrupt.
  std::string bytes = binary_of({{.seq = 0, .thread = 1, .action = trace_action::alloc, .id = 1}});
  bytes[16] = static_cast<char>(5 | 0x40);
  expect_binary_error(bytes, "bad record tag 69", 0);
}

// Version 4 (FORMAT.md "First uses"): use, with the block's stack, in both encodings; refused by
// a version-3 writer and, as action 7, by a version-3 binary reader.
TEST(TraceWriterV4, UseRoundTrips) {
  const std::vector<trace_event> events = {
      {.seq = 0, .action = trace_action::alloc, .id = 1, .size = 4096, .stack = 1},
      {.seq = 1, .action = trace_action::use, .id = 1, .size = 4096, .stack = 1},
      {.seq = 2, .action = trace_action::use, .id = 1, .size = 4096},
      {.seq = 3, .action = trace_action::free, .id = 1, .size = 4096},
      {.seq = 4, .action = trace_action::alloc, .id = 2, .size = 64, .kind = trace_kind::svm},
      {.seq = 5,
       .thread = 2,
       .action = trace_action::use,
       .id = 2,
       .size = 64,
       .kind = trace_kind::svm}};
  for (const trace_encoding encoding : {trace_encoding::text, trace_encoding::binary}) {
    std::ostringstream out;
    {
      trace_writer writer(out, encoding, first_use_format_version);
      writer.write_frame(1,
                         {.lang = frame_lang::python, .line = 3, .file = "a.py", .function = "f"});
      writer.write_stack(1, 0, 1);
      for (const auto& e : events) writer.write(e);
    }
    read_result r = read_all_from_string(out.str(), "v4");
    ASSERT_FALSE(r.error) << r.error->what();
    EXPECT_EQ(r.version, 4u);
    ASSERT_EQ(r.events.size(), events.size());
    for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(r.events[i], events[i]) << i;
  }
  std::ostringstream old;
  trace_writer v3(old, trace_encoding::binary, release_format_version);
  EXPECT_THROW(v3.write({.seq = 0, .action = trace_action::use, .id = 1}), std::invalid_argument);
  // A version-3 binary trace with an action-7 record (thread and queue set) is corrupt.
  std::ostringstream three;
  {
    trace_writer w(three, trace_encoding::binary, release_format_version);
    w.write({.seq = 0, .thread = 1, .action = trace_action::alloc, .id = 1});
  }
  std::string bytes = three.str();
  bytes[16] = static_cast<char>(7 | 0x40);
  expect_binary_error(bytes, "bad record tag 71", 0);
}

}  // namespace
}  // namespace clpool::trace

namespace clpool::trace {
namespace {

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A path writer replaces its file only at commit(): an exception or a kill before that leaves
// the previous trace as it was.
TEST(TraceWriter, PathWriterReplacesOnlyAtCommit) {
  const char* t = std::getenv("TEST_TMPDIR");
  const std::string p = std::string(t && *t ? t : "/tmp") + "/commit.trace";
  std::ofstream(p) << "old";
  const std::vector<trace_event> events = random_events(9, 50000);  // several buffer flushes
  {
    trace_writer w(p);
    for (const auto& e : events) w.write(e);
    w.flush();
    EXPECT_EQ(slurp(p), "old");
  }
  EXPECT_EQ(slurp(p), "old");
  {
    trace_writer w(p, trace_encoding::binary);
    for (const auto& e : events) w.write(e);
    w.commit();
  }
  trace_reader r(p);
  trace_event e;
  std::size_t n = 0;
  while (r.next(e)) ++n;
  EXPECT_EQ(n, events.size());
}

}  // namespace
}  // namespace clpool::trace
