#include "tools/replay/svg.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "tools/replay/min_capacity.h"

namespace clpool::replay {
namespace {

constexpr double width = 960, height = 440;
constexpr double left = 90, right = 20, top = 50, bottom = 90;
constexpr double plot_w = width - left - right, plot_h = height - top - bottom;

std::string escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t') out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A byte tick step: the smallest power of two that gives at most five steps up to `top`, so
// that every tick is a round binary value (16 MiB, 32 MiB, ...).
std::uint64_t byte_step(std::uint64_t top) {
  std::uint64_t step = 1;
  while (step < top / 5 + (top % 5 != 0)) step <<= 1;
  return step;
}

// An event tick step: 1, 2 or 5 times a power of ten, at most five steps up to `top`.
std::uint64_t event_step(std::uint64_t top) {
  for (std::uint64_t decade = 1;; decade *= 10) {
    for (std::uint64_t m : {1, 2, 5}) {
      if (m * decade * 5 >= top) return m * decade;
    }
  }
}

}  // namespace

std::string render_svg(const replay_report& r, const std::string& title) {
  const bool bounded = r.device.capacity < unbounded_capacity(1);
  std::uint64_t y_max = bounded ? r.device.capacity : 0;
  for (const timeline_point& p : r.timeline) {
    y_max = std::max({y_max, p.managed_bytes, p.device_used_bytes, p.active_bytes});
  }
  if (r.oom) y_max = std::max(y_max, r.oom->device_used_bytes + r.oom->rounded_bytes);
  y_max = std::max<std::uint64_t>(y_max + y_max / 20, 1);
  const std::uint64_t y_step = byte_step(y_max);
  y_max = (y_max + y_step - 1) / y_step * y_step;  // the top is a tick too
  const std::uint64_t events = std::max<std::uint64_t>(r.events, 1);
  const std::uint64_t x_step = event_step(events);
  const double x_max = static_cast<double>((events + x_step - 1) / x_step * x_step);
  const auto X = [&](double e) { return left + plot_w * e / x_max; };
  const auto Y = [&](double b) { return top + plot_h * (1.0 - b / static_cast<double>(y_max)); };

  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out << "<text x=\"" << left << "\" y=\"22\" font-size=\"15\" font-weight=\"bold\">" << escape(title)
      << "</text>\n";
  out << "<text x=\"" << left << "\" y=\"40\" fill=\"#555\">" << escape(to_string(r.config)) << ", "
      << (bounded ? escape(format_bytes(r.device.capacity)) : std::string("unbounded")) << " "
      << escape(r.device.backend) << " device, " << escape(r.device.profile.name) << " profile, "
      << to_string(r.device.semantics) << " allocation; "
      << (r.ok() ? std::string("replayed cleanly") : "out of memory at event " + std::to_string(r.oom->event_index))
      << "</text>\n";
  // Axes and grid: ticks at round values (powers of two in bytes; 1, 2, 5 x 10^k in events).
  out << "<g stroke=\"#ddd\">\n";
  for (std::uint64_t b = 0; b <= y_max; b += y_step) {
    const double y = Y(static_cast<double>(b));
    out << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << num(y) << "\" y2=\""
        << num(y) << "\"/>\n";
  }
  out << "</g>\n<g fill=\"#333\">\n";
  for (std::uint64_t b = 0; b <= y_max; b += y_step) {
    out << "<text x=\"" << left - 6 << "\" y=\"" << num(Y(static_cast<double>(b)) + 4)
        << "\" text-anchor=\"end\">" << escape(format_bytes(b)) << "</text>\n";
  }
  for (std::uint64_t e = 0; static_cast<double>(e) <= x_max; e += x_step) {
    out << "<text x=\"" << num(X(static_cast<double>(e))) << "\" y=\"" << top + plot_h + 18
        << "\" text-anchor=\"middle\">" << e << "</text>\n";
  }
  out << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << top + plot_h + 36
      << "\" text-anchor=\"middle\">event</text>\n</g>\n";
  // The plot area carries its scale, so a reader (or a test) can map coordinates back to bytes.
  out << "<rect id=\"plot\" x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\""
      << plot_h << "\" data-bytes-top=\"" << y_max << "\" fill=\"none\" stroke=\"#888\"/>\n";
  // Series: each timeline point is the maximum over its run of events.
  struct series {
    const char* name;
    const char* colour;
    std::uint64_t timeline_point::*field;
    const char* dash;
  };
  // Device use first: it often equals managed, which is then drawn over it and stays visible.
  const series all[] = {{"device used", "#7f7f7f", &timeline_point::device_used_bytes, "4 3"},
                        {"managed (active rounded + held)", "#2ca02c", &timeline_point::managed_bytes, ""},
                        {"active (requested)", "#1f77b4", &timeline_point::active_bytes, ""},
                        {"held by the pool", "#ff7f0e", &timeline_point::held_bytes, ""}};
  for (const series& s : all) {
    if (!r.config.use_pool && s.field == &timeline_point::held_bytes) continue;
    out << "<polyline fill=\"none\" stroke=\"" << s.colour << "\" stroke-width=\"1.5\"";
    if (*s.dash) out << " stroke-dasharray=\"" << s.dash << "\"";
    out << " points=\"";
    for (const timeline_point& p : r.timeline) {
      out << num(X(static_cast<double>(p.event))) << "," << num(Y(static_cast<double>(p.*s.field))) << " ";
    }
    out << "\"/>\n";
  }
  if (bounded) {
    const double y = Y(static_cast<double>(r.device.capacity));
    out << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << num(y) << "\" y2=\""
        << num(y) << "\" stroke=\"#d62728\" stroke-width=\"1.5\" stroke-dasharray=\"8 4\"/>\n";
    out << "<text x=\"" << left + plot_w - 4 << "\" y=\"" << num(y - 5)
        << "\" text-anchor=\"end\" fill=\"#d62728\">capacity " << escape(format_bytes(r.device.capacity))
        << "</text>\n";
  }
  if (r.oom) {
    // The failure as the report prints it: the dot at the device's use when the request came
    // (id "oom-used"), the request that did not fit as a bar above it (id "oom-request").
    const oom_point& p = *r.oom;
    const double x = X(static_cast<double>(p.event_index));
    out << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << top << "\" y2=\"" << top + plot_h
        << "\" stroke=\"#d62728\" stroke-width=\"1\"/>\n";
    const double used = static_cast<double>(p.device_used_bytes);
    const double need = std::min(used + static_cast<double>(p.rounded_bytes), static_cast<double>(y_max));
    out << "<rect id=\"oom-request\" x=\"" << num(x - 4) << "\" width=\"8\" y=\"" << num(Y(need))
        << "\" height=\"" << num(Y(used) - Y(need)) << "\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\"/>\n";
    out << "<circle id=\"oom-used\" data-bytes=\"" << p.device_used_bytes << "\" cx=\"" << num(x)
        << "\" cy=\"" << num(Y(used)) << "\" r=\"5\" fill=\"#d62728\"/>\n";
    // Two label lines, right of the mark, or left of it in the right half of the plot.
    const bool right_half = x > left + plot_w / 2;
    const std::string tx = num(right_half ? x - 10 : x + 10);
    const char* anchor = right_half ? "end" : "start";
    out << "<text x=\"" << tx << "\" y=\"" << top + 16 << "\" text-anchor=\"" << anchor
        << "\" fill=\"#d62728\">OOM at event " << p.event_index << ": "
        << escape(format_bytes(p.requested_bytes)) << " requested (" << escape(format_bytes(p.rounded_bytes))
        << " rounded), " << escape(format_bytes(p.capacity > p.device_used_bytes ? p.capacity - p.device_used_bytes : 0))
        << " free</text>\n";
    out << "<text x=\"" << tx << "\" y=\"" << top + 32 << "\" text-anchor=\"" << anchor
        << "\" fill=\"#d62728\">held " << escape(format_bytes(p.held_bytes)) << ", managed "
        << escape(format_bytes(p.managed_bytes)) << ", device used " << escape(format_bytes(p.device_used_bytes))
        << "</text>\n";
  }
  // Legend. A series drawn exactly under another is named as such, so its entry is not a puzzle.
  std::size_t same_as_managed = 0;
  for (const timeline_point& p : r.timeline) same_as_managed += p.device_used_bytes == p.managed_bytes;
  const bool used_hidden = !r.timeline.empty() && same_as_managed * 100 >= r.timeline.size() * 99;
  double lx = left;
  const double ly = height - 22;
  for (const series& s : all) {
    if (!r.config.use_pool && s.field == &timeline_point::held_bytes) continue;
    out << "<line x1=\"" << lx << "\" x2=\"" << lx + 24 << "\" y1=\"" << ly - 4 << "\" y2=\"" << ly - 4
        << "\" stroke=\"" << s.colour << "\" stroke-width=\"2\"";
    if (*s.dash) out << " stroke-dasharray=\"" << s.dash << "\"";
    std::string name = s.name;
    if (used_hidden && s.field == &timeline_point::device_used_bytes) name += " (= managed)";
    out << "/><text x=\"" << lx + 30 << "\" y=\"" << ly << "\">" << escape(name) << "</text>\n";
    lx += 60 + 6.5 * static_cast<double>(name.size());
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace clpool::replay
