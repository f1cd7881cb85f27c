#include "tools/probe/report.h"

#include <algorithm>
#include <cstdio>

#include "common/byte_size.h"
#include "common/cl_status.h"
#include "common/text_escape.h"
#include "device_model/profile.h"

namespace clpool::probe {
namespace {

using common::format_bytes_exact;

std::string with_bytes(std::uint64_t v) {
  const std::string h = format_bytes_exact(v);
  return h == std::to_string(v) + " B" ? h : std::to_string(v) + " B (" + h + ")";
}

std::string status_text(std::int32_t s) {
  if (s == 0) return "created (released untouched)";
  const std::string name = common::status_name(s);
  return name == "CL_UNKNOWN_ERROR" ? std::to_string(s) : std::to_string(s) + " " + name;
}

// A device name is whatever the driver says: shown in the text rule (common/text_escape.h), so
// no control character reaches a comment line or the terminal.
std::string printable(std::string_view s) { return common::escape_text(s); }

// The page and packing findings (after the fill refused something).
void add_page_evidence(std::vector<std::string>& e, const measurement& m) {
  if (m.page) {
    const std::uint64_t x = m.page_window, p = *m.page;
    e.push_back("page: " + with_bytes(p) + ": in a free window of " + format_bytes_exact(x) + ", " +
                std::to_string(x - p) + " B then 1 B fit" +
                (p > 1 ? ", " + std::to_string(x - p / 2) + " B then 1 B do not" : ""));
  }
  if (m.pack_seen) {
    const std::uint64_t p = *m.page;
    if (*m.pack_seen == 0) {
      e.push_back("packing: none seen: with one page free, 1 B then 1 B do not both fit");
    } else {
      e.push_back(
          "pack limit: with one page free, " + std::to_string(*m.pack_seen) + " B then 1 B fit, " +
          std::to_string(*m.pack_seen + 1) + " B then 1 B do not" +
          (*m.pack_limit == p ? " (page - granule: every request up to the page is shared)" : ""));
      const std::uint64_t g = *m.pack_granule, f = m.granule_fill_size;
      std::string why = "the pack limit is 1 B";
      if (f > 0) {
        why = std::to_string(m.granule_fill) + " packed buffer(s) of " + format_bytes_exact(f) +
              " leave " + format_bytes_exact(f) + " of a page: " +
              (2 * g <= f ? std::to_string(f - 2 * g + 1) + " B then 1 B fit, " : std::string()) +
              std::to_string(f - g + 1) + " B then 1 B do not";
      }
      e.push_back("pack granule: " + with_bytes(g) + " (" + why + ")");
    }
  }
}

// The evidence known once max alloc is measured, before the fill: the device, its free memory and
// max alloc. One finding per line, shared by the report and the profile file's header.
std::vector<std::string> evidence_head(const probe_context& c, const measurement& m) {
  std::vector<std::string> e;
  e.push_back("device: " + printable(c.device_name) + " (platform " +
              std::to_string(c.platform_index) + " '" + printable(c.platform_name) + "', device " +
              std::to_string(c.device_index) + ", vendor " + printable(c.vendor) + ", driver " +
              printable(c.driver_version) + ", " + printable(c.device_version) + ")");
  e.push_back("free memory at start: " + with_bytes(c.free_at_start) +
              (c.free_source.empty()
                   ? ", assumed: CL_DEVICE_GLOBAL_MEM_SIZE (the device has no free-memory query)"
                   : ", from " + c.free_source + " (CL_DEVICE_GLOBAL_MEM_SIZE " +
                         with_bytes(c.global_mem) + ")"));
  if (c.free_before_context) {
    const std::uint64_t before = *c.free_before_context;
    e.push_back("  read with the probe's context open; before it: " + with_bytes(before) +
                (before >= c.free_at_start
                     ? " (the context took " + with_bytes(before - c.free_at_start) + ")"
                     : std::string(" (more was free with the context open)")));
  }
  e.push_back("max alloc: CL_DEVICE_MAX_MEM_ALLOC_SIZE " + with_bytes(c.max_alloc) +
              "; creating it + 1 byte: " + status_text(m.max_alloc_status) + " -> " +
              (m.max_alloc_enforced ? "enforced" : "not enforced"));
  return e;
}

// The headroom's bound: usable memory is whole pages, so every headroom within a page below the
// one written gives the same fill; the probe writes the upper bound.
std::string headroom_bound(const measurement& m) {
  const std::uint64_t p = *m.page;
  if (m.headroom == 0) {
    return "  headroom bound: exactly 0 B: the fill took all the free memory at start (usable "
           "memory is whole " +
           format_bytes_exact(p) + " pages)";
  }
  const std::uint64_t low = m.headroom >= p ? m.headroom - p + 1 : 0;
  return "  headroom bound: any headroom from " + with_bytes(low) + " to " +
         format_bytes_exact(m.headroom) + " gives this fill (usable memory is whole " +
         format_bytes_exact(p) + " pages); the profile says the upper bound";
}

// The evidence from the fill on, and what was not measured.
std::vector<std::string> evidence_tail(const probe_context& c, const measurement& m) {
  std::vector<std::string> e;
  std::string fill;
  for (const auto& [size, n] : m.fill)
    fill += (fill.empty() ? "" : " + ") + std::to_string(n) + " x " + format_bytes_exact(size);
  e.push_back("fill: " + (fill.empty() ? std::string("nothing") : fill) + " = " +
              with_bytes(m.usable) + " accepted" +
              (m.smallest_refused != 0
                   ? "; the last refusal was " + format_bytes_exact(m.smallest_refused)
                   : "; never refused (cap --max-bytes " + format_bytes_exact(c.max_bytes) + ")"));
  if (c.free_at_full) {
    // A mismatch means the driver commits something besides the buffers (or someone else
    // allocated meanwhile): the headroom is then not the driver's alone.
    const std::uint64_t expected = c.free_at_start - std::min(c.free_at_start, m.usable);
    e.push_back("cross-check: " + c.free_source + " said " + with_bytes(*c.free_at_full) +
                " free when the fill was fullest (" +
                (*c.free_at_full == expected
                     ? std::string("= free at start - fill")
                     : "MISMATCH: free at start - fill = " + std::to_string(expected)) +
                ")");
  }
  if (m.refused) {
    e.push_back("out of memory: at " + std::string(device_model::to_string(m.oom_at)) + ", " +
                m.oom_call + " " + status_text(m.oom_status));
    for (const std::string& call : c.first_use_calls)
      e.push_back("  first use of a buffer with no room: " + call);
    if (m.svm_oom_at) {
      e.push_back("svm: out of memory at " + std::string(device_model::to_string(*m.svm_oom_at)) +
                  ", " + m.svm_call + " (an SVM block of " +
                  common::format_bytes_both(std::max<std::uint64_t>(m.smallest_refused, 1)) +
                  " with the device full)");
    } else if (!m.svm_note.empty()) {
      e.push_back("svm: not measured (svm_oom_at = creation written): " + m.svm_note);
    }
    e.push_back("usable: " + with_bytes(m.usable) + " (the largest total accepted); headroom: " +
                (m.headroom_measured ? "free at start - usable = " + with_bytes(m.headroom)
                                     : std::string("not known")));
    if (m.headroom_measured && m.page && *m.page > 1) e.push_back(headroom_bound(m));
  }
  if (!m.refused) {
    e.push_back(
        "out of memory: never seen, so where and how this device reports it is unknown; usable "
        "memory, headroom, page and packing are not measured");
  }
  add_page_evidence(e, m);
  e.push_back(
      "commands_finish: not measured (no probe can see when a device runs queued commands); "
      "promptly written, as NVIDIA's driver runs them; for a device that runs them only when the "
      "program waits (the built-in pocl profile says so of POCL), write at_wait by hand");
  char took[64];
  std::snprintf(took, sizeof took, "%.3f s", c.seconds);
  e.push_back("allocations: " + std::to_string(m.allocations) + " (create + first use), in " +
              took);
  return e;
}

}  // namespace

std::string profile_name_for(const std::string& device_name) {
  std::string s;
  for (char ch : device_name) {
    const bool ok =
        std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.';
    if (s.size() < 64) s += ok ? ch : '_';
  }
  if (s.empty()) return "probed";
  for (const std::string& builtin : device_model::builtin_profile_names()) {
    if (s == builtin) return s + "-probed";
  }
  return s;
}

std::string format_report_head(const probe_context& c, const measurement& m) {
  std::string out;
  for (const std::string& line : evidence_head(c, m)) out += line + "\n";
  return out;
}

std::string format_report_tail(const probe_context& c, const measurement& m) {
  std::string out;
  for (const std::string& line : evidence_tail(c, m)) out += line + "\n";
  if (!m.measured_all()) out += "incomplete: " + incomplete_text(m) + "\n";
  return out;
}

std::string format_report(const probe_context& c, const measurement& m) {
  return format_report_head(c, m) + format_report_tail(c, m);
}

std::string incomplete_text(const measurement& m) {
  if (!m.complete) return m.incomplete;
  std::string keys;
  for (std::string_view k : m.unmeasured()) keys += (keys.empty() ? "" : ", ") + std::string(k);
  return keys.empty() ? "" : "not measured: " + keys + " (above); every other key was measured";
}

bool written_by_probe(std::string_view first_line) {
  return first_line.substr(0, profile_marker.size()) == profile_marker;
}

std::string format_profile_file(const probe_context& c, const measurement& m,
                                const device_profile& p) {
  std::string out = std::string(profile_marker) + " on " + c.date + " (tools/probe/README.md).\n";
  for (const std::string& line : evidence_head(c, m)) out += "# " + line + "\n";
  for (const std::string& line : evidence_tail(c, m)) out += "# " + line + "\n";
  if (!m.measured_all()) {
    std::string exact;  // keys at the exact profile's values
    for (std::string_view k : m.unmeasured()) exact += (exact.empty() ? "" : ", ") + std::string(k);
    out += "# INCOMPLETE (written with --force): " + printable(incomplete_text(m)) + "\n";
    if (!exact.empty()) out += "# Not measured: " + exact + ", so the exact profile's values.\n";
  }
  out +=
      "# Never measured: commands_finish, written promptly (NVIDIA's); at_wait for a device "
      "that runs queued commands only when the program waits.\n";
  return out + format_profile(p);
}

std::string format_comparison(std::string_view label_a, const device_profile& a,
                              std::string_view label_b, const device_profile& b) {
  const std::vector<device_model::profile_field> fa = device_model::profile_fields(a),
                                                 fb = device_model::profile_fields(b);
  // Names and labels are what a driver or a user wrote: control characters are shown as '?'.
  const auto row = [](std::string_view key, std::string_view x, std::string_view y,
                      std::string_view verdict) {
    const auto pad = [](std::string s, std::size_t width) {
      return s.size() < width ? s + std::string(width - s.size(), ' ') : s + " ";
    };
    std::string line = pad(std::string(key), 20) + " " + pad(printable(std::string(x)), 28) + " " +
                       pad(printable(std::string(y)), 28) + " " + std::string(verdict);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  // A probe writes the headroom rounded up to where the last whole page ends (observable()): two
  // headrooms less than a page apart may be one device measured at two free sizes.
  const std::uint64_t gap =
      a.headroom > b.headroom ? a.headroom - b.headroom : b.headroom - a.headroom;
  const bool within_page = a.page == b.page && a.page > 1 && gap < a.page;
  std::string out = row("field", label_a, label_b, "");
  for (std::size_t i = 0; i < fa.size(); ++i) {
    std::string verdict = fa[i].key == "name"          ? "(not compared)"
                          : fa[i].value == fb[i].value ? "same"
                                                       : "DIFFERENT";
    if (fa[i].key == "headroom" && verdict == "DIFFERENT" && within_page) {
      verdict +=
          " (less than a page apart: a probe of the lower one's device may write the higher)";
    }
    out += row(fa[i].key, fa[i].value, fb[i].value, verdict);
  }
  return out;
}

}  // namespace clpool::probe
