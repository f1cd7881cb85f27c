#include "tools/replay/svg.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>
#include <vector>

#include "common/text_escape.h"
#include "replay/min_capacity.h"
#include "tools/replay/report_format.h"

namespace clpool::replay_cli {

using replay::format_bytes;
using replay::oom_point;
using replay::replay_report;
using replay::timeline_point;
using replay::to_string;
using replay::unbounded_capacity;

namespace {

constexpr double width = 960, main_height = 440;
constexpr double left = 90, right = 20, top = 50, bottom = 90;
constexpr double plot_w = width - left - right, plot_h = main_height - top - bottom;
// The zoom on the failure sits below the main plot and its legend.
constexpr double inset_top = main_height + 45, inset_h = 200, inset_height = inset_h + 95;
// Events shown in the zoom before the failing one; replay keeps a few more (timeline_tail), so the
// window can start at a round event number.
constexpr std::uint64_t inset_events = 48;

// SVG's rule for text (common/text_escape.h): the printable form, then entities.
std::string escape(const std::string& s) { return common::escape_xml(s); }

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A byte tick step: the smallest power of two that gives at most five steps over `span`, so
// that every tick is a round binary value (16 MiB, 32 MiB, ...).
std::uint64_t byte_step(std::uint64_t span) {
  std::uint64_t step = 1;
  while (step < span / 5 + (span % 5 != 0)) step <<= 1;
  return step;
}

// An event tick step: 1, 2 or 5 times a power of ten, at most five steps over `span`.
std::uint64_t event_step(std::uint64_t span) {
  for (std::uint64_t decade = 1;; decade *= 10) {
    for (std::uint64_t m : {1, 2, 5}) {
      if (m * decade * 5 >= span) return m * decade;
    }
  }
}

// [lo, hi] widened to whole steps of `step_for(hi - lo)`, so both ends are ticks.
struct axis {
  std::uint64_t lo = 0, hi = 1, step = 1;
};

axis round_axis(std::uint64_t lo, std::uint64_t hi, std::uint64_t (*step_for)(std::uint64_t)) {
  hi = std::max(hi, lo + 1);
  axis a;
  a.step = step_for(hi - lo);
  a.lo = lo / a.step * a.step;
  a.hi = (hi + a.step - 1) / a.step * a.step;
  return a;
}

// An event axis: it starts at a round tick at or before `lo` and ends at `last`, the last event
// drawn, so that no empty stretch follows the data; ticks are at whole steps up to it.
axis event_axis(std::uint64_t lo, std::uint64_t last) {
  last = std::max(last, lo + 1);
  axis a;
  a.step = event_step(last - lo);
  a.lo = lo / a.step * a.step;
  a.hi = last;
  return a;
}

// The points as drawn: the failing event's own point (the zoom's last) shows the figures the
// failure's label gives. The replay samples after the request, and a request that failed at
// first use is still counted in the pool's figures there; the label, like the report, leaves
// the failed request out, and the lines must agree with it.
std::vector<timeline_point> with_failure_figures(std::vector<timeline_point> points,
                                                 const oom_point& o) {
  for (timeline_point& t : points) {
    if (t.event != o.event_index) continue;
    t.active_bytes = o.active_bytes;
    t.held_bytes = o.held_bytes;
    t.managed_bytes = o.managed_bytes;
    t.device_used_bytes = o.device_used_bytes;
  }
  return points;
}

// One plot: where it is on the page and the events and bytes it spans.
struct panel {
  std::string id;  // the plot rectangle's id; its marks' ids start with `mark_prefix`
  std::string mark_prefix;
  double x, y, w, h;
  axis events, bytes;

  double X(double e) const {
    return x +
           w * (e - static_cast<double>(events.lo)) / static_cast<double>(events.hi - events.lo);
  }
  double Y(double b) const {
    return y + h * (1.0 -
                    (b - static_cast<double>(bytes.lo)) / static_cast<double>(bytes.hi - bytes.lo));
  }
};

// Grid, tick labels, the "event" label and the plot rectangle, which carries its ranges so a
// reader (or a test) can map coordinates back to events and bytes.
void draw_axes(std::ostringstream& out, const panel& p) {
  out << "<g stroke=\"#ddd\">\n";
  for (std::uint64_t b = p.bytes.lo; b <= p.bytes.hi; b += p.bytes.step) {
    const double y = p.Y(static_cast<double>(b));
    out << "<line x1=\"" << p.x << "\" x2=\"" << p.x + p.w << "\" y1=\"" << num(y) << "\" y2=\""
        << num(y) << "\"/>\n";
  }
  out << "</g>\n<g fill=\"#333\">\n";
  for (std::uint64_t b = p.bytes.lo; b <= p.bytes.hi; b += p.bytes.step) {
    out << "<text x=\"" << p.x - 6 << "\" y=\"" << num(p.Y(static_cast<double>(b)) + 4)
        << "\" text-anchor=\"end\">" << escape(format_bytes(b)) << "</text>\n";
  }
  for (std::uint64_t e = p.events.lo; e <= p.events.hi; e += p.events.step) {
    out << "<text x=\"" << num(p.X(static_cast<double>(e))) << "\" y=\"" << p.y + p.h + 18
        << "\" text-anchor=\"middle\">" << e << "</text>\n";
  }
  out << "<text x=\"" << p.x + p.w / 2 << "\" y=\"" << p.y + p.h + 36
      << "\" text-anchor=\"middle\">event</text>\n</g>\n";
  out << "<rect id=\"" << p.id << "\" x=\"" << p.x << "\" y=\"" << p.y << "\" width=\"" << p.w
      << "\" height=\"" << p.h << "\" data-bytes-bottom=\"" << p.bytes.lo << "\" data-bytes-top=\""
      << p.bytes.hi << "\" data-event-first=\"" << p.events.lo << "\" data-event-last=\""
      << p.events.hi << "\" fill=\"none\" stroke=\"#888\"/>\n";
}

struct series {
  const char* name;
  const char* colour;
  std::uint64_t timeline_point::*field;
  const char* dash;
};

// Device use first: it often equals managed, which is then drawn over it and stays visible.
constexpr series all_series[] = {
    {"device used", "#7f7f7f", &timeline_point::device_used_bytes, "4 3"},
    {"managed (active rounded + held)", "#2ca02c", &timeline_point::managed_bytes, ""},
    {"active (requested)", "#1f77b4", &timeline_point::active_bytes, ""},
    {"held by the pool", "#ff7f0e", &timeline_point::held_bytes, ""}};

bool drawn(const series& s, const replay_report& r) {
  return r.config.use_pool || s.field != &timeline_point::held_bytes;
}

void draw_series(std::ostringstream& out, const panel& p, const replay_report& r,
                 const std::vector<timeline_point>& points) {
  for (const series& s : all_series) {
    if (!drawn(s, r)) continue;
    out << "<polyline fill=\"none\" stroke=\"" << s.colour << "\" stroke-width=\"1.5\"";
    if (*s.dash) out << " stroke-dasharray=\"" << s.dash << "\"";
    out << " points=\"";
    for (const timeline_point& t : points) {
      out << num(p.X(static_cast<double>(t.event))) << ","
          << num(p.Y(static_cast<double>(t.*s.field))) << " ";
    }
    out << "\"/>\n";
  }
}

// The capacity line, labelled at its right end, or at its left end when `oom_event` (if any) is
// drawn near the right edge, where the label would cover the mark.
void draw_capacity(std::ostringstream& out, const panel& p, std::uint64_t capacity,
                   const std::optional<oom_point>& oom) {
  if (capacity > p.bytes.hi) {
    // Far above the data: drawing it would flatten the data into the bottom of the plot.
    out << "<text id=\"" << p.mark_prefix << "capacity-off-plot\" x=\"" << p.x + p.w - 4
        << "\" y=\"" << p.y + 14 << "\" text-anchor=\"end\" fill=\"#d62728\">capacity "
        << escape(format_bytes(capacity)) << ": above the plot</text>\n";
    return;
  }
  const double y = p.Y(static_cast<double>(capacity));
  out << "<line x1=\"" << p.x << "\" x2=\"" << p.x + p.w << "\" y1=\"" << num(y) << "\" y2=\""
      << num(y) << "\" stroke=\"#d62728\" stroke-width=\"1.5\" stroke-dasharray=\"8 4\"/>\n";
  const bool at_left = oom && p.X(static_cast<double>(oom->event_index)) > p.x + p.w - 120;
  out << "<text x=\"" << (at_left ? p.x + 4 : p.x + p.w - 4) << "\" y=\"" << num(y - 5)
      << "\" text-anchor=\"" << (at_left ? "start" : "end") << "\" fill=\"#d62728\">capacity "
      << escape(format_bytes(capacity)) << "</text>\n";
}

// The failure as the report prints it: the dot at the device's use when the request came (id
// PREFIX"oom-used"), the request that did not fit as a bar above it (PREFIX"oom-request"), and
// two label lines right of the mark, or left of it in the right half of the plot. What was free
// is the capacity sum's figure (result.h capacity_sum_at), as the text report and the page say it:
// what the program could still have had, the driver's headroom left out; none where there is no
// sum (an unbounded device, a request refused for its size).
void draw_oom(std::ostringstream& out, const panel& p, const replay_report& r) {
  const oom_point& o = *r.oom;
  const double x = p.X(static_cast<double>(o.event_index));
  out << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << p.y << "\" y2=\""
      << p.y + p.h << "\" stroke=\"#d62728\" stroke-width=\"1\"/>\n";
  const double used = static_cast<double>(o.device_used_bytes);
  const double need =
      std::min(used + static_cast<double>(o.rounded_bytes), static_cast<double>(p.bytes.hi));
  out << "<rect id=\"" << p.mark_prefix << "oom-request\" x=\"" << num(x - 4)
      << "\" width=\"8\" y=\"" << num(p.Y(need)) << "\" height=\"" << num(p.Y(used) - p.Y(need))
      << "\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\"/>\n";
  out << "<circle id=\"" << p.mark_prefix << "oom-used\" data-bytes=\"" << o.device_used_bytes
      << "\" cx=\"" << num(x) << "\" cy=\"" << num(p.Y(used)) << "\" r=\"5\" fill=\"#d62728\"/>\n";
  const bool right_half = x > p.x + p.w / 2;
  const std::string tx = num(right_half ? x - 10 : x + 10);
  const char* anchor = right_half ? "end" : "start";
  out << "<text x=\"" << tx << "\" y=\"" << p.y + 16 << "\" text-anchor=\"" << anchor
      << "\" fill=\"#d62728\">" << (o.refused_for_size() ? "Refused for its size" : "OOM")
      << " at event " << o.event_index << ": " << escape(format_bytes(o.requested_bytes))
      << " requested (" << escape(format_bytes(o.rounded_bytes)) << " rounded)";
  if (const auto sum = replay::capacity_sum_at(o, r.device, r.config.use_pool)) {
    out << ", " << escape(format_bytes(sum->free)) << " " << free_to_program_name;
  }
  out << "</text>\n";
  out << "<text x=\"" << tx << "\" y=\"" << p.y + 32 << "\" text-anchor=\"" << anchor
      << "\" fill=\"#d62728\">held " << escape(format_bytes(o.held_bytes)) << ", managed "
      << escape(format_bytes(o.managed_bytes)) << ", device used "
      << escape(format_bytes(o.device_used_bytes)) << "</text>\n";
}

// The zoom on the failure: the last inset_events events before it and the failing one, one point
// per event, with a byte range from the lowest series there to the top of the failed request.
void draw_inset(std::ostringstream& out, const replay_report& r, bool bounded) {
  const oom_point& o = *r.oom;
  const std::uint64_t first =
      std::max(o.event_index >= inset_events ? o.event_index - inset_events : 0,
               r.timeline_tail.front().event);
  panel p{"inset-plot", "inset-", left, inset_top, plot_w, inset_h, {}, {}};
  p.events = event_axis(first, o.event_index);
  // The axis starts at a round event at or before `first`: the tail usually reaches back to it.
  std::vector<timeline_point> points;
  for (const timeline_point& t : r.timeline_tail) {
    if (t.event >= p.events.lo && t.event <= o.event_index) points.push_back(t);
  }
  points = with_failure_figures(std::move(points), o);
  std::uint64_t lo = o.device_used_bytes, hi = o.device_used_bytes + o.rounded_bytes;
  if (bounded) {
    lo = std::min(lo, r.device.capacity);
    hi = std::max(hi, r.device.capacity);
  }
  for (const timeline_point& t : points) {
    for (const series& s : all_series) {
      if (!drawn(s, r)) continue;
      lo = std::min(lo, t.*s.field);
      hi = std::max(hi, t.*s.field);
    }
  }
  const std::uint64_t margin = (hi - lo) / 20;
  p.bytes = round_axis(lo > margin ? lo - margin : 0, hi + margin, byte_step);
  out << "<text x=\"" << left << "\" y=\"" << inset_top - 12
      << "\" font-weight=\"bold\">Zoom on the failure: events " << p.events.lo << " to "
      << o.event_index << ", one point per event</text>\n";
  draw_axes(out, p);
  draw_series(out, p, r, points);
  if (bounded) draw_capacity(out, p, r.device.capacity, r.oom);
  draw_oom(out, p, r);
}

}  // namespace

std::string render_svg(const replay_report& r, const std::string& title) {
  const bool bounded = r.device.capacity < unbounded_capacity(1);
  const std::vector<timeline_point> timeline =
      r.oom ? with_failure_figures(r.timeline, *r.oom) : r.timeline;
  // The byte axis fits the data (every series drawn, and the failed request on top of the
  // device's use); the capacity joins it when it is near the data, else it is said to be above.
  std::uint64_t data_max = 0, last_event = r.events > 0 ? r.events - 1 : 0;
  for (const timeline_point& p : timeline) {
    data_max =
        std::max({data_max, p.managed_bytes, p.device_used_bytes, p.active_bytes, p.held_bytes});
    last_event = std::max(last_event, p.event);
  }
  if (r.oom) {
    data_max = std::max(data_max, r.oom->device_used_bytes + r.oom->rounded_bytes);
    last_event = std::max(last_event, r.oom->event_index);
  }
  std::uint64_t y_max = data_max + data_max / 20;
  if (bounded && r.device.capacity <= data_max + data_max / 2)
    y_max = std::max(y_max, r.device.capacity);
  y_max = std::max<std::uint64_t>(y_max, 1);
  const panel main_plot{"plot",
                        "",
                        left,
                        top,
                        plot_w,
                        plot_h,
                        event_axis(0, last_event),
                        round_axis(0, y_max, byte_step)};
  const bool inset = r.oom.has_value() && !r.timeline_tail.empty();
  const double height = main_height + (inset ? inset_height : 0);

  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out << "<text x=\"" << left << "\" y=\"22\" font-size=\"15\" font-weight=\"bold\">"
      << escape(title) << "</text>\n";
  out << "<text x=\"" << left << "\" y=\"40\" fill=\"#555\">" << escape(to_string(r.config)) << ", "
      << (bounded ? escape(format_bytes(r.device.capacity)) : std::string("unbounded")) << " "
      << escape(r.device.backend) << " device, "
      << escape(r.device.measured ? r.device.measured->name + " (measured)"
                                  : r.device.profile.name + " profile")
      << ", " << to_string(r.device.semantics) << " allocation; "
      << (r.ok() ? std::string("replayed cleanly")
                 : "out of memory at event " + std::to_string(r.oom->event_index))
      << "</text>\n";
  // Ticks at round values (powers of two in bytes; 1, 2, 5 x 10^k in events). Each timeline
  // point is the maximum over its run of events.
  draw_axes(out, main_plot);
  draw_series(out, main_plot, r, timeline);
  if (bounded) draw_capacity(out, main_plot, r.device.capacity, r.oom);
  if (r.oom) draw_oom(out, main_plot, r);
  // Legend, for both plots. A series drawn exactly under another is named as such, so its entry
  // is not a puzzle.
  std::size_t same_as_managed = 0;
  for (const timeline_point& p : r.timeline)
    same_as_managed += p.device_used_bytes == p.managed_bytes;
  const bool used_hidden = !r.timeline.empty() && same_as_managed * 100 >= r.timeline.size() * 99;
  double lx = left;
  const double ly = main_height - 22;
  for (const series& s : all_series) {
    if (!drawn(s, r)) continue;
    out << "<line x1=\"" << lx << "\" x2=\"" << lx + 24 << "\" y1=\"" << ly - 4 << "\" y2=\""
        << ly - 4 << "\" stroke=\"" << s.colour << "\" stroke-width=\"2\"";
    if (*s.dash) out << " stroke-dasharray=\"" << s.dash << "\"";
    std::string name = s.name;
    if (used_hidden && s.field == &timeline_point::device_used_bytes) name += " (= managed)";
    out << "/><text x=\"" << lx + 30 << "\" y=\"" << ly << "\">" << escape(name) << "</text>\n";
    lx += 60 + 6.5 * static_cast<double>(name.size());
  }
  if (inset) draw_inset(out, r, bounded);
  out << "</svg>\n";
  return out.str();
}

}  // namespace clpool::replay_cli
