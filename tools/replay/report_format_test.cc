#include "tools/replay/report_format.h"

#include <gtest/gtest.h>

#include "tools/replay/svg.h"

namespace clpool::replay {
namespace {

using trace::trace_action;
using trace::trace_event;

std::vector<trace_event> events() {
  std::vector<trace_event> ev;
  const auto add = [&](trace_action a, std::uint64_t id, std::uint64_t size) {
    trace_event e;
    e.seq = ev.size();
    e.action = a;
    e.id = id;
    e.size = size;
    ev.push_back(e);
  };
  add(trace_action::alloc, 1, 600 << 20);
  add(trace_action::alloc, 2, 300 << 20);
  add(trace_action::free, 2, 0);
  add(trace_action::alloc, 3, 500 << 20);
  return ev;
}

TEST(ReportFormat, TextNamesEveryFigure) {
  config_result res;
  res.config = parse_config("pool:lb=4");
  res.replay = replay_events(events(), res.config, {1ull << 30, alloc_semantics::immediate});
  ASSERT_FALSE(res.replay->ok());
  const std::string text = format_text(res, "t.trace");
  for (const char* s : {"OUT OF MEMORY at event 3", "request rounded to", "active (requested)",
                        "held by the pool", "managed by the pool", "device used / capacity",
                        "lost to bin rounding", "lost to page rounding", "held in other bins", "pool retries", "peak active",
                        "peak managed", "hit rate", "allocator calls", "free_held retries"}) {
    EXPECT_NE(text.find(s), std::string::npos) << "missing '" << s << "' in\n" << text;
  }
}

TEST(ReportFormat, JsonHasTheOomPoint) {
  config_result res;
  res.config = parse_config("nopool");
  res.replay = replay_events(events(), res.config, {1ull << 30, alloc_semantics::immediate});
  const nlohmann::json j = to_json({res}, "t.trace", 1);
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["results"][0]["config"], "nopool");
  EXPECT_EQ(j["results"][0]["replay"]["oom"]["event_index"], 3);
  EXPECT_EQ(j["results"][0]["replay"]["oom"]["requested_bytes"], 500ull << 20);
  EXPECT_TRUE(j["results"][0]["min_capacity"].is_null());
}

TEST(ReportFormat, TableHasOneColumnPerConfig) {
  std::vector<config_result> results;
  for (const char* c : {"nopool", "pool:lb=4", "pool:lb=0"}) {
    config_result res;
    res.config = parse_config(c);
    res.replay = replay_events(events(), res.config, {2ull << 30, alloc_semantics::immediate});
    results.push_back(res);
  }
  const std::string table = format_table(results, "t.trace");
  EXPECT_NE(table.find("pool:lb=0"), std::string::npos) << table;
  EXPECT_NE(table.find("hit rate"), std::string::npos) << table;
}

TEST(Svg, SelfContainedWithCapacityAndOom) {
  const replay_report r = replay_events(events(), parse_config("pool"), {1ull << 30, alloc_semantics::immediate},
                                        {.timeline = true});
  const std::string svg = render_svg(r, "title with <angle> & ampersand");
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("capacity 1 GiB"), std::string::npos);
  EXPECT_NE(svg.find("OOM at event 3"), std::string::npos);
  EXPECT_NE(svg.find("&lt;angle&gt; &amp;"), std::string::npos);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos) << "no external references";
}

}  // namespace
}  // namespace clpool::replay
