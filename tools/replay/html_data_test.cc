// The data of the --html page: each block's requested, pool-bin and device-committed sizes (the
// device profile's pages and pack granules), and the rounding totals at the failure.
#include "tools/replay/html_data.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "replay/result_json.h"
#include "trace/trace_reader.h"

namespace clpool::replay_cli {

using replay::alloc_semantics;
using replay::device_spec;
using replay::format_bytes;
using replay::free_moment;
using replay::replay_config;
using replay::replay_options;
using replay::replay_report;
using replay::replay_stream;
using replay::result_schema_version;
using replay::to_json;
using replay::to_string;

namespace {

constexpr std::uint64_t MiB = 1 << 20;

// Two 1 MiB blocks of the cache, one 4-byte block, then a request that cannot fit.
const char* const trace_text =
    "clpool-trace 2\n"
    "frame 1 py 3 app.py keep\nstack 1 0 1\n"
    "0 0 0 0 alloc 1 1048576 buffer 0 1\n"
    "1 0 0 0 alloc 2 1048576 buffer 0 1\n"
    "2 0 0 0 alloc 3 4 buffer 0 1\n"
    "3 0 0 0 alloc 4 104857600 buffer 0 1\n";

// `text` written to the file `name` in the test's temporary folder; its path.
std::string write_test_trace(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string write_trace() { return write_test_trace("html_data_test.trace", trace_text); }

// The page's data, with the replay's own figures (its "oom", in the result schema) beside it.
struct page {
  nlohmann::json data, oom;
};

page data_for(const device_model::device_profile& profile, std::uint64_t max_alloc = unlimited) {
  const std::string path = write_trace();
  trace::trace_reader reader(path, {.check_liveness = false});
  device_spec spec{64 * MiB, alloc_semantics::immediate};
  spec.profile = profile;
  spec.max_alloc = max_alloc;
  replay_options options;
  options.sites = true;
  options.timeline = true;
  const replay_report r = replay_stream(reader, replay_config{}, spec, options);
  EXPECT_TRUE(r.oom);
  return {html_data(r, path, "t"), to_json(r)["oom"]};
}

TEST(HtmlData, WholePagesShowInEachBlocksCommittedSize) {
  device_model::device_profile pages;  // 2 MiB pages, nothing packed
  pages.name = "pages";
  pages.page = 2 * MiB;
  const auto [d, oom] = data_for(pages);
  const nlohmann::json& b = d["blocks"];
  ASSERT_EQ(b["size"].size(), 3u);  // the failing request got no memory: no block
  EXPECT_EQ(b["size"][0], 1048576u);
  EXPECT_EQ(b["rounded"][0], 1114111u);  // the pool's bin (4 leading bits)
  EXPECT_EQ(b["committed"][0], 2 * MiB);
  EXPECT_EQ(b["committed"][2], 2 * MiB);  // 4 bytes take a whole page too
  // Blocks are laid out by what the device commits: no two overlap.
  EXPECT_EQ(b["offset"][1].get<std::uint64_t>() - b["offset"][0].get<std::uint64_t>(), 2 * MiB);
  EXPECT_EQ(d["profile"]["page"], 2 * MiB);
  EXPECT_FALSE(d.contains("oom"))
      << "the replay's figures are the result document's, not the page's";
  EXPECT_EQ(oom["rounding_loss_bytes"], 2 * (1114111u - 1048576u) + (4u - 4u));
  // Page rounding: the device committed 6 MiB for blocks of 1114111 + 1114111 + 4 bytes.
  const std::uint64_t page_loss = 6 * MiB - (2 * 1114111u + 4u);
  EXPECT_EQ(oom["page_loss_bytes"], page_loss);
  EXPECT_EQ(d["page_rounding_split"]["per_block"], page_loss);
  EXPECT_EQ(d["page_rounding_split"]["shared_room"], 0u);
  EXPECT_EQ(oom["live_sites"][0]["committed_bytes"], 6 * MiB);
}

TEST(HtmlData, PackedBlocksRoundToGranulesAndSharedPagesKeepTheirRoom) {
  device_model::device_profile packed;  // nvidia's rules: 2 MiB pages, up to 2 MiB packed at 512 B
  packed.name = "packed";
  packed.page = 2 * MiB;
  packed.pack_limit = 2 * MiB;
  packed.pack_granule = 512;
  const auto [d, oom] = data_for(packed);
  const nlohmann::json& b = d["blocks"];
  EXPECT_EQ(b["committed"][0], 1114112u);  // 1114111 rounded to 512 B
  EXPECT_EQ(b["committed"][2], 512u);
  const nlohmann::json& split = d["page_rounding_split"];
  const std::uint64_t per_block = 2 * (1114112u - 1114111u) + (512u - 4u);
  EXPECT_EQ(split["per_block"], per_block);
  // Two 1114112-byte shares do not fit one 2 MiB page: two pages open, the 512 B share in one.
  EXPECT_EQ(oom["page_loss_bytes"], 4 * MiB - (2 * 1114111u + 4u));
  EXPECT_EQ(split["shared_room"], 4 * MiB - (2 * 1114112u + 512u));
}

// The page writes each figure as the text report does (the page rounds nothing): its byte texts
// are common::format_bytes's, its capacity sum is the report's rows, and the blocks it says are
// live at the failure are the replay's, without the failing request.
TEST(HtmlData, TheFiguresAreTheTextReportsOwn) {
  device_model::device_profile nv;  // a headroom of 2.625 MiB: 2.62 in C's rounding, 2.63 in JS's
  nv.name = "nv";
  nv.page = 2 * MiB;
  nv.pack_limit = 2 * MiB;
  nv.pack_granule = 512;
  nv.headroom = 2688 << 10;
  const auto [d, oom] = data_for(nv);
  EXPECT_EQ(d["bytes_text"]["2752512"], "2.62 MiB");
  EXPECT_EQ(d["bytes_text"]["67108864"], "64 MiB");  // the capacity
  EXPECT_EQ(d["bytes_text"]["1048576"], "1 MiB");    // a block's size, for its hover
  const nlohmann::json& sum = d["capacity_sum"];
  ASSERT_TRUE(sum.is_array());
  const nlohmann::json& s = oom["capacity_sum"];
  EXPECT_EQ(sum[sum.size() - 3]["what"], "the driver's headroom, never handed out (nv profile)");
  EXPECT_EQ(sum[sum.size() - 3]["bytes"], s["driver_headroom_bytes"]);
  EXPECT_EQ(sum[sum.size() - 2]["what"], "free to the program");
  EXPECT_EQ(sum[sum.size() - 2]["bytes"], s["free_to_program_bytes"]);
  EXPECT_NE(d["request_text"].get<std::string>().find("more than is free to the program"),
            std::string::npos);
  const nlohmann::json& live = d["live_at_end"]["all"];
  EXPECT_EQ(live["blocks"], 3u);
  EXPECT_EQ(live["requested_bytes"], oom["active_bytes"]);
  EXPECT_EQ(d["live_at_end"]["drawn"], live);
  for (const auto& [bytes, text] : d["bytes_text"].items()) {
    EXPECT_EQ(text, format_bytes(std::stoull(bytes))) << bytes;
  }
}

TEST(HtmlData, ExactBytesCommitTheBinSize) {
  const auto [d, oom] = data_for(device_model::device_profile{});
  EXPECT_EQ(d["blocks"]["committed"][0], 1114111u);
  EXPECT_EQ(oom["page_loss_bytes"], 0u);
  EXPECT_EQ(d["page_rounding_split"]["shared_room"], 0u);
}

// With the device's maximum allocation in the bin of 1 MiB (--max-alloc), the pool serves 1 MiB
// at its own size (pool_block_bytes): the page draws the block the replay made.
TEST(HtmlData, TheBinStraddlingTheMaxAllocIsDrawnAtTheRequestsSize) {
  device_model::device_profile profile;
  profile.max_alloc_enforced = false;  // the 100 MiB request runs out of memory, as above
  const auto [d, oom] = data_for(profile, MiB);
  EXPECT_EQ(d["blocks"]["rounded"][0], MiB);
  EXPECT_EQ(d["blocks"]["committed"][0], MiB);
  EXPECT_EQ(oom["rounding_loss_bytes"], 0u);
}

}  // namespace
}  // namespace clpool::replay_cli

namespace clpool::replay_cli {
namespace {

// The page inlines the result document exactly as --json writes it, the replay it shows in the
// same schema, its own data, and html_page.js as it is in the source tree.
TEST(HtmlPage, InlinesTheResultDocumentTheReplayTheDataAndTheScript) {
  // No '<' in any inline document (\u003c): "</script" would end it early, and "<!--" then
  // "<script" would keep its own end tag from ending it.
  nlohmann::json result = {{"schema_version", result_schema_version}, {"input", "a</script>b"}};
  const std::string page =
      html_page(result, {{"events", 3}, {"site", "<!--<script>"}}, {{"title", "t<"}});
  EXPECT_NE(
      page.find(
          "<script type=\"application/json\" id=\"clpool-result\">{\"input\":\"a\\u003c/script>b\","
          "\"schema_version\":" +
          std::to_string(result_schema_version) + "}</script>"),
      std::string::npos);
  EXPECT_NE(
      page.find(
          "id=\"clpool-replay\">{\"events\":3,\"site\":\"\\u003c!--\\u003cscript>\"}</script>"),
      std::string::npos);
  EXPECT_NE(page.find("id=\"clpool-data\">{\"title\":\"t\\u003c\"}</script>"), std::string::npos);
  EXPECT_NE(page.find(html_page_script), std::string::npos);
  const char* src = std::getenv("HTML_PAGE_JS");
  ASSERT_NE(src, nullptr);
  std::ifstream in(src);
  const std::string js((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(js.empty());
  EXPECT_EQ(js, html_page_script) << "the page carries the .js file verbatim";
}

// Version 3: a block's band ends where the replay freed it, by the rule the replay used.
TEST(HtmlData, BlocksEndWhereTheRuleFreesThem) {
  const std::string path = write_test_trace("html_data_v3.trace",
                                            "clpool-trace 3\n"
                                            "0 0 0 0 alloc 1 4096 buffer 0\n"
                                            "1 0 0 0 release 1 4096 buffer 0\n"
                                            "2 0 0 0 alloc 2 4096 buffer 0\n"
                                            "3 0 0 0 wait 0 0 buffer 0\n"
                                            "4 0 0 0 free 1 4096 buffer 0\n"
                                            "5 0 0 0 free 2 4096 buffer 0\n");
  for (const auto& [moment, end] :
       {std::pair{free_moment::release, 1u}, std::pair{free_moment::wait, 3u},
        std::pair{free_moment::driver, 4u}}) {
    trace::trace_reader reader(path, {.check_liveness = false});
    replay_options options;
    options.frees_at = moment;
    const replay_report r = replay_stream(reader, replay_config{}, device_spec{64 * MiB}, options);
    const nlohmann::json d = html_data(r, path, "t");
    EXPECT_EQ(d["blocks"]["end"][0], end) << to_string(moment);
    EXPECT_EQ(d["blocks"]["end"][1], 5u) << to_string(moment);
  }
}

// Without an out-of-memory the page's sites are those at the peak: the event at which the live
// blocks' device-committed bytes add up to the most, each site with what it held then (and its
// callers). At an out-of-memory there is none: the result's sites at the failure are the table.
TEST(HtmlData, WithoutAnOutOfMemoryTheSitesAtThePeak) {
  const std::string path =
      write_test_trace("html_data_peak.trace",
                       "clpool-trace 2\n"
                       "frame 1 py 9 app.py main\nstack 1 0 1\n"
                       "frame 2 py 3 app.py load\nstack 2 1 2\n"
                       "frame 3 py 5 app.py scratch\nstack 3 1 3\n"
                       "0 0 0 0 alloc 1 3145728 buffer 0 2\n"
                       "1 0 0 0 alloc 2 1048576 buffer 0 3\n"
                       "2 0 0 0 alloc 3 2097152 buffer 0 3\n"  // the peak: 6 MiB live
                       "3 0 0 0 free 2 0 buffer 0\n"
                       "4 0 0 0 free 3 0 buffer 0\n"
                       "5 0 0 0 alloc 4 1048576 buffer 0 2\n");  // 4 MiB
  trace::trace_reader reader(path, {.check_liveness = false});
  replay_options options;
  options.sites = true;
  const replay_report r =
      replay_stream(reader, replay_config{.use_pool = false}, device_spec{64 * MiB}, options);
  ASSERT_FALSE(r.oom);
  const nlohmann::json peak = html_data(r, path, "t")["peak"];
  EXPECT_EQ(peak["event"], 2u);
  EXPECT_EQ(peak["committed_bytes"], 6 * MiB);
  ASSERT_EQ(peak["sites"].size(), 2u);
  EXPECT_EQ(peak["sites"][0]["site"], "load (app.py:3)");
  EXPECT_EQ(peak["sites"][0]["requested_bytes"], 3 * MiB);
  EXPECT_EQ(peak["sites"][1]["site"], "scratch (app.py:5)");
  EXPECT_EQ(peak["sites"][1]["blocks"], 2u);
  EXPECT_EQ(peak["sites"][1]["callers"][0]["caller"], "main (app.py:9)");
  EXPECT_TRUE(data_for(device_model::device_profile{}).data["peak"].is_null());
}

// A version-4 trace on a device that commits at first use: a block is drawn from its first use,
// one never used is none, and the page's line under the sum says what the sum leaves out.
TEST(HtmlData, ABlockIsDrawnFromItsFirstUse) {
  const std::string path = write_test_trace("html_data_v4.trace",
                                            "clpool-trace 4\n# first_uses: buffer\n"
                                            "frame 1 py 3 app.py keep\nstack 1 0 1\n"
                                            "frame 2 py 4 app.py idle\nstack 2 0 2\n"
                                            "0 0 0 0 alloc 1 3145728 buffer 0 1\n"
                                            "1 0 0 0 alloc 2 1048576 buffer 0 2\n"  // never used
                                            "2 0 0 0 use 1 3145728 buffer 0 1\n"
                                            "3 0 0 0 alloc 3 2097152 buffer 0 1\n"
                                            "4 0 0 0 use 3 2097152 buffer 0 1\n"  // 5 MiB committed
                                            "5 0 0 0 free 2 0 buffer 0\n");
  replay_options options;
  options.sites = true;
  options.timeline = true;
  const replay_config nopool{.use_pool = false};
  {
    trace::trace_reader reader(path, {.check_liveness = false});
    const replay_report r =
        replay_stream(reader, nopool, device_spec{64 * MiB, alloc_semantics::deferred}, options);
    ASSERT_FALSE(r.oom);
    const nlohmann::json d = html_data(r, path, "t");
    EXPECT_EQ(d["peak"]["event"], 4u);
    EXPECT_EQ(d["peak"]["committed_bytes"], 5 * MiB);
    ASSERT_EQ(d["peak"]["sites"].size(), 1u);
    EXPECT_EQ(d["peak"]["sites"][0]["site"], "keep (app.py:3)");
    EXPECT_EQ(d["peak"]["sites"][0]["blocks"], 2u);
    EXPECT_EQ(d["blocks"]["start"], nlohmann::json::array({2, 4}));
  }
  trace::trace_reader reader(path, {.check_liveness = false});
  const replay_report r =
      replay_stream(reader, nopool, device_spec{4 * MiB, alloc_semantics::deferred}, options);
  ASSERT_TRUE(r.oom);
  const nlohmann::json d = html_data(r, path, "t");
  EXPECT_EQ(d["capacity_unused"], 3 * MiB);  // 2, never used, and 3, whose use fails
  EXPECT_NE(d["capacity_unused_text"].get<std::string>().find(
                "not in the sum: 3 MiB (3145728 bytes) in live blocks no command has used yet"),
            std::string::npos);
  EXPECT_EQ(d["blocks"]["start"], nlohmann::json::array({2}));
}

// With a pool, a block handed out again after a use is committed from its allocation, as the
// replay counts it: drawn from there, in the live blocks at the failure.
TEST(HtmlData, APooledBlockHandedOutCommittedIsDrawnFromItsAllocation) {
  const std::string path =
      write_test_trace("html_data_v4_pool.trace",
                       "clpool-trace 4\n# first_uses: buffer\n"
                       "frame 1 py 3 app.py first\nstack 1 0 1\n"
                       "frame 2 py 4 app.py again\nstack 2 0 2\n"
                       "0 0 0 0 alloc 1 4194304 buffer 0 1\n"
                       "1 0 0 0 use 1 4194304 buffer 0 1\n"
                       "2 0 0 0 free 1 0 buffer 0\n"
                       "3 0 0 0 alloc 2 4194304 buffer 0 2\n"  // 1's block, committed
                       "4 0 0 0 alloc 3 8388608 buffer 0 1\n"
                       "5 0 0 0 use 3 8388608 buffer 0 1\n");  // 4 + 8 MiB > 10 MiB
  trace::trace_reader reader(path, {.check_liveness = false});
  replay_options options;
  options.sites = true;
  options.timeline = true;
  const replay_report r = replay_stream(reader, replay_config{},
                                        device_spec{10 * MiB, alloc_semantics::deferred}, options);
  ASSERT_TRUE(r.oom);
  EXPECT_EQ(r.oom->event_index, 5u);
  const nlohmann::json d = html_data(r, path, "t");
  EXPECT_EQ(d["blocks"]["start"], nlohmann::json::array({1, 3}));
  EXPECT_EQ(d["live_at_end"]["all"]["blocks"], 1u);
  EXPECT_EQ(d["live_at_end"]["all"]["requested_bytes"], 4 * MiB);
}

}  // namespace
}  // namespace clpool::replay_cli
