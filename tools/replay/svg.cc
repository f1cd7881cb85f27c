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

}  // namespace

std::string render_svg(const replay_report& r, const std::string& title) {
  const bool bounded = r.device.capacity < unbounded_capacity(1);
  std::uint64_t y_max = bounded ? r.device.capacity : 0;
  for (const timeline_point& p : r.timeline) {
    y_max = std::max({y_max, p.managed_bytes, p.device_used_bytes, p.active_bytes});
  }
  if (r.oom) y_max = std::max(y_max, r.oom->device_used_bytes + r.oom->rounded_bytes);
  y_max = std::max<std::uint64_t>(y_max + y_max / 20, 1);
  const double x_max = static_cast<double>(std::max<std::uint64_t>(r.events, 1));
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
      << (bounded ? escape(format_bytes(r.device.capacity)) : std::string("unbounded")) << " device, "
      << to_string(r.device.semantics) << " allocation; "
      << (r.ok() ? std::string("replayed cleanly") : "out of memory at event " + std::to_string(r.oom->event_index))
      << "</text>\n";
  // Axes and grid: five byte ticks, five event ticks.
  out << "<g stroke=\"#ddd\">\n";
  for (int i = 0; i <= 5; ++i) {
    const double b = static_cast<double>(y_max) * i / 5;
    out << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << num(Y(b)) << "\" y2=\""
        << num(Y(b)) << "\"/>\n";
  }
  out << "</g>\n<g fill=\"#333\">\n";
  for (int i = 0; i <= 5; ++i) {
    const double b = static_cast<double>(y_max) * i / 5;
    out << "<text x=\"" << left - 6 << "\" y=\"" << num(Y(b) + 4) << "\" text-anchor=\"end\">"
        << escape(format_bytes(static_cast<std::uint64_t>(b))) << "</text>\n";
    const double e = x_max * i / 5;
    out << "<text x=\"" << num(X(e)) << "\" y=\"" << top + plot_h + 18 << "\" text-anchor=\"middle\">"
        << static_cast<std::uint64_t>(e) << "</text>\n";
  }
  out << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << top + plot_h + 36
      << "\" text-anchor=\"middle\">event</text>\n</g>\n";
  out << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\"" << plot_h
      << "\" fill=\"none\" stroke=\"#888\"/>\n";
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
    const oom_point& p = *r.oom;
    const double x = X(static_cast<double>(p.event_index));
    out << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << top << "\" y2=\"" << top + plot_h
        << "\" stroke=\"#d62728\" stroke-width=\"1\"/>\n";
    const double need = static_cast<double>(p.device_used_bytes + p.rounded_bytes);
    out << "<circle cx=\"" << num(x) << "\" cy=\"" << num(Y(std::min(need, static_cast<double>(y_max))))
        << "\" r=\"6\" fill=\"#d62728\"/>\n";
    // Label to the right of the mark, or to its left in the right half of the plot.
    const bool right_half = x > left + plot_w / 2;
    out << "<text x=\"" << num(right_half ? x - 10 : x + 10) << "\" y=\"" << top + 16
        << "\" text-anchor=\"" << (right_half ? "end" : "start")
        << "\" fill=\"#d62728\">OOM at event " << p.event_index << ": "
        << escape(format_bytes(p.rounded_bytes)) << " requested, "
        << escape(format_bytes(p.capacity > p.device_used_bytes ? p.capacity - p.device_used_bytes : 0))
        << " free</text>\n";
  }
  // Legend.
  double lx = left;
  const double ly = height - 22;
  for (const series& s : all) {
    if (!r.config.use_pool && s.field == &timeline_point::held_bytes) continue;
    out << "<line x1=\"" << lx << "\" x2=\"" << lx + 24 << "\" y1=\"" << ly - 4 << "\" y2=\"" << ly - 4
        << "\" stroke=\"" << s.colour << "\" stroke-width=\"2\"";
    if (*s.dash) out << " stroke-dasharray=\"" << s.dash << "\"";
    out << "/><text x=\"" << lx + 30 << "\" y=\"" << ly << "\">" << s.name << "</text>\n";
    lx += 60 + 6.5 * static_cast<double>(std::string(s.name).size());
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace clpool::replay
