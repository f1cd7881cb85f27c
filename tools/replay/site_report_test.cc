// Sites at an out-of-memory: which stacks hold the live memory and which freed blocks the pool
// holds, by stack; the failing request's site; the minimum capacity's site; text and JSON.
#include "tools/replay/site_report.h"

#include <gtest/gtest.h>

#include "replay/min_capacity.h"
#include "tools/replay/report_format.h"
#include "trace/trace_reader.h"

namespace clpool::replay_cli {

using replay::alloc_semantics;
using replay::caller_usage;
using replay::callers_of;
using replay::config_result;
using replay::device_spec;
using replay::find_min_capacity;
using replay::in_clpool_package;
using replay::is_user_frame;
using replay::merge_by_site;
using replay::min_capacity_result;
using replay::replay_config;
using replay::replay_options;
using replay::replay_report;
using replay::replay_stream;
using replay::site_name;
using replay::site_usage;
using replay::stack_lines;
using replay::to_json;

namespace {

constexpr std::uint64_t MiB = 1 << 20;

const std::string trace_text =
    "clpool-trace 2\n"
    "frame 1 py 40 app.py main\n"
    "stack 1 0 1\n"
    "frame 2 py 12 app.py Cache.grow\n"
    "stack 2 1 2\n"
    "frame 3 py 20 app.py scratch\n"
    "stack 3 1 3\n"
    "frame 4 py 100 /usr/lib/python3/dist-packages/pyopencl/array.py empty\n"
    "stack 4 2 4\n"
    "0 0 0 0 alloc 1 10485760 buffer 0 4\n"  // the cache: 3 x 10 MiB, through a library frame
    "1 0 0 0 alloc 2 10485760 buffer 0 4\n"
    "2 0 0 0 alloc 3 4194304 buffer 0 3\n"  // scratch, freed: the pool holds it
    "3 0 0 0 free 3 0 buffer 0\n"
    "4 0 0 0 alloc 4 10485760 buffer 0 4\n"
    "5 0 0 0 alloc 5 20971520 buffer 0 3\n";  // the request that fails

replay_report run(const std::string& text, const replay_config& config, std::uint64_t capacity) {
  trace::trace_reader reader =
      trace::trace_reader::from_string(text, "t.trace", {.check_liveness = false});
  replay_options options;
  options.sites = true;
  return replay_stream(reader, config, device_spec{capacity, alloc_semantics::deferred}, options);
}

TEST(SiteReport, LiveAndHeldMemoryPerSite) {
  replay_config pool;  // default pool: keeps freed blocks
  const replay_report r = run(trace_text, pool, 40 * MiB);
  ASSERT_TRUE(r.oom);
  ASSERT_TRUE(r.sites);
  EXPECT_EQ(r.oom->stack, 3u);
  ASSERT_EQ(r.oom->live_sites.size(), 1u);
  EXPECT_EQ(r.oom->live_sites[0].stack, 4u);
  EXPECT_EQ(r.oom->live_sites[0].requested_bytes, 30 * MiB);
  EXPECT_EQ(r.oom->live_sites[0].blocks, 3u);
  EXPECT_GE(r.oom->live_sites[0].rounded_bytes, 30 * MiB);
  ASSERT_EQ(r.oom->held_sites.size(), 1u);  // deferred: the pool never freed what it held
  EXPECT_EQ(r.oom->held_sites[0].stack, 3u);
  EXPECT_EQ(r.oom->held_sites[0].requested_bytes, 4 * MiB);
  // Named by the innermost frame of the program, not pyopencl's.
  EXPECT_EQ(site_name(r.sites.get(), 4), "Cache.grow (app.py:12)");
  const std::string text = format_text(config_result{pool, r, std::nullopt}, "t.trace");
  EXPECT_NE(text.find("failing request's site    scratch (app.py:20)"), std::string::npos) << text;
  EXPECT_NE(text.find("1. Cache.grow (app.py:12)"), std::string::npos) << text;
  EXPECT_NE(text.find("sites whose freed blocks the pool still held:\n  1. scratch (app.py:20)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("at empty ("), std::string::npos);
  const std::string full = format_text(config_result{pool, r, std::nullopt}, "t.trace", true);
  EXPECT_NE(full.find("at empty (/usr/lib/python3/dist-packages/pyopencl/array.py:100)"),
            std::string::npos)
      << full;
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["oom"]["site"], "scratch (app.py:20)");
  EXPECT_EQ(j["oom"]["live_sites"][0]["site"], "Cache.grow (app.py:12)");
  EXPECT_EQ(j["oom"]["live_sites"][0]["frames"].size(), 3u);
  EXPECT_EQ(j["oom"]["held_sites"][0]["requested_bytes"], 4 * MiB);
}

TEST(SiteReport, NoPoolHoldsNothingAndTheDeviceGetsFreesBack) {
  replay_config nopool;
  nopool.use_pool = false;
  const replay_report r = run(trace_text, nopool, 40 * MiB);
  ASSERT_TRUE(r.oom);
  ASSERT_EQ(r.oom->live_sites.size(), 1u);
  EXPECT_EQ(r.oom->live_sites[0].rounded_bytes, 30 * MiB);
  EXPECT_TRUE(r.oom->held_sites.empty());
}

TEST(SiteReport, ReusedHeldBlockIsNoLongerHeld) {
  // The freed 4 MiB block is reused by the next request of the same size: held by nobody.
  const std::string text =
      "clpool-trace 2\nframe 1 py 1 a.py f\nstack 1 0 1\nframe 2 py 2 a.py g\nstack 2 0 2\n"
      "0 0 0 0 alloc 1 4194304 buffer 0 1\n1 0 0 0 free 1 0 buffer 0\n"
      "2 0 0 0 alloc 2 4194304 buffer 0 2\n3 0 0 0 alloc 3 104857600 buffer 0 1\n";
  const replay_report r = run(text, replay_config{}, 64 * MiB);
  ASSERT_TRUE(r.oom);
  EXPECT_TRUE(r.oom->held_sites.empty());
  ASSERT_EQ(r.oom->live_sites.size(), 1u);
  EXPECT_EQ(r.oom->live_sites[0].stack, 2u);
}

TEST(SiteReport, TracesWithoutSitesSayNothingAboutSites) {
  const replay_report r =
      run("clpool-trace 1\n0 0 0 0 alloc 1 104857600 buffer 0\n", replay_config{}, 64 * MiB);
  ASSERT_TRUE(r.oom);
  EXPECT_FALSE(r.sites);
  const std::string text = format_text(config_result{replay_config{}, r, std::nullopt}, "t.trace");
  EXPECT_EQ(text.find("site"), std::string::npos) << text;
  EXPECT_FALSE(to_json(r)["oom"].contains("live_sites"));
}

TEST(SiteReport, MinimumCapacityNamesItsSite) {
  const min_capacity_result m = find_min_capacity(
      [&](std::uint64_t cap) { return run(trace_text, replay_config{}, cap); }, MiB);
  ASSERT_TRUE(m.found);
  config_result res{replay_config{}, std::nullopt, m};
  const std::string text = format_text(res, "t.trace");
  EXPECT_NE(text.find("set by the allocation at scratch (app.py:20)"), std::string::npos) << text;
  EXPECT_EQ(to_json(m)["set_by"]["site"], "scratch (app.py:20)");
}

TEST(SiteReport, UserFrames) {
  using trace::frame_info;
  using trace::frame_lang;
  EXPECT_TRUE(is_user_frame(frame_info{frame_lang::python, 1, "/home/me/app.py", "f"}));
  EXPECT_FALSE(is_user_frame(frame_info{
      frame_lang::python, 1, "/usr/lib/python3/dist-packages/pyopencl/__init__.py", "f"}));
  EXPECT_FALSE(
      is_user_frame(frame_info{frame_lang::python, 1, "/usr/lib/python3.11/threading.py", "run"}));
  EXPECT_FALSE(is_user_frame(frame_info{frame_lang::python, 1, "<frozen runpy>", "_run_code"}));
  EXPECT_TRUE(is_user_frame(frame_info{frame_lang::native, 0, "/home/me/a.out", "grow_cache"}));
  EXPECT_FALSE(is_user_frame(
      frame_info{frame_lang::native, 0, "/lib/x86_64-linux-gnu/libc.so.6", "__libc_start_main"}));
  EXPECT_FALSE(is_user_frame(
      frame_info{frame_lang::native, 0, "/usr/bin/python3.11", "_PyEval_EvalFrameDefault"}));
}

TEST(SiteReport, ClpoolPackageFramesAreNotTheSite) {
  using trace::frame_info;
  using trace::frame_lang;
  for (const char* file : {"python/clpool/pyopencl.py", "clpool/record.py",
                           "/usr/lib/python3/dist-packages/clpool/pyopencl.py",
                           "/home/me/venv/lib/python3.11/site-packages/clpool/_pool_api.py",
                           "/work/repo/python/clpool/pyopencl.py"}) {
    EXPECT_TRUE(in_clpool_package(frame_info{frame_lang::python, 1, file, "f"})) << file;
    EXPECT_FALSE(is_user_frame(frame_info{frame_lang::python, 1, file, "f"})) << file;
  }
  for (const char* file : {"/home/me/venv/site-packages/clpool/_core.so",
                           "/home/me/build/clpool/_core.cpython-311-x86_64-linux-gnu.so"}) {
    EXPECT_FALSE(
        is_user_frame(frame_info{frame_lang::native, 0, file, "clpool::buffer_pool::allocate"}))
        << file;
  }
  // Not clpool's package: other directories and files whose names merely contain "clpool".
  for (const char* file : {"/home/me/clpool_app/model.py", "/home/me/myclpool/app.py", "clpool.py",
                           "/home/me/clpool/data/train.py"}) {
    EXPECT_FALSE(in_clpool_package(frame_info{frame_lang::python, 1, file, "f"})) << file;
    EXPECT_TRUE(is_user_frame(frame_info{frame_lang::python, 1, file, "f"})) << file;
  }
  EXPECT_FALSE(
      in_clpool_package(frame_info{frame_lang::native, 0, "/home/me/clpool/a.out", "main"}));
  EXPECT_TRUE(is_user_frame(frame_info{frame_lang::native, 0, "/home/me/clpool/a.out", "main"}));
}

TEST(SiteReport, ProgramUsingClpoolsPoolIsNamedNotTheAllocator) {
  // A PyOpenCL program allocating through clpool.pyopencl's pool, recorded by the layer: the
  // innermost frames are clpool's extension and clpool/pyopencl.py, then the program's.
  const std::string text =
      "clpool-trace 2\n"
      "frame 1 py 50 /home/me/app.py main\n"
      "stack 1 0 1\n"
      "frame 2 py 21 /home/me/app.py Cache.keep\n"
      "stack 2 1 2\n"
      "frame 3 py 88 /home/me/venv/lib/python3.11/site-packages/pyopencl/array.py Array.__init__\n"
      "stack 3 2 3\n"
      "frame 4 py 140 python/clpool/pyopencl.py MemoryPool.allocate\n"
      "stack 4 3 4\n"
      "frame 5 py 60 python/clpool/_pool_api.py _allocate\n"
      "stack 5 4 5\n"
      "frame 6 native 0 /home/me/venv/lib/python3.11/site-packages/clpool/_core.so "
      "clpool::buffer_pool::allocate\n"
      "stack 6 5 6\n"
      "0 0 0 0 alloc 1 10485760 buffer 0 6\n"
      "1 0 0 0 alloc 2 104857600 buffer 0 6\n";
  replay_config nopool;
  nopool.use_pool = false;
  const replay_report r = run(text, nopool, 64 * MiB);
  ASSERT_TRUE(r.oom);
  ASSERT_TRUE(r.sites);
  EXPECT_EQ(site_name(r.sites.get(), 6), "Cache.keep (/home/me/app.py:21)");
  ASSERT_EQ(r.oom->live_sites.size(), 1u);
  EXPECT_EQ(site_name(r.sites.get(), r.oom->live_sites[0].stack),
            "Cache.keep (/home/me/app.py:21)");
  // The clpool frames stay in the full stack, innermost first.
  const std::vector<std::string> lines = stack_lines(r.sites.get(), 6);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_NE(lines[0].find("clpool::buffer_pool::allocate"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("python/clpool/_pool_api.py"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("MemoryPool.allocate"), std::string::npos) << lines[2];
  const std::string report = format_text(config_result{nopool, r, std::nullopt}, "t.trace");
  EXPECT_NE(report.find("failing request's site    Cache.keep (/home/me/app.py:21)"),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("MemoryPool.allocate"), std::string::npos) << report;
  const std::string full = format_text(config_result{nopool, r, std::nullopt}, "t.trace", true);
  EXPECT_NE(full.find("at MemoryPool.allocate (python/clpool/pyopencl.py:140)"), std::string::npos)
      << full;
}

TEST(SiteReport, OnlyClpoolFramesFallBackToTheInnermost) {
  const std::string text =
      "clpool-trace 2\nframe 1 py 140 python/clpool/pyopencl.py MemoryPool.allocate\nstack 1 0 1\n"
      "0 0 0 0 alloc 1 104857600 buffer 0 1\n";
  const replay_report r = run(text, replay_config{}, 64 * MiB);
  ASSERT_TRUE(r.sites);
  EXPECT_EQ(site_name(r.sites.get(), 1), "MemoryPool.allocate (python/clpool/pyopencl.py:140)");
}

TEST(SiteReport, CommittedBytesFollowTheDevicesPages) {
  // 2 MiB pages, no packing: each 1 MiB block (1114111 bytes in its pool bin) commits 2 MiB.
  device_model::device_profile pages;
  pages.name = "pages";
  pages.page = 2 * MiB;
  const std::string text =
      "clpool-trace 2\nframe 1 py 3 a.py keep\nstack 1 0 1\n"
      "0 0 0 0 alloc 1 1048576 buffer 0 1\n1 0 0 0 alloc 2 1048576 buffer 0 1\n"
      "2 0 0 0 alloc 3 104857600 buffer 0 1\n";
  trace::trace_reader reader =
      trace::trace_reader::from_string(text, "t.trace", {.check_liveness = false});
  replay_options options;
  options.sites = true;
  device_spec spec{64 * MiB, alloc_semantics::immediate};
  spec.profile = pages;
  const replay_config pool;
  const replay_report r = replay_stream(reader, pool, spec, options);
  ASSERT_TRUE(r.oom);
  ASSERT_EQ(r.oom->live_sites.size(), 1u);
  EXPECT_EQ(r.oom->live_sites[0].requested_bytes, 2 * MiB);
  EXPECT_EQ(r.oom->live_sites[0].rounded_bytes, 2 * 1114111u);
  EXPECT_EQ(r.oom->live_sites[0].committed_bytes, 4 * MiB);
  const std::string report = format_text(config_result{pool, r, std::nullopt}, "t.trace");
  EXPECT_NE(
      report.find("2.12 MiB (2228222 bytes) rounded, 4 MiB (4194304 bytes) committed, 2 blocks"),
      std::string::npos)
      << report;
  EXPECT_EQ(to_json(r)["oom"]["live_sites"][0]["committed_bytes"], 4 * MiB);
  // On an exact-byte device committed is the rounded size, and the text does not repeat it.
  const replay_report exact = run(text, pool, 64 * MiB);
  ASSERT_TRUE(exact.oom);
  EXPECT_EQ(exact.oom->live_sites[0].committed_bytes, 2 * 1114111u);
  const std::string plain = format_text(config_result{pool, exact, std::nullopt}, "t.trace");
  EXPECT_EQ(plain.find("committed, "), std::string::npos) << plain;
}

// Sites by caller: every allocation goes through the program's helper alloc(), called from
// load_model (24 MiB: 3 x 8 MiB), from warm_cache (6 MiB) and, through warm_cache, from
// refresh (3 MiB of them). A site is the helper; under it, its callers largest first, and
// their callers; --site-frames 2 makes each caller's allocations a site of its own.
const std::string helper_trace =
    "clpool-trace 2\n"
    "frame 1 py 90 app.py main\nstack 1 0 1\n"
    "frame 2 py 10 app.py load_model\nstack 2 1 2\n"
    "frame 3 py 20 app.py warm_cache\nstack 3 1 3\n"
    "frame 4 py 30 app.py refresh\nstack 4 1 4\n"
    "frame 5 py 21 app.py warm_cache\nstack 5 4 5\n"
    "frame 6 py 5 app.py alloc\n"
    "stack 6 2 6\nstack 7 3 6\nstack 8 5 6\n"
    "frame 7 py 100 /usr/lib/python3/dist-packages/pyopencl/__init__.py Buffer\n"
    "stack 9 6 7\nstack 10 7 7\nstack 11 8 7\n"
    "0 0 0 0 alloc 1 8388608 buffer 0 9\n"
    "1 0 0 0 alloc 2 8388608 buffer 0 9\n"
    "2 0 0 0 alloc 3 8388608 buffer 0 9\n"
    "3 0 0 0 alloc 4 3145728 buffer 0 10\n"
    "4 0 0 0 alloc 5 3145728 buffer 0 11\n"
    "5 0 0 0 alloc 6 33554432 buffer 0 11\n";

TEST(SiteReport, SitesByCaller) {
  const replay_config nopool{.use_pool = false};
  const replay_report r = run(helper_trace, nopool, 40 * MiB);
  ASSERT_TRUE(r.oom);
  const std::vector<site_usage> merged = merge_by_site(r.oom->live_sites, r.sites.get());
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(site_name(r.sites.get(), merged[0].stack), "alloc (app.py:5)");
  const std::vector<caller_usage> callers =
      callers_of(r.oom->live_sites, r.sites.get(), "alloc (app.py:5)");
  ASSERT_EQ(callers.size(), 3u);
  EXPECT_EQ(callers[0].name, "load_model (app.py:10)");
  EXPECT_EQ(callers[0].requested_bytes, 24 * MiB);
  EXPECT_EQ(callers[0].blocks, 3u);
  EXPECT_EQ(callers[1].rounded_bytes, 3 * MiB);
  ASSERT_EQ(callers[0].callers.size(), 1u);
  EXPECT_EQ(callers[0].callers[0].name, "main (app.py:90)");
  // warm_cache at line 20 (from main) and at line 21 (from refresh) are two callers.
  const std::string text = format_text(config_result{nopool, r, std::nullopt}, "t.trace");
  EXPECT_NE(text.find("  1. alloc (app.py:5)\n"
                      "     30 MiB (31457280 bytes) requested, 5 blocks\n"
                      "     called from:\n"
                      "       load_model (app.py:10): 24 MiB (25165824 bytes) in 3 blocks\n"
                      "         main (app.py:90): 24 MiB (25165824 bytes) in 3 blocks\n"
                      "       warm_cache (app.py:20): 3 MiB (3145728 bytes) in 1 block\n"
                      "         main (app.py:90): 3 MiB (3145728 bytes) in 1 block\n"
                      "       warm_cache (app.py:21): 3 MiB (3145728 bytes) in 1 block\n"
                      "         refresh (app.py:30): 3 MiB (3145728 bytes) in 1 block\n"),
            std::string::npos)
      << text;
  const nlohmann::json j = to_json(r)["oom"]["live_sites"][0]["callers"];
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["caller"], "load_model (app.py:10)");
  EXPECT_EQ(j[0]["rounded_bytes"], 24 * MiB);
  EXPECT_EQ(j[2]["callers"][0]["caller"], "refresh (app.py:30)");

  // --site-frames 2: the helper and its caller make the site.
  trace::trace_reader reader =
      trace::trace_reader::from_string(helper_trace, "t.trace", {.check_liveness = false});
  replay_options options;
  options.sites = true;
  options.site_frames = 2;
  const replay_report two =
      replay_stream(reader, nopool, device_spec{40 * MiB, alloc_semantics::deferred}, options);
  const std::vector<site_usage> by_two = merge_by_site(two.oom->live_sites, two.sites.get());
  ASSERT_EQ(by_two.size(), 3u);
  EXPECT_EQ(site_name(two.sites.get(), by_two[0].stack),
            "alloc (app.py:5) from load_model (app.py:10)");
  EXPECT_EQ(by_two[0].requested_bytes, 24 * MiB);
  const std::vector<caller_usage> of_first = callers_of(
      two.oom->live_sites, two.sites.get(), "alloc (app.py:5) from load_model (app.py:10)");
  ASSERT_EQ(of_first.size(), 1u);
  EXPECT_EQ(of_first[0].name, "main (app.py:90)");
}

// A native function the layer could not name (dladdr finds no symbol: static, or not exported
// with -rdynamic): the note says what names it. The layer reads no debug info, so -g names
// nothing and a native frame has no file and line (stacks/capture.cc).
TEST(SiteReport, TheUnnamedSiteNoteSaysWhatNamesIt) {
  const std::string text_trace =
      "clpool-trace 2\n"
      "frame 1 native 0 ./frag 0x1218\n"
      "stack 1 0 1\n"
      "0 0 0 0 alloc 1 10485760 buffer 0 1\n"
      "1 0 0 0 alloc 2 40000000 buffer 0 1\n";
  replay_config pool;
  const replay_report r = run(text_trace, pool, 40 * MiB);
  ASSERT_TRUE(r.oom);
  const std::string text = format_text(config_result{pool, r, std::nullopt}, "t.trace");
  EXPECT_NE(text.find("make the function non-static and link with -rdynamic"), std::string::npos)
      << text;
  EXPECT_NE(text.find("Native frames have no file and line"), std::string::npos) << text;
  EXPECT_EQ(text.find("build with -g for its file and line"), std::string::npos) << text;
}

// Frame names are the trace's: an ESC/OSC sequence, a newline, a NUL and bytes that are not UTF-8
// were printed raw in the text report, and made --json throw (type_error 316).
TEST(SiteReport, HostileFrameNamesAreEscapedInEveryOutput) {
  const std::string hostile =
      "clpool-trace 2\n"
      "frame 1 py 10 %1B]0;pwned%07evil.py %FF%FEbad%0Aname%00x\n"
      "frame 2 native 0 %3C/script%3E%E2%80%AE %1B[2J\n"
      "stack 1 0 1\n"
      "stack 2 1 2\n"
      "0 0 0 0 alloc 1 10485760 buffer 0 2\n"
      "1 0 0 0 alloc 2 40000000 buffer 0 1\n";
  replay_config pool;
  const replay_report r = run(hostile, pool, 40 * MiB);
  ASSERT_TRUE(r.oom);
  EXPECT_EQ(site_name(r.sites.get(), 1),
            "\\xFF\\xFEbad\\x0Aname\\x00x (\\x1B]0;pwned\\x07evil.py:10)");
  const config_result result{pool, r, std::nullopt};
  const std::string text = format_text(result, "t\x1b[31m.trace", true);
  for (const char c : text) {
    EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << "control byte " << int(c);
  }
  EXPECT_NE(text.find("(input t\\x1B[31m.trace)"), std::string::npos) << text;
  EXPECT_NE(text.find("\\x1B[2J (</script>\\u202E)"), std::string::npos) << text;
  const std::string json = to_json({result}, "t.trace", 1).dump(2);  // threw on the raw bytes
  EXPECT_NE(json.find("\\\\xFF\\\\xFEbad"), std::string::npos) << json;
}

}  // namespace
}  // namespace clpool::replay_cli
