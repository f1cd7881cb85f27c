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

// A no-pool report has no pool to talk about: no rounding, holding, managing or retry lines.
TEST(ReportFormat, NoPoolTextHasNoPoolLines) {
  config_result res;
  res.config = parse_config("nopool");
  res.replay = replay_events(events(), res.config, {1ull << 30, alloc_semantics::immediate});
  ASSERT_TRUE(res.replay->oom.has_value());
  const std::string text = format_text(res, "t.trace");
  for (const char* s : {"request rounded to", "active (rounded)", "held by the pool", "managed by the pool",
                        "lost to bin rounding", "held in other bins", "pool retries", "peak managed",
                        "hit rate"}) {
    EXPECT_EQ(text.find(s), std::string::npos) << "'" << s << "' in\n" << text;
  }
  for (const char* s : {"active  ", "device used / capacity", "lost to page rounding", "peak active"}) {
    EXPECT_NE(text.find(s), std::string::npos) << "missing '" << s << "' in\n" << text;
  }
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

// The attribute `name` of the element with id `id`, as a number.
double svg_attr(const std::string& svg, const std::string& id, const std::string& name) {
  const std::size_t at = svg.find("id=\"" + id + "\"");
  EXPECT_NE(at, std::string::npos) << id;
  const std::size_t end = svg.find('>', at);
  const std::size_t a = svg.find(" " + name + "=\"", at);
  EXPECT_LT(a, end) << id << " has no " << name;
  return std::stod(svg.substr(a + name.size() + 3));
}

TEST(Svg, TheOutOfMemoryMarkIsWhereTheReportSays) {
  const replay_report r = replay_events(events(), parse_config("pool"), {1ull << 30, alloc_semantics::immediate},
                                        {.timeline = true});
  ASSERT_TRUE(r.oom.has_value());
  const std::string svg = render_svg(r, "t");
  const double top = svg_attr(svg, "plot", "y"), h = svg_attr(svg, "plot", "height");
  const double bytes_top = svg_attr(svg, "plot", "data-bytes-top");
  const auto y_of = [&](double bytes) { return top + h * (1.0 - bytes / bytes_top); };
  EXPECT_EQ(svg_attr(svg, "oom-used", "data-bytes"), static_cast<double>(r.oom->device_used_bytes));
  EXPECT_NEAR(svg_attr(svg, "oom-used", "cy"), y_of(static_cast<double>(r.oom->device_used_bytes)), 0.06);
  // The request that did not fit stands on it, as tall as its rounded size.
  EXPECT_NEAR(svg_attr(svg, "oom-request", "height"), h * static_cast<double>(r.oom->rounded_bytes) / bytes_top,
              0.11);
  // The labels give the report's figures, requested and rounded.
  EXPECT_NE(svg.find(format_bytes(r.oom->requested_bytes) + " requested (" + format_bytes(r.oom->rounded_bytes) +
                     " rounded)"),
            std::string::npos);
  EXPECT_NE(svg.find("held " + format_bytes(r.oom->held_bytes) + ", managed " + format_bytes(r.oom->managed_bytes)),
            std::string::npos);
  // Ticks are round binary values: the top is a whole number of power-of-two steps.
  const auto top_bytes = static_cast<std::uint64_t>(bytes_top);
  std::uint64_t step = 1;
  while (step < top_bytes / 5 + (top_bytes % 5 != 0)) step <<= 1;
  EXPECT_EQ(top_bytes % step, 0u);
  EXPECT_NE(svg.find("exact profile"), std::string::npos) << "the profile is named";
}

}  // namespace
}  // namespace clpool::replay
