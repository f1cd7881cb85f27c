#include "tools/replay/report_format.h"

#include <gtest/gtest.h>

#include <regex>

#include "common/byte_size.h"
#include "device_model/profile.h"
#include "tools/replay/svg.h"

namespace clpool::replay_cli {

using replay::alloc_semantics;
using replay::config_result;
using replay::device_spec;
using replay::format_bytes;
using replay::oom_site;
using replay::parse_config;
using replay::replay_events;
using replay::replay_report;
using replay::to_json;

namespace {

using trace::trace_action;
using trace::trace_event;

// Appends an event with the next sequence number.
void append(std::vector<trace_event>& ev, trace_action a, std::uint64_t id, std::uint64_t size) {
  trace_event e;
  e.seq = ev.size();
  e.action = a;
  e.id = id;
  e.size = size;
  ev.push_back(e);
}

std::vector<trace_event> events() {
  std::vector<trace_event> ev;
  const auto add = [&](trace_action a, std::uint64_t id, std::uint64_t size) {
    append(ev, a, id, size);
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
  for (const char* s :
       {"OUT OF MEMORY at event 3", "request rounded to", "active (requested)", "held by the pool",
        "managed by the pool", "device used / capacity", "lost to bin rounding",
        "lost to page rounding", "held in other bins", "pool retries", "peak active",
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

// The capacity at the failure adds up: in the text, in the JSON, with and without a pool, with
// pages, packing and headroom (nvidia's rules), at first use and at allocation, and at the pool's
// limit; the failing request's line says what it needed against what was free.
TEST(ReportFormat, TheCapacityAtTheFailureAddsUp) {
  device_model::device_profile nv;  // the nvidia profile's rules
  nv.name = "nv";
  nv.page = 2 << 20;
  nv.pack_limit = 2 << 20;
  nv.pack_granule = 512;
  nv.headroom = 2688 << 10;
  std::vector<trace_event> ev;
  for (std::uint64_t i = 1; i <= 40; ++i)
    append(ev, trace_action::alloc, i, i % 3 == 0 ? 1 << 20 : (5 << 20) + i);
  for (std::uint64_t i = 1; i <= 40; i += 4) append(ev, trace_action::free, i, 0);
  for (std::uint64_t i = 41; i <= 80; ++i) append(ev, trace_action::alloc, i, (3 << 20) + 7);
  struct setting {
    const char* config;
    alloc_semantics semantics;
    device_model::device_profile profile;
    std::uint64_t capacity;
  };
  for (const setting& s :
       {setting{"pool:lb=4", alloc_semantics::deferred, nv, 160 << 20},
        setting{"nopool", alloc_semantics::deferred, nv, 160 << 20},
        setting{"pool:lb=2", alloc_semantics::immediate, nv, 150 << 20},
        setting{"pool:lb=4,limit=100MiB", alloc_semantics::immediate, nv, 1u << 30},
        setting{"nopool", alloc_semantics::immediate, device_model::device_profile{}, 100 << 20}}) {
    config_result res;
    res.config = parse_config(s.config);
    device_spec d{s.capacity, s.semantics};
    d.profile = s.profile;
    res.replay = replay_events(ev, res.config, d);
    ASSERT_FALSE(res.replay->ok()) << s.config;
    const nlohmann::json j = to_json(*res.replay)["oom"]["capacity_sum"];
    ASSERT_TRUE(j.is_object()) << s.config;
    const auto n = [&j](const char* key) { return j[key].get<std::uint64_t>(); };
    EXPECT_EQ(n("live_requested_bytes") + n("bin_rounding_bytes") + n("held_bytes") +
                  n("page_rounding_bytes") + n("other_bytes"),
              n("device_used_bytes"))
        << s.config;
    EXPECT_EQ(n("other_bytes"), 0u) << s.config;
    EXPECT_EQ(n("device_used_bytes") + n("driver_headroom_bytes") + n("free_to_program_bytes"),
              n("capacity_bytes"))
        << s.config;
    EXPECT_EQ(n("capacity_bytes"), s.capacity);
    EXPECT_EQ(n("driver_headroom_bytes"), s.profile.headroom);
    const std::string text = format_text(res, "t.trace");
    EXPECT_NE(text.find("capacity at the failure, summed:\n"), std::string::npos) << text;
    // "free" is one figure everywhere: the row above the sum names the sum's two figures.
    const auto both = [](std::uint64_t b) { return common::format_bytes_both(b); };
    if (res.replay->oom->site != oom_site::limit) {
      std::string left = both(n("free_to_program_bytes")) + " free to the program";
      if (s.profile.headroom != 0)
        left += " + " + both(n("driver_headroom_bytes")) + " the driver's headroom";
      EXPECT_NE(text.find("  device used / capacity    "), std::string::npos) << text;
      EXPECT_NE(text.find(left + "\n"), std::string::npos) << left << "\n" << text;
      EXPECT_NE(text.find("  + " + both(n("free_to_program_bytes"))), std::string::npos) << text;
    }
    EXPECT_NE(text.find("(" + std::to_string(n("device_used_bytes")) + " bytes)  "),
              std::string::npos)
        << text;
    EXPECT_TRUE(std::regex_search(
        text,
        std::regex("\\n  = [^\\n]*\\(" + std::to_string(s.capacity) + " bytes\\) +capacity\\n")))
        << text;
    const bool pool = res.config.use_pool;
    EXPECT_EQ(text.find("freed blocks the pool held") != std::string::npos, pool) << text;
    if (res.replay->oom->site == oom_site::limit) {
      EXPECT_NE(text.find("past its limit of 100 MiB (104857600 bytes)"), std::string::npos)
          << text;
    } else {
      EXPECT_GT(n("request_device_bytes"), n("free_to_program_bytes")) << s.config;
      EXPECT_NE(text.find("more than is free to the program\n"), std::string::npos) << text;
    }
  }
}

// Every byte of the report's bin rounding is in the sum or in its "not in the sum" line: the bins
// of live blocks no command has used (a trace with first uses) are not in the sum's row.
TEST(ReportFormat, TheUnusedBlocksBinRoundingIsAccountedFor) {
  std::vector<trace_event> ev;
  append(ev, trace_action::alloc, 1, 1000);
  append(ev, trace_action::use, 1, 1000);
  append(ev, trace_action::alloc, 2, 1000);  // never used
  append(ev, trace_action::alloc, 3, 3000);
  append(ev, trace_action::use, 3, 3000);
  config_result res;
  res.config = parse_config("pool:lb=2");
  replay::replayer r(res.config, device_spec{4000, alloc_semantics::deferred});
  r.set_first_use_kinds("buffer");
  for (const trace_event& e : ev) r.apply(e);
  res.replay = r.report();
  ASSERT_TRUE(res.replay->oom.has_value());
  const nlohmann::json j = to_json(*res.replay)["oom"];
  const nlohmann::json& sum = j["capacity_sum"];
  const std::uint64_t unused_rounding = sum["unused_bin_rounding_bytes"];
  EXPECT_GT(unused_rounding, 0u) << sum;
  EXPECT_EQ(sum["bin_rounding_bytes"].get<std::uint64_t>() + unused_rounding,
            j["rounding_loss_bytes"].get<std::uint64_t>())
      << j;
  const std::string text = format_text(res, "t.trace");
  // Blocks 2 and 3 (whose first use failed): 4000 bytes requested.
  EXPECT_NE(
      text.find("  not in the sum: " + common::format_bytes_both(4000) +
                " in live blocks no command has used yet + " +
                common::format_bytes_both(unused_rounding) + ", their rounding to the pool's bins"),
      std::string::npos)
      << text;
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
  for (const char* s :
       {"request rounded to", "active (rounded)", "held by the pool", "managed by the pool",
        "lost to bin rounding", "held in other bins", "pool retries", "peak managed", "hit rate"}) {
    EXPECT_EQ(text.find(s), std::string::npos) << "'" << s << "' in\n" << text;
  }
  for (const char* s :
       {"active  ", "device used / capacity", "lost to page rounding", "peak active"}) {
    EXPECT_NE(text.find(s), std::string::npos) << "missing '" << s << "' in\n" << text;
  }
}

TEST(Svg, SelfContainedWithCapacityAndOom) {
  const replay_report r = replay_events(
      events(), parse_config("pool"), {1ull << 30, alloc_semantics::immediate}, {.timeline = true});
  const std::string svg = render_svg(r, "title with <angle> & ampersand");
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("capacity 1 GiB"), std::string::npos);
  EXPECT_NE(svg.find("OOM at event 3"), std::string::npos);
  EXPECT_NE(svg.find("&lt;angle&gt; &amp;"), std::string::npos);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos) << "no external references";
}

// A request above the device's maximum allocation is refused for its size, as the text and the page
// say, not an out-of-memory.
TEST(Svg, ASizeRefusalIsCaptionedAsOne) {
  device_spec d{1ull << 30, alloc_semantics::immediate};
  d.profile = clpool::device_model::load_profile("pocl");
  d.max_alloc = 1000;
  std::vector<trace_event> e;
  append(e, trace_action::alloc, 1, 500);
  append(e, trace_action::alloc, 2, 5000);
  const replay_report r = replay_events(e, parse_config("nopool"), d, {.timeline = true});
  ASSERT_TRUE(r.oom && r.oom->refused_for_size());
  const std::string svg = render_svg(r, "t");
  EXPECT_NE(svg.find(">Refused for its size at event 1: "), std::string::npos) << svg;
  EXPECT_EQ(svg.find("OOM at event"), std::string::npos) << svg;
}

// The caption's free memory is the capacity sum's, as the text report and the page say it: on a
// device with headroom, the capacity less device used and the driver's headroom.
TEST(Svg, TheFreeMemoryIsWhatTheProgramCouldHaveHad) {
  device_spec d{1ull << 30, alloc_semantics::deferred};
  d.profile.name = "headroom";
  d.profile.headroom = 2688 << 10;
  const replay_report r = replay_events(events(), parse_config("nopool"), d, {.timeline = true});
  ASSERT_TRUE(r.oom.has_value());
  const std::uint64_t free = (1ull << 30) - r.oom->device_used_bytes - d.profile.headroom;
  const std::string svg = render_svg(r, "t");
  EXPECT_NE(svg.find("rounded), " + format_bytes(free) + " free to the program</text>"),
            std::string::npos)
      << svg;
  config_result res;
  res.config = r.config;
  res.replay = r;
  EXPECT_NE(format_text(res, "t").find(common::format_bytes_both(free) + " free to the program"),
            std::string::npos);
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

// The failure's marks in the plot `plot` (marks `prefix`oom-used, `prefix`oom-request) sit at the
// report's figures on that plot's own scale, whose ends are round ticks.
void expect_oom_mark(const std::string& svg, const replay_report& r, const std::string& plot,
                     const std::string& prefix) {
  SCOPED_TRACE(plot);
  const double x = svg_attr(svg, plot, "x"), w = svg_attr(svg, plot, "width");
  const double top = svg_attr(svg, plot, "y"), h = svg_attr(svg, plot, "height");
  const double bytes_lo = svg_attr(svg, plot, "data-bytes-bottom"),
               bytes_hi = svg_attr(svg, plot, "data-bytes-top");
  const double first = svg_attr(svg, plot, "data-event-first"),
               last = svg_attr(svg, plot, "data-event-last");
  const auto x_of = [&](double event) { return x + w * (event - first) / (last - first); };
  const auto y_of = [&](double bytes) {
    return top + h * (1.0 - (bytes - bytes_lo) / (bytes_hi - bytes_lo));
  };
  const auto used = static_cast<double>(r.oom->device_used_bytes);
  EXPECT_EQ(svg_attr(svg, prefix + "oom-used", "data-bytes"), used);
  EXPECT_NEAR(svg_attr(svg, prefix + "oom-used", "cx"),
              x_of(static_cast<double>(r.oom->event_index)), 0.06);
  EXPECT_NEAR(svg_attr(svg, prefix + "oom-used", "cy"), y_of(used), 0.06);
  // The request that did not fit stands on it, as tall as its rounded size.
  EXPECT_NEAR(svg_attr(svg, prefix + "oom-request", "height"),
              h * static_cast<double>(r.oom->rounded_bytes) / (bytes_hi - bytes_lo), 0.11);
  // The failure and the whole request are inside the plot; the events end at the failure, the
  // last event replayed.
  EXPECT_LE(first, static_cast<double>(r.oom->event_index));
  EXPECT_EQ(last, static_cast<double>(r.oom->event_index));
  EXPECT_LE(bytes_lo, used);
  EXPECT_GE(bytes_hi, used + static_cast<double>(r.oom->rounded_bytes));
  EXPECT_GE(bytes_hi, static_cast<double>(r.device.capacity));
  // Round ends: some power-of-two byte step and some 1-2-5 event step divide both ends of the
  // range in at most seven steps (five for the span asked for, widened to whole steps).
  const auto round_ends = [](std::uint64_t lo, std::uint64_t hi,
                             const std::vector<std::uint64_t>& steps) {
    for (const std::uint64_t step : steps) {
      if (lo % step == 0 && hi % step == 0 && (hi - lo) / step <= 7) return true;
    }
    return false;
  };
  std::vector<std::uint64_t> powers_of_two, one_two_fives;
  for (int k = 0; k < 62; ++k) powers_of_two.push_back(std::uint64_t{1} << k);
  for (std::uint64_t decade = 1; decade < 1'000'000'000'000; decade *= 10) {
    for (const std::uint64_t m : {1, 2, 5}) one_two_fives.push_back(m * decade);
  }
  EXPECT_TRUE(round_ends(static_cast<std::uint64_t>(bytes_lo), static_cast<std::uint64_t>(bytes_hi),
                         powers_of_two))
      << bytes_lo << " to " << bytes_hi;
  // The event axis starts at a round tick; it ends at the last event, round or not.
  EXPECT_TRUE(round_ends(static_cast<std::uint64_t>(first), static_cast<std::uint64_t>(first),
                         one_two_fives))
      << first;
}

TEST(Svg, TheOutOfMemoryMarkIsWhereTheReportSays) {
  const replay_report r = replay_events(
      events(), parse_config("pool"), {1ull << 30, alloc_semantics::immediate}, {.timeline = true});
  ASSERT_TRUE(r.oom.has_value());
  const std::string svg = render_svg(r, "t");
  expect_oom_mark(svg, r, "plot", "");
  expect_oom_mark(svg, r, "inset-plot", "inset-");
  EXPECT_EQ(svg_attr(svg, "plot", "data-bytes-bottom"), 0.0) << "the main plot starts at zero";
  // The labels give the report's figures, requested and rounded.
  EXPECT_NE(svg.find(format_bytes(r.oom->requested_bytes) + " requested (" +
                     format_bytes(r.oom->rounded_bytes) + " rounded)"),
            std::string::npos);
  EXPECT_NE(svg.find("held " + format_bytes(r.oom->held_bytes) + ", managed " +
                     format_bytes(r.oom->managed_bytes)),
            std::string::npos);
  EXPECT_NE(svg.find("exact profile"), std::string::npos) << "the profile is named";
}

// A long replay failing near its end: the zoom spans about the last 48 events and the failing
// one, on a byte range of its own, and draws every event there.
TEST(Svg, TheZoomSpansTheEventsBeforeTheFailure) {
  std::vector<trace_event> ev;
  const auto add = [&](trace_action a, std::uint64_t id, std::uint64_t size) {
    append(ev, a, id, size);
  };
  add(trace_action::alloc, 1, 700 << 20);  // a base that lifts the zoom's byte range off zero
  for (std::uint64_t i = 0; i < 1000; ++i) {
    add(trace_action::alloc, 10 + i, (1 + i % 7) << 20);
    add(trace_action::free, 10 + i, 0);
  }
  add(trace_action::alloc, 2, 400 << 20);
  const replay_report r = replay_events(
      ev, parse_config("nopool"), {1ull << 30, alloc_semantics::immediate}, {.timeline = true});
  ASSERT_TRUE(r.oom.has_value());
  ASSERT_EQ(r.oom->event_index, 2001u);
  const std::string svg = render_svg(r, "t");
  expect_oom_mark(svg, r, "plot", "");
  expect_oom_mark(svg, r, "inset-plot", "inset-");
  const double first = svg_attr(svg, "inset-plot", "data-event-first");
  EXPECT_LE(first, 2001.0 - 48);
  EXPECT_GE(first, 2001.0 - 64);
  EXPECT_EQ(svg_attr(svg, "inset-plot", "data-event-last"), 2001.0)
      << "the zoom ends at the failure";
  EXPECT_EQ(svg_attr(svg, "plot", "data-event-last"), 2001.0)
      << "no empty stretch after the last event";
  EXPECT_GT(svg_attr(svg, "inset-plot", "data-bytes-bottom"), 0.0) << "zoomed in bytes too";
  EXPECT_LE(svg_attr(svg, "inset-plot", "data-bytes-bottom"), 700.0 * (1 << 20));
  EXPECT_NE(
      svg.find("Zoom on the failure: events " + std::to_string(static_cast<std::uint64_t>(first)) +
               " to 2001, one point per event"),
      std::string::npos);
}

// The last point of the polyline drawn in `colour` after the element with id `plot`: its y.
double last_point_y(const std::string& svg, const std::string& plot, const std::string& colour) {
  const std::size_t at = svg.find("id=\"" + plot + "\"");
  const std::size_t line = svg.find("<polyline fill=\"none\" stroke=\"" + colour + "\"", at);
  EXPECT_NE(line, std::string::npos) << colour;
  const std::size_t points = svg.find("points=\"", line) + 8;
  const std::string list = svg.substr(points, svg.find('"', points) - points);
  const std::size_t comma = list.rfind(',');
  return std::stod(list.substr(comma + 1));
}

// A small replay on a large device (issue 21): the byte axis fits the data, not the 8 GiB
// capacity, which is said to be above the plot; the event axis ends at the last event.
TEST(Svg, TheAxesFitTheData) {
  const replay_report r = replay_events(
      events(), parse_config("pool"), {8ull << 30, alloc_semantics::immediate}, {.timeline = true});
  ASSERT_TRUE(r.ok());
  const std::string svg = render_svg(r, "t");
  const double top = svg_attr(svg, "plot", "data-bytes-top");
  EXPECT_GE(top, static_cast<double>(r.peak_managed_bytes));
  EXPECT_LE(top, 2.0 * static_cast<double>(r.peak_managed_bytes)) << "the data fills the plot";
  EXPECT_LT(top, 8.0 * (1 << 30));
  EXPECT_NE(svg.find("id=\"capacity-off-plot\""), std::string::npos);
  EXPECT_NE(svg.find("capacity 8 GiB: above the plot"), std::string::npos);
  EXPECT_EQ(svg_attr(svg, "plot", "data-event-last"), 3.0) << "4 events: 0 to 3";
  // A capacity near the data is drawn as a line on the plot.
  const replay_report near =
      replay_events(events(), parse_config("pool"), {1200ull << 20, alloc_semantics::immediate},
                    {.timeline = true});
  const std::string near_svg = render_svg(near, "t");
  EXPECT_EQ(near_svg.find("capacity-off-plot"), std::string::npos);
  EXPECT_NE(near_svg.find(">capacity 1.17 GiB</text>"), std::string::npos);
  EXPECT_GE(svg_attr(near_svg, "plot", "data-bytes-top"), 1200.0 * (1 << 20));
}

// A request that fails at first use (deferred device): the zoom's lines end at the figures its
// label gives, which leave the failed request out (issue 21: the lines included it).
TEST(Svg, TheZoomsLinesAgreeWithItsLabel) {
  std::vector<trace_event> ev;
  append(ev, trace_action::alloc, 1, 600 << 20);
  append(ev, trace_action::alloc, 2, 600 << 20);
  const replay_report r = replay_events(
      ev, parse_config("pool"), {1ull << 30, alloc_semantics::deferred}, {.timeline = true});
  ASSERT_TRUE(r.oom.has_value());
  ASSERT_EQ(r.oom->site, oom_site::first_use);
  const std::string svg = render_svg(r, "t");
  ASSERT_NE(svg.find("managed " + format_bytes(r.oom->managed_bytes)), std::string::npos);
  const double top = svg_attr(svg, "inset-plot", "y"), h = svg_attr(svg, "inset-plot", "height");
  const double lo = svg_attr(svg, "inset-plot", "data-bytes-bottom"),
               hi = svg_attr(svg, "inset-plot", "data-bytes-top");
  const auto y_of = [&](std::uint64_t b) {
    return top + h * (1.0 - (static_cast<double>(b) - lo) / (hi - lo));
  };
  EXPECT_NEAR(last_point_y(svg, "inset-plot", "#2ca02c"), y_of(r.oom->managed_bytes), 0.06)
      << "managed";
  EXPECT_NEAR(last_point_y(svg, "inset-plot", "#1f77b4"), y_of(r.oom->active_bytes), 0.06)
      << "active";
  EXPECT_NEAR(last_point_y(svg, "inset-plot", "#ff7f0e"), y_of(r.oom->held_bytes), 0.06) << "held";
}

TEST(Svg, NoFailureNoZoom) {
  const replay_report r = replay_events(
      events(), parse_config("pool"), {4ull << 30, alloc_semantics::immediate}, {.timeline = true});
  ASSERT_TRUE(r.ok());
  const std::string svg = render_svg(r, "t");
  EXPECT_NE(svg.find("id=\"plot\""), std::string::npos);
  EXPECT_EQ(svg.find("inset"), std::string::npos);
  EXPECT_EQ(svg.find("Zoom"), std::string::npos);
  EXPECT_NE(svg.find("height=\"440\""), std::string::npos) << "no room left for a zoom";
}

}  // namespace
}  // namespace clpool::replay_cli
