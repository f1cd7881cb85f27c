// followed_session: a layer-shaped trace written piece by piece, windows cut over it, and each
// window's figures against the engine's replay of the window's own trace (write_window_trace), as
// clpool_replay reads it.
#include "replay/followed_session.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "common/output_file.h"
#include "replay/replay.h"
#include "trace/trace_reader.h"

namespace clpool::replay {
namespace {

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

// Writes a version-3 trace as the layer does: a header, then lines appended as they happen.
class layer_trace {
 public:
  explicit layer_trace(const std::string& name, int version = 3) : path_(temp_path(name)) {
    out_.open(path_, std::ios::trunc);
    out_ << "clpool-trace " << version << "\n# source: layer\n";
    if (version >= 4) out_ << "# first_uses: buffer\n";
    // Sites: t.py's helper _buf (line 10) called by remember (14) and by scratch (20), each from
    // its test (30, 40), all under a library frame (pyopencl) and pytest's.
    out_ << "frame 1 py 100 /usr/lib/python3/dist-packages/pyopencl/__init__.py Buffer.__init__\n"
            "frame 2 py 10 /src/t.py _buf\n"
            "frame 3 py 14 /src/t.py remember\n"
            "frame 4 py 20 /src/t.py scratch\n"
            "frame 5 py 30 /src/t.py test_leaks\n"
            "frame 6 py 40 /src/t.py test_peak\n"
            "frame 7 py 500 /usr/lib/python3/dist-packages/_pytest/python.py pytest_pyfunc_call\n"
            "stack 1 0 7\nstack 2 1 5\nstack 3 2 3\nstack 4 3 2\nstack 5 4 1\n"  // test_leaks ->
                                                                                 // remember -> _buf
            "stack 6 1 6\nstack 7 6 4\nstack 8 7 2\nstack 9 8 1\n";  // test_peak -> scratch -> _buf
    out_.flush();
  }
  void event(const std::string& action, std::uint64_t id, std::uint64_t size,
             std::uint64_t stack = 0, std::uint64_t thread = 0,
             const std::string& kind = "buffer") {
    out_ << seq_++ << " 0 " << thread << " 0 " << action << " " << id << " " << size << " " << kind
         << " 0x0";
    if (stack != 0) out_ << " " << stack;
    out_ << "\n";
    out_.flush();
  }
  void comment(const std::string& text) {
    out_ << "# " << text << "\n";
    out_.flush();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ofstream out_;
  std::uint64_t seq_ = 0;
};

constexpr std::uint64_t leaks_stack = 5, peak_stack = 9;

site_path_rule to_test(const std::string& test) {
  site_path_rule r;
  r.until_file = "/src/t.py";
  r.until_function = test;
  r.root = "/src";
  return r;
}

TEST(FollowedSession, ANotYetWrittenTraceIsNothingYet) {
  const std::string path = temp_path("fs_missing.trace");
  ::unlink(path.c_str());
  followed_session s(path);
  EXPECT_FALSE(s.sync());
  std::ofstream(path) << "clpool-tra";  // the header not whole yet
  EXPECT_FALSE(s.sync());
  std::ofstream(path) << "clpool-trace 3\n";
  EXPECT_TRUE(s.sync());
  EXPECT_EQ(s.events(), 0u);
}

TEST(FollowedSession, HelperSitesAreNamedByTheirPathToTheTest) {
  layer_trace t("fs_helper.trace");
  followed_session s(t.path());
  s.sync();
  s.begin_window();
  s.mark_call();
  t.event("alloc", 1, 3 << 20, leaks_stack);
  t.event("alloc", 2, 1 << 20, leaks_stack);
  t.event("release", 2, 1 << 20);
  t.event("free", 2, 1 << 20);
  s.sync();
  s.mark_call_end();
  const window_figures f = s.figures({.naming = to_test("test_leaks")});
  EXPECT_EQ(f.peak_bytes, 4u << 20);
  EXPECT_EQ(f.left_live_bytes, 3u << 20);
  EXPECT_EQ(f.left_live_blocks, 1u);
  EXPECT_EQ(f.allocations, 2u);
  ASSERT_EQ(f.left_live_sites.size(), 1u);
  EXPECT_EQ(f.left_live_sites[0].site,
            "_buf (t.py:10) \u2190 remember (t.py:14) \u2190 test_leaks (t.py:30)");
  ASSERT_EQ(f.peak_sites.size(), 1u);
  EXPECT_EQ(f.peak_sites[0].bytes, 4u << 20);
  EXPECT_EQ(f.peak_sites[0].blocks, 2u);
  // One frame: the helper alone, as before.
  site_path_rule one = to_test("test_leaks");
  one.frames = 1;
  EXPECT_EQ(s.figures({.naming = one}).left_live_sites[0].site, "_buf (t.py:10)");
  // Not under the test named: every program frame.
  EXPECT_EQ(s.figures({.naming = to_test("test_other")}).left_live_sites[0].site,
            "_buf (t.py:10) \u2190 remember (t.py:14) \u2190 test_leaks (t.py:30)");
}

TEST(FollowedSession, BlocksFromBeforeAndSetupAreNotTheCallsLeaks) {
  layer_trace t("fs_before.trace");
  t.event("alloc", 1, 100, leaks_stack);  // the session's, before the test
  followed_session s(t.path());
  s.sync();
  s.begin_window();
  t.event("alloc", 2, 200, peak_stack);  // setup (a fixture)
  s.sync();
  s.mark_call();
  t.event("release", 2, 200);
  t.event("free", 2, 200);
  t.event("release", 1, 100);  // a block from before, freed in the test
  t.event("free", 1, 100);
  t.event("alloc", 3, 50, peak_stack);
  s.sync();
  s.mark_call_end();
  const window_figures f = s.figures({});
  EXPECT_EQ(f.peak_bytes, 200u);
  EXPECT_EQ(f.left_live_bytes, 50u);
  EXPECT_EQ(f.allocations, 2u);
  EXPECT_FALSE(f.oom.has_value());
}

TEST(FollowedSession, ARefusedBlockIsNotLiveAndTheOomNamesItsFirstUse) {
  layer_trace t("fs_refused.trace");
  t.event("alloc", 1, 700, leaks_stack);  // before the test
  followed_session s(t.path());
  s.sync();
  s.begin_window();
  s.mark_call();
  t.event("alloc", 2, 200, peak_stack);
  t.event("alloc", 3, 500, peak_stack);
  t.comment(
      "failure: first use of id 3 (500 bytes) by clEnqueueWriteBuffer: status -4 from the layer: "
      "budget 1000 bytes");
  t.comment(
      "failure: first use of id 3 (500 bytes) by clEnqueueWriteBuffer: status -4 from the layer: "
      "budget 1000 bytes");
  t.event("alloc_failed", 0, 4000, peak_stack);
  t.comment("failure: seq 4 status -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE) from the layer: budget");
  s.sync();
  s.mark_call_end();
  const window_figures f = s.figures({.naming = to_test("test_peak")});
  EXPECT_EQ(f.peak_bytes, 200u);  // block 3 never held device memory
  EXPECT_EQ(f.left_live_bytes, 200u);
  ASSERT_TRUE(f.oom.has_value());
  EXPECT_EQ(f.oom->where, "at first use by clEnqueueWriteBuffer");
  EXPECT_EQ(f.oom->requested_bytes, 500u);
  EXPECT_EQ(f.oom->live_bytes, 900u);  // 1 from before and 2; not 3, the failing block
  EXPECT_EQ(f.oom->live_before_bytes, 700u);
  EXPECT_EQ(f.oom->live_blocks, 2u);
  EXPECT_EQ(f.oom->more, 1u);  // the retry is the same request; the alloc_failed is another
  EXPECT_EQ(f.oom->site, "_buf (t.py:10) \u2190 scratch (t.py:20) \u2190 test_peak (t.py:40)");
  ASSERT_EQ(f.oom->live_sites.size(), 2u);
  EXPECT_EQ(f.oom->live_sites[0].bytes, 700u);
}

// An earlier test's window: block 1 (500 bytes) refused at its first use and kept, block 2 (100
// bytes) held on; then the window ends.
void earlier_test_keeps_a_refused_block(layer_trace& t, followed_session& s) {
  s.sync();
  s.begin_window();
  t.event("alloc", 1, 500, peak_stack);
  t.comment(
      "failure: first use of id 1 (500 bytes) by clEnqueueWriteBuffer: status -4 from the layer: "
      "budget 400 bytes");
  t.event("alloc", 2, 100, leaks_stack);  // held on, and holding memory
  s.sync();
  s.end_window();
}

TEST(FollowedSession, ABlockRefusedInAnEarlierWindowIsNotLiveInALaterOne) {
  // A test whose buffer's first use was refused, kept alive by its exception's traceback: the
  // next test's out-of-memory must not count it as live (the layer said 0 committed).
  layer_trace t("fs_refused_earlier.trace");
  followed_session s(t.path());
  earlier_test_keeps_a_refused_block(t, s);
  s.begin_window();
  t.event("alloc", 3, 600, peak_stack);
  t.comment(
      "failure: first use of id 3 (600 bytes) by clEnqueueWriteBuffer: status -4 from the layer: "
      "budget 400 bytes");
  s.sync();
  const window_figures f = s.figures({});
  ASSERT_TRUE(f.oom.has_value());
  EXPECT_EQ(f.oom->live_bytes, 100u);  // block 2; block 1 never held memory
  EXPECT_EQ(f.oom->live_before_bytes, 100u);
  EXPECT_EQ(f.oom->live_blocks, 1u);
}

// A block refused at its first use in an earlier test holds nothing, so the next test's device
// trace does not start with it; the release and free of it that the test makes are left out too,
// or clpool_replay would refuse the trace (a free of a block that is not live).
TEST(FollowedSession, TheDeviceTraceLeavesOutFreesOfBlocksItDoesNotHold) {
  layer_trace t("fs_refused_free.trace");
  followed_session s(t.path());
  earlier_test_keeps_a_refused_block(t, s);
  s.begin_window();
  t.event("release", 1, 500);
  t.event("free", 1, 500);
  t.event("alloc", 3, 200, peak_stack);
  t.event("free", 3, 200);
  s.sync();
  const std::string path = temp_path("fs_refused_free_out.trace");
  s.write_window_trace(path, "t.py::test_peak", window_trace::device);
  trace::trace_reader reader(path);  // checks that every free names a live block
  replay_config nopool;
  nopool.use_pool = false;
  const replay_report r = replay_stream(reader, nopool, device_spec{});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.peak_active_bytes, 300u);  // block 2, from before, and block 3
}

TEST(FollowedSession, BoundariesAtSeqsSortEventsReadLater) {
  // The plugin marks each phase at the seq the recorder will number next and reads once, at the
  // end of the call: what was written before, in setup, in the call and after it sorts by seq.
  layer_trace t("fs_seqs.trace");
  followed_session s(t.path());
  s.sync();
  t.event("alloc", 1, 100, peak_stack);  // seq 0: before the window
  s.begin_window(1);
  t.event("alloc", 2, 200, peak_stack);  // seq 1: setup
  s.mark_call(2);
  t.event("alloc", 3, 400, peak_stack);  // seq 2: the call
  t.event("release", 2, 200);            // seq 3
  t.event("free", 2, 200);               // seq 4
  s.mark_call_end(5);
  t.event("alloc", 4, 800, peak_stack);  // seq 5: after the call (teardown)
  s.sync();
  const window_figures f = s.figures({});
  EXPECT_EQ(f.peak_bytes, 600u);       // 2 and 3; neither 1 (before) nor 4 (after)
  EXPECT_EQ(f.left_live_bytes, 400u);  // 3: the call's; 2 was setup's and is freed anyway
  EXPECT_EQ(f.allocations, 2u);        // up to the end of the call, as the peak
  EXPECT_EQ(s.window_entries(), 5u);
}

TEST(FollowedSession, OtherThreadsAreTheSessions) {
  layer_trace t("fs_threads.trace");
  followed_session s(t.path());
  s.sync();
  s.begin_window();
  s.mark_call();
  t.event("alloc", 1, 100, peak_stack, 0);
  t.event("alloc", 2, 1000, leaks_stack, 3);  // a thread that ran before the test
  s.sync();
  s.mark_call_end();
  const window_figures f = s.figures({.other_threads = {3}});
  EXPECT_EQ(f.peak_bytes, 100u);
  EXPECT_EQ(f.left_live_bytes, 100u);
  EXPECT_EQ(f.allocations, 1u);
  EXPECT_EQ(f.other_thread_allocations, 1u);
  EXPECT_EQ(f.other_thread_bytes, 1000u);
  ASSERT_EQ(f.other_thread_sites.size(), 1u);
  const window_figures all = s.figures({});
  EXPECT_EQ(all.peak_bytes, 1100u);
  EXPECT_EQ(all.other_thread_allocations, 0u);
}

// The window's own trace, replayed by the engine as clpool_replay reads a file, gives the
// window's figures back.
void expect_agreement(const followed_session& s, const std::string& name) {
  const std::string path = temp_path(name);
  s.write_window_trace(path, "t.py::" + name, window_trace::own);
  trace::trace_reader reader(path, {.check_liveness = false});
  replay_config nopool;
  nopool.use_pool = false;
  replay_options o;
  o.sites = true;
  o.frees_at = free_moment::release;
  const replay_report r = replay_stream(reader, nopool, device_spec{}, o);
  const window_figures f = s.figures({});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.peak_active_bytes, f.peak_bytes) << name;
  // The own trace starts at setup; the left-live figure is the call's: here every test allocates
  // in its call only.
  EXPECT_EQ(r.end_active_bytes, f.left_live_bytes) << name;
}

TEST(FollowedSession, RandomWindowsAgreeWithTheirOwnTraceReplayed) {
  layer_trace t("fs_random.trace");
  followed_session s(t.path());
  std::mt19937_64 rng(42);
  std::uint64_t next_id = 1;
  std::vector<std::uint64_t> live, released;
  for (int window = 0; window < 50; ++window) {
    s.sync();
    s.begin_window();
    s.mark_call();
    std::vector<std::uint64_t> mine;
    for (int i = 0; i < 40; ++i) {
      const int what = static_cast<int>(rng() % 6);
      if (what <= 2 || mine.empty()) {
        const std::uint64_t id = next_id++;
        t.event("alloc", id, 1 + rng() % 100000, rng() % 2 ? leaks_stack : peak_stack, 0,
                rng() % 8 == 0 ? "host" : "buffer");
        mine.push_back(id);
      } else {
        const std::size_t k = rng() % mine.size();
        const std::uint64_t id = mine[k];
        mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(k));
        if (what == 3) {
          t.event("free", id, 0);
        } else {
          t.event("release", id, 0);
          if (what == 4) t.event("wait", 0, 0);
          t.event("free", id, 0);
        }
      }
    }
    s.sync();
    s.mark_call_end();
    expect_agreement(s, "fs_random_" + std::to_string(window) + ".trace");
    for (const std::uint64_t id : mine) live.push_back(id);
  }
}

TEST(FollowedSession, TheDeviceTraceReplaysTheOom) {
  layer_trace t("fs_device.trace");
  t.event("alloc", 1, 700, leaks_stack);
  followed_session s(t.path());
  s.sync();
  s.begin_window();
  s.mark_call();
  t.event("alloc", 2, 200, peak_stack);
  t.event("alloc_failed", 0, 400, peak_stack);
  t.comment("failure: seq 2 status -4 from the layer");
  s.sync();
  const std::string path = temp_path("fs_device_out.trace");
  s.write_window_trace(path, "t.py::test_peak[a\nb]", window_trace::device);
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  EXPECT_NE(text.str().find("# test: t.py::test_peak[a\\x0Ab]\n"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("# failure: seq 2 status -4 from the layer\n"), std::string::npos)
      << text.str();
  trace::trace_reader reader(path, {.check_liveness = false});
  replay_config nopool;
  nopool.use_pool = false;
  replay_options o;
  o.sites = true;
  const replay_report r =
      replay_stream(reader, nopool, device_spec{1000, alloc_semantics::immediate}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.oom->requested_bytes, 400u);
  EXPECT_EQ(r.oom->active_bytes, 900u);
  EXPECT_EQ(r.oom->seq, 2u);  // the session's own seq
}

// A request the device refused for its size (CL_INVALID_BUFFER_SIZE) involved no memory: no
// out-of-memory of the test, no part of its peak, and its device trace replays without one.
TEST(FollowedSession, ASizeRefusalIsNoOomAndNoPeak) {
  layer_trace t("fs_size.trace");
  followed_session s(t.path());
  s.sync();
  s.begin_window();
  s.mark_call();
  t.event("alloc", 1, 200, peak_stack);
  t.event("alloc_failed", 2, 1 << 24, peak_stack);
  t.comment(
      "failure: seq 1 status -61 (CL_INVALID_BUFFER_SIZE) from the layer: above "
      "CL_DEVICE_MAX_MEM_ALLOC_SIZE, 1000 bytes");
  t.event("free", 1, 200);
  s.sync();
  s.mark_call_end();
  const window_figures f = s.figures({.naming = to_test("test_peak")});
  EXPECT_FALSE(f.oom.has_value()) << f.oom->recorder_said;
  EXPECT_EQ(f.peak_bytes, 200u);
  EXPECT_EQ(f.left_live_bytes, 0u);
  for (const window_trace what : {window_trace::own, window_trace::device}) {
    const std::string path = temp_path("fs_size_out.trace");
    s.write_window_trace(path, "t.py::test_peak", what);
    trace::trace_reader reader(path, {.check_liveness = false});
    replay_config nopool;
    nopool.use_pool = false;
    const replay_report r =
        replay_stream(reader, nopool, device_spec{1000, alloc_semantics::immediate});
    EXPECT_TRUE(r.ok()) << (what == window_trace::own ? "own" : "device");
    EXPECT_EQ(r.peak_active_bytes, 200u);
  }
}

// Only the first failure comment after an event is its: a size refusal's words after it change
// nothing.
TEST(FollowedSession, OnlyTheFirstFailureCommentIsTheEvents) {
  layer_trace t("fs_first.trace");
  followed_session s(t.path());
  s.sync();
  s.begin_window();
  s.mark_call();
  t.event("alloc_failed", 1, 400, peak_stack);
  t.comment("failure: seq 0 status -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE) from the layer");
  t.comment("failure: seq 0 status -61 (CL_INVALID_BUFFER_SIZE) from the layer");
  s.sync();
  s.mark_call_end();
  const window_figures f = s.figures({.naming = to_test("test_peak")});
  ASSERT_TRUE(f.oom.has_value());
  EXPECT_EQ(f.oom->requested_bytes, 400u);
  EXPECT_EQ(f.oom->recorder_said,
            "seq 0 status -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE) from the layer");
}

// The recorder writes an alloc_failed and its failure comment one line after the other; a sync
// may fall between them (another thread refused for its size while the test ends). Until a line
// after it is read, the alloc_failed is not figured: its comment may yet make it a size refusal.
TEST(FollowedSession, AnAllocFailedWaitsForTheLineAfterIt) {
  layer_trace t("fs_settle.trace");
  followed_session s(t.path());
  s.sync();
  s.begin_window();
  s.mark_call();
  t.event("alloc", 1, 200, peak_stack);
  t.event("alloc_failed", 0, 1 << 24, peak_stack, 7);
  s.sync();
  const std::string path = temp_path("fs_settle_out.trace");
  const auto device_trace_fails = [&] {
    s.write_window_trace(path, "t.py::test_peak", window_trace::device);
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.find("alloc_failed") != std::string::npos;
  };
  for (const bool call_ended : {false, true}) {
    if (call_ended) s.mark_call_end(100);  // a seq past the alloc_failed's
    const window_figures f = s.figures({.naming = to_test("test_peak")});
    EXPECT_FALSE(f.oom.has_value()) << "call ended: " << call_ended;
    EXPECT_EQ(f.peak_bytes, 200u);
    EXPECT_FALSE(device_trace_fails());
  }
  t.comment(
      "failure: seq 1 status -61 (CL_INVALID_BUFFER_SIZE) from the layer: above "
      "CL_DEVICE_MAX_MEM_ALLOC_SIZE, 1000 bytes");
  s.sync();
  EXPECT_FALSE(s.figures({.naming = to_test("test_peak")}).oom.has_value());
  EXPECT_TRUE(device_trace_fails());  // the refusal with its words, which replay it as one
  // An alloc_failed with no words is an out-of-memory once the next line shows none is coming.
  t.event("alloc_failed", 0, 400, peak_stack);
  s.sync();
  EXPECT_FALSE(s.figures({.naming = to_test("test_peak")}).oom.has_value());
  t.event("free", 1, 200);
  s.sync();
  const window_figures f = s.figures({.naming = to_test("test_peak")});
  ASSERT_TRUE(f.oom.has_value());
  EXPECT_EQ(f.oom->requested_bytes, 400u);
  EXPECT_EQ(f.oom->recorder_said, "");
}

// A window that begins while the last line read is the previous window's alloc_failed starts
// empty, and that alloc_failed's comment, read later, is no part of it.
TEST(FollowedSession, ANewWindowOwnsNoneOfThePreviousWindowsTail) {
  layer_trace t("fs_tail.trace");
  followed_session s(t.path());
  s.sync();
  s.begin_window();
  t.event("alloc_failed", 0, 400, peak_stack);
  s.sync();
  s.end_window();
  s.begin_window();
  EXPECT_EQ(s.window_entries(), 0u);
  const std::string path = temp_path("fs_tail_out.trace");
  s.write_window_trace(path, "t.py::test_peak", window_trace::device);
  t.comment("failure: seq 0 status -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE) from the layer");
  s.sync();
  EXPECT_EQ(s.window_entries(), 0u);
  EXPECT_FALSE(s.figures({.naming = to_test("test_peak")}).oom.has_value());
  t.event("alloc", 1, 200, peak_stack);
  s.sync();
  EXPECT_EQ(s.figures({.naming = to_test("test_peak")}).peak_bytes, 200u);
}

// A test whose first device event is the refused first use of a block made before it (a module
// fixture's buffer, committed at its first use): the refusal is the test's out-of-memory.
TEST(FollowedSession, ARefusedFirstUseFirstInAWindowIsItsOom) {
  layer_trace t("fs_use_first.trace", 4);
  followed_session s(t.path());
  s.sync();
  s.begin_window();
  t.event("alloc", 1, 500, peak_stack);  // the fixture's
  s.sync();
  s.end_window();
  s.begin_window();
  s.mark_call();
  t.event("use", 1, 500, peak_stack);
  t.comment(
      "failure: first use of id 1 (500 bytes) by clEnqueueWriteBuffer: status -4 from the layer: "
      "budget 400 bytes");
  s.sync();
  s.mark_call_end();
  ASSERT_EQ(s.window_entries(), 1u);
  const window_figures f = s.figures({.naming = to_test("test_peak")});
  ASSERT_TRUE(f.oom.has_value());
  EXPECT_EQ(f.oom->where, "at first use by clEnqueueWriteBuffer");
  EXPECT_EQ(f.oom->requested_bytes, 500u);
}

TEST(FollowedSession, ArtifactsRefuseLinksAndSayWhy) {
  layer_trace t("fs_links.trace");
  followed_session s(t.path());
  s.sync();
  s.begin_window();
  const std::string target = temp_path("fs_link_target");
  std::ofstream(target) << "keep\n";
  const std::string link = temp_path("fs_link.trace");
  ::unlink(link.c_str());
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_THROW(s.write_window_trace(link, "t", window_trace::own), common::output_error);
  std::stringstream kept;
  kept << std::ifstream(target).rdbuf();
  EXPECT_EQ(kept.str(), "keep\n");
}

TEST(FollowedSession, AMalformedTraceIsAnError) {
  layer_trace t("fs_bad.trace");
  followed_session s(t.path());
  s.sync();
  t.event("free", 99, 1);  // never allocated
  EXPECT_THROW(s.sync(), trace::trace_error);
}

}  // namespace
}  // namespace clpool::replay
