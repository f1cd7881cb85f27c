// The diff's model: the --max-growth grammar, growth, each site's peak over a trace, the comparison
// and its gate, and its versioned JSON. The text: tools/replay/diff_command_test.cc; the command
// line: tools/replay/diff_cli_test.sh; Python's clpool.replay.diff: python/tests/replay_test.py.
#include "replay/diff.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "common/cli.h"

namespace clpool::replay {
namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// A cache site (line 10 in old, 12 in new: the same site) and a scratch site.
const char* const old_trace =
    "clpool-trace 2\n"
    "frame 1 py 10 /app/lib.py Cache.put\n"
    "frame 2 py 20 /app/lib.py scratch\n"
    "frame 3 py 5 /usr/lib/python3/dist-packages/pyopencl/array.py Array.__init__\n"
    "stack 1 0 1\n"
    "stack 2 0 2\n"
    "stack 3 1 3\n"
    "0 0 0 0 alloc 1 100 buffer 0 3\n"
    "1 0 0 0 alloc 2 1000 buffer 0 2\n"
    "2 0 0 0 free 2 1000 buffer 0\n"
    "3 0 0 0 alloc 3 100 buffer 0 1\n"
    "4 0 0 0 alloc 4 5000 host 0 1\n"  // host memory: not device memory
    "5 0 0 0 free 1 100 buffer 0\n";
const char* const new_trace =
    "clpool-trace 2\n"
    "frame 1 py 12 /app/lib.py Cache.put\n"
    "frame 2 py 20 /app/lib.py scratch\n"
    "stack 1 0 1\n"
    "stack 2 0 2\n"
    "0 0 0 0 alloc 1 300 buffer 0 1\n"
    "1 0 0 0 alloc 2 300 buffer 0 1\n"
    "2 0 0 0 alloc 3 400 svm 0 2\n";

TEST(Diff, MaxGrowthGrammar) {
  EXPECT_DOUBLE_EQ(parse_growth("5%"), 0.05);
  EXPECT_DOUBLE_EQ(parse_growth(" 2.5 % "), 0.025);
  EXPECT_DOUBLE_EQ(parse_growth("0%"), 0.0);
  EXPECT_DOUBLE_EQ(parse_growth("150%"), 1.5);
  const auto message = [](const std::string& text) {
    try {
      parse_growth(text);
    } catch (const common::usage_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("5"), "--max-growth: '5' needs a percent sign, e.g. 5%");
  EXPECT_EQ(message("-5%"), "--max-growth: '-5%' is negative");
  EXPECT_EQ(message("five%"), "--max-growth: 'five%' is not a number");
  EXPECT_EQ(message("1.2.3%"), "--max-growth: '1.2.3%' is not a number");
  EXPECT_EQ(message("%"), "--max-growth: '%' is not a number");
  EXPECT_EQ(message("1e400%"), "--max-growth: '1e400%' is not a number");
  EXPECT_EQ(message("2000000000%"), "--max-growth: '2000000000%' is too large");
  // Python's clpool.replay.diff names its own argument.
  try {
    parse_growth("5", "max_growth");
    ADD_FAILURE() << "'5' accepted";
  } catch (const common::usage_error& e) {
    EXPECT_STREQ(e.what(), "max_growth: '5' needs a percent sign, e.g. 5%");
  }
}

TEST(Diff, Growth) {
  EXPECT_DOUBLE_EQ(growth(100, 105), 0.05);
  EXPECT_DOUBLE_EQ(growth(100, 50), -0.5);
  EXPECT_DOUBLE_EQ(growth(0, 0), 0.0);
  EXPECT_TRUE(std::isinf(growth(0, 1)));
  EXPECT_EQ(growth_percent(growth(100, 104)), "+4.0%");
  EXPECT_EQ(growth_percent(growth(100, 50)), "-50.0%");
  EXPECT_EQ(growth_percent(growth(7, 7)), "+0.0%");
  EXPECT_EQ(growth_percent(growth(0, 1)), "new");
}

TEST(Diff, SitePeaksAreEachSitesOwnPeakOfDeviceMemory) {
  const std::vector<site_peak> p = site_peaks(write_file("old.trace", old_trace), {});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].name, "scratch (/app/lib.py:20)");
  EXPECT_EQ(p[0].peak_bytes, 1000u);
  // Named by the program's frame, not PyOpenCL's; both stacks are one site; host blocks excluded.
  EXPECT_EQ(p[1].name, "Cache.put (/app/lib.py:10)");
  EXPECT_EQ(p[1].peak_bytes, 200u);
  const std::vector<site_peak> v1 = site_peaks(
      write_file("v1.trace",
                 "clpool-trace 1\n0 0 0 0 alloc 1 64 buffer 0\n1 0 0 0 alloc 2 64 buffer 0\n"),
      {});
  ASSERT_EQ(v1.size(), 1u);
  EXPECT_EQ(v1[0].name, "(no stack recorded)");
  EXPECT_EQ(v1[0].peak_bytes, 128u);
}

std::vector<config_result> run_with(std::uint64_t peak, std::optional<std::uint64_t> min) {
  std::vector<config_result> r;
  config_result c;
  c.config.use_pool = false;
  replay_report rep;
  rep.peak_device_bytes = peak;
  rep.device.backend = "sim";
  rep.device.semantics = alloc_semantics::deferred;
  rep.device.profile.name = "nvidia";
  c.replay = rep;
  min_capacity_result m;
  m.found = min.has_value();
  m.capacity = min.value_or(0);
  m.granule = 1 << 20;
  c.min_capacity = m;
  r.push_back(c);
  return r;
}

TEST(Diff, TheSiteThatGrewComesFirstAndTheGateSaysWhatGrew) {
  const std::string a = write_file("a.trace", old_trace);
  const std::string b = write_file("b.trace", new_trace);
  const diff_result d = compare_runs(a, run_with(100 << 20, 101u << 20), site_peaks(a, {}), b,
                                     run_with(104 << 20, 110u << 20), site_peaks(b, {}), 0.05);
  ASSERT_EQ(d.sites.size(), 2u);
  EXPECT_EQ(d.sites[0].name, "Cache.put (/app/lib.py:12)");  // the new trace's line
  EXPECT_EQ(d.sites[0].old_bytes, 200u);
  EXPECT_EQ(d.sites[0].new_bytes, 600u);
  EXPECT_EQ(d.sites[1].name, "scratch (/app/lib.py:20)");
  EXPECT_EQ(d.sites[1].change(), -600);
  ASSERT_EQ(d.over.size(), 1u);  // the peak grew 4%, the minimum capacity 8.9%
  EXPECT_EQ(d.over[0], "nopool's minimum capacity grew +8.9%");
  EXPECT_FALSE(d.passed());
  EXPECT_EQ(d.device, "sim, deferred allocation, nvidia profile");
  EXPECT_EQ(d.granule, 1u << 20);
  ASSERT_EQ(d.configs.size(), 1u);
  EXPECT_EQ(d.configs[0].config, "nopool");
  EXPECT_EQ(d.configs[0].old_peak, 100u << 20);
  EXPECT_EQ(d.configs[0].new_min, 110u << 20);
  EXPECT_EQ(d.sites[0].callers.size(), 0u);  // Cache.put's stacks end at it: no caller
  const nlohmann::json j = diff_json(d);
  EXPECT_EQ(j["configurations"][0]["old"]["min_capacity"], 101u << 20);
  EXPECT_EQ(j["configurations"][0]["new"]["peak_device_bytes"], 104u << 20);
  EXPECT_EQ(j["sites"][0]["site"], "Cache.put (/app/lib.py:12)");
  EXPECT_EQ(j["sites"][0]["change_bytes"], 400);
  EXPECT_EQ(j["passed"], false);
  EXPECT_DOUBLE_EQ(j["max_growth"].get<double>(), 0.05);

  // Within the gate; and a configuration that no longer fits any device fails it.
  EXPECT_TRUE(compare_runs(a, run_with(100, 100), {}, b, run_with(104, 104), {}, 0.05).passed());
  const diff_result none =
      compare_runs(a, run_with(100, 100), {}, b, run_with(100, std::nullopt), {}, 0.05);
  ASSERT_EQ(none.over.size(), 1u);
  EXPECT_EQ(none.over[0], "nopool no longer fits any device");
  // No gate: never fails.
  EXPECT_TRUE(
      compare_runs(a, run_with(1, 1), {}, b, run_with(100, 100), {}, std::nullopt).passed());
}

// Two checkouts at different paths: a site is its function in its file, wherever that lies.
TEST(Diff, SitesMatchAcrossCheckouts) {
  const std::string a =
      write_file("here.trace",
                 "clpool-trace 2\nframe 1 py 10 /home/ci/old/app/lib.py Cache.put\nstack 1 0 1\n"
                 "0 0 0 0 alloc 1 100 buffer 0 1\n");
  const std::string b =
      write_file("there.trace",
                 "clpool-trace 2\nframe 1 py 11 /tmp/new/app/lib.py Cache.put\nstack 1 0 1\n"
                 "0 0 0 0 alloc 1 300 buffer 0 1\n");
  const diff_result d = compare_runs(a, run_with(1, 1), site_peaks(a, {}), b, run_with(1, 1),
                                     site_peaks(b, {}), std::nullopt);
  ASSERT_EQ(d.sites.size(), 1u);
  EXPECT_EQ(d.sites[0].name, "Cache.put (/tmp/new/app/lib.py:11)");
  EXPECT_EQ(d.sites[0].change(), 200);
}

// compute_features makes a 32 MiB temporary at line 24, freed at once, and keeps 1 MiB of features
// per call at line 25: 3 calls before the change, 10 after. The memory grew at line 25, though line
// 24 allocates first and holds the most at the peak.
std::string featstore(int calls) {
  std::string t =
      "clpool-trace 2\n"
      "frame 1 py 60 /app/featstore.py main\nframe 2 py 40 /app/featstore.py build_index\n"
      "frame 3 py 24 /app/featstore.py compute_features\nframe 4 py 25 /app/featstore.py "
      "compute_features\n"
      "stack 1 0 1\nstack 2 1 2\nstack 3 2 3\nstack 4 2 4\n";
  int seq = 0;
  const auto line = [&](const std::string& action, int id, std::uint64_t size, const char* stack) {
    t += std::to_string(seq) + " 0 0 0 " + action + " " + std::to_string(id) + " " +
         std::to_string(size) + " buffer 0" + stack + "\n";
    ++seq;
  };
  for (int i = 0; i < calls; ++i) {
    line("alloc", 2 * i + 1, 32u << 20, " 3");  // the temporary
    line("alloc", 2 * i + 2, 1u << 20, " 4");   // the features kept
    line("free", 2 * i + 1, 32u << 20, "");
  }
  return t;
}

TEST(Diff, TheSiteIsNamedByTheLineThatHoldsTheGrowthWithItsCallers) {
  const std::string a = write_file("featstore_old.trace", featstore(3));
  const std::string b = write_file("featstore_new.trace", featstore(10));
  const std::vector<site_peak> before = site_peaks(a, {});
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].peak_bytes, 35u << 20);
  ASSERT_EQ(before[0].lines.size(), 2u);  // at the peak: the temporary and 3 kept
  EXPECT_EQ(before[0].lines[0].name, "compute_features (/app/featstore.py:24)");
  EXPECT_EQ(before[0].lines[1].bytes, 3u << 20);
  const diff_result d =
      compare_runs(a, run_with(1, 1), before, b, run_with(1, 1), site_peaks(b, {}), std::nullopt);
  ASSERT_EQ(d.sites.size(), 1u);
  EXPECT_EQ(d.sites[0].name, "compute_features (/app/featstore.py:25)");
  EXPECT_EQ(d.sites[0].change(), 7 << 20);
  // Its callers are those of line 25 at the new trace's peak: build_index, then main, 10 blocks.
  ASSERT_EQ(d.sites[0].callers.size(), 1u);
  EXPECT_EQ(d.sites[0].callers[0].name, "build_index (/app/featstore.py:40)");
  EXPECT_EQ(d.sites[0].callers[0].requested_bytes, 10u << 20);
  EXPECT_EQ(d.sites[0].callers[0].blocks, 10u);
  const nlohmann::json j = diff_json(d);
  EXPECT_EQ(j["sites"][0]["site"], "compute_features (/app/featstore.py:25)");
  EXPECT_EQ(j["sites"][0]["callers"][0]["caller"], "build_index (/app/featstore.py:40)");
  EXPECT_EQ(j["sites"][0]["callers"][0]["callers"][0]["caller"], "main (/app/featstore.py:60)");
  EXPECT_EQ(j["sites"][0]["callers"][0]["blocks"], 10u);
  // The other way round (the features fell from 10 to 3): named by the line that lost them.
  const diff_result back =
      compare_runs(b, run_with(1, 1), site_peaks(b, {}), a, run_with(1, 1), before, std::nullopt);
  EXPECT_EQ(back.sites[0].name, "compute_features (/app/featstore.py:25)");
  EXPECT_EQ(back.sites[0].change(), -(7 << 20));
}

// The JSON is one versioned document: schema_version and exactly the keys README.md lists, byte
// counts as integers, a growth from 0 (or a minimum capacity that is gone) as null.
TEST(Diff, TheJsonIsAVersionedDocument) {
  diff_result d = compare_runs("a\x01.trace", run_with(0, 4u << 20), {}, "b.trace",
                               run_with(3u << 20, std::nullopt), {}, std::nullopt);
  const nlohmann::json j = diff_json(d);
  EXPECT_EQ(j["schema_version"], diff_schema_version);
  EXPECT_EQ(diff_schema_version, 1);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"configurations", "device", "exceeded", "granule_bytes",
                                            "max_growth", "new", "old", "passed", "schema_version",
                                            "sites"}));
  EXPECT_EQ(j["old"], "a\\x01.trace");  // a file name in its printable form (common::json_text)
  EXPECT_EQ(j["granule_bytes"], 1u << 20);
  const nlohmann::json& c = j["configurations"][0];
  EXPECT_EQ(c["old"]["peak_device_bytes"], 0u);
  EXPECT_EQ(c["new"]["peak_device_bytes"], 3u << 20);
  EXPECT_TRUE(c["peak_growth"].is_null());          // from 0: no finite fraction
  EXPECT_TRUE(c["new"]["min_capacity"].is_null());  // no capacity fits
  EXPECT_TRUE(c["min_capacity_growth"].is_null());
  EXPECT_TRUE(j["max_growth"].is_null());
  EXPECT_EQ(j["exceeded"], nlohmann::json::array());
  EXPECT_EQ(j["passed"], true);
  // With the gate: what went over, in the words of the text.
  d = compare_runs("a.trace", run_with(0, 4u << 20), {}, "b.trace",
                   run_with(3u << 20, std::nullopt), {}, 0.0);
  EXPECT_EQ(diff_json(d)["exceeded"], (nlohmann::json{"nopool's peak device memory grew new",
                                                      "nopool no longer fits any device"}));
  EXPECT_EQ(diff_json(d)["passed"], false);
}

// diff_traces reads each trace's sites with its frees where its replays put them: a version-3
// trace whose program released a block long before the driver freed it.
TEST(Diff, TheSitesFollowTheReplaysMomentOfAFree) {
  const std::string v3 =
      write_file("v3.trace",
                 "clpool-trace 3\n"
                 "0 0 0 0 alloc 1 2097152 buffer 0\n1 0 0 0 release 1 2097152 buffer 0\n"
                 "2 0 0 0 alloc 2 2097152 buffer 0\n3 0 0 0 release 2 2097152 buffer 0\n"
                 "4 0 0 0 free 1 2097152 buffer 0\n5 0 0 0 free 2 2097152 buffer 0\n");
  const auto at = [](free_moment m) {
    std::vector<config_result> run = run_with(1, 1);
    run[0].replay->frees_at = m;
    return run;
  };
  const diff_result released =
      diff_traces(v3, at(free_moment::release), v3, at(free_moment::driver), {}, std::nullopt);
  ASSERT_EQ(released.sites.size(), 1u);
  EXPECT_EQ(released.sites[0].old_bytes,
            2u << 20);  // freed at the program's release: one at a time
  EXPECT_EQ(released.sites[0].new_bytes, 4u << 20);  // freed by the driver at the end: both live
}

}  // namespace
}  // namespace clpool::replay
