#include "tools/replay/report_format.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "common/text_escape.h"
#include "tools/replay/site_report.h"

namespace clpool::replay {
namespace {

// "1.50 MiB (1572864 bytes)": both, so people can read it and scripts can grep it.
std::string both(std::uint64_t bytes) {
  if (bytes == unlimited) return "unlimited";
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  return format_bytes(bytes) + " (" + std::to_string(bytes) + " bytes)";
}

std::string capacity_text(std::uint64_t bytes) {
  return bytes >= unbounded_capacity(1) ? std::string("unbounded") : both(bytes);
}

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * x);
  return buf;
}

// "nvidia profile", or for a real device, its own name: it behaves as it does.
std::string device_kind(const device_spec& d) {
  if (d.measured) return common::escape_text(d.measured->name) + " (measured, no profile)";
  return common::escape_text(d.profile.name) + " profile";
}

void row(std::ostringstream& out, const std::string& label, const std::string& value) {
  out << "  " << label << std::string(label.size() < 26 ? 26 - label.size() : 1, ' ') << value << "\n";
}

void oom_text(std::ostringstream& out, const replay_report& r) {
  const oom_point& p = *r.oom;
  out << "OUT OF MEMORY at event " << p.event_index << " (seq " << p.seq;
  if (p.line != 0) out << ", line " << p.line;
  out << "): " << trace::to_string(p.action) << " of " << both(p.requested_bytes);
  if (p.action == trace::trace_action::alloc) out << ", id " << p.id;
  out << "\n";
  // Without a pool there is no rounding, holding or retrying to report: those lines are left out.
  const bool pool = r.config.use_pool;
  row(out, "cause", std::string(to_string(p.site)));
  if (pool) row(out, "request rounded to", both(p.rounded_bytes));
  row(out, pool ? "active (requested)" : "active", both(p.active_bytes));
  if (pool) {
    row(out, "active (rounded)", both(p.active_rounded_bytes));
    row(out, "held by the pool", both(p.held_bytes));
    row(out, "managed by the pool", both(p.managed_bytes));
  }
  row(out, "device used / capacity",
      format_bytes(p.device_used_bytes) + " / " + capacity_text(p.capacity) + ", " +
          both(p.capacity >= p.device_used_bytes ? p.capacity - p.device_used_bytes : 0) + " free");
  if (p.limit != unlimited) row(out, "pool limit", both(p.limit));
  if (pool) {
    row(out, "lost to bin rounding", both(p.rounding_loss_bytes) + " (live blocks' rounded - requested)");
  }
  row(out, "lost to page rounding", both(p.page_loss_bytes) + " (device committed - blocks' sizes, " +
                                        (r.device.measured ? std::string("as the device reports it")
                                                           : common::escape_text(r.device.profile.name) + " profile") + ")");
  if (pool) {
    row(out, "held in other bins", both(p.held_before_bytes) + " when the request arrived" +
                                       (p.site == oom_site::first_use
                                            ? " (still committed: the pool never saw a failure)"
                                            : " (the retry returned what it could)"));
    row(out, "pool retries", std::to_string(p.retries) + " for this request");
  }
  if (p.recorded_failure) row(out, "recorded run", "also failed here (alloc_failed in the trace)");
  row(out, "message", p.message);
}

}  // namespace

std::string format_text(const config_result& result, const std::string& input, bool full_stacks) {
  std::ostringstream out;
  out << "configuration " << to_string(result.config) << "  (input " << common::escape_text(input) << ")\n";
  if (result.replay) {
    const replay_report& r = *result.replay;
    out << "device: " << r.device.backend << ", " << capacity_text(r.device.capacity) << ", "
        << to_string(r.device.semantics) << " allocation, " << device_kind(r.device) << "\n";
    if (const auto& m = r.device.measured) {
      row(out, "device", m->name + ", driver " + m->driver_version);
      row(out, "free memory at start", both(m->free_at_start) + " (" + m->free_memory_source + ")");
      row(out, "out of memory at", m->failure_point);
      row(out, "usable when empty", both(m->usable_bytes) + " (what it accepted before refusing)");
    }
    out << "result: ";
    if (r.ok()) {
      out << "replayed cleanly, " << r.events << " events, no out-of-memory\n";
    } else {
      oom_text(out, r);
      sites_text(out, r, full_stacks);
    }
    out << "summary (through the last event replayed):\n";
    row(out, "events replayed", std::to_string(r.events) + " (" + std::to_string(r.allocs) +
                                    " alloc, " + std::to_string(r.frees) + " free, " +
                                    std::to_string(r.recorded_failures) + " alloc_failed)");
    row(out, "peak active", both(r.peak_active_bytes));
    if (r.config.use_pool) row(out, "peak managed", both(r.peak_managed_bytes));
    row(out, "peak device used", both(r.peak_device_bytes));
    if (r.host_allocs != 0) {
      row(out, "peak host (pinned)",
          both(r.peak_host_bytes) + " in " + std::to_string(r.host_allocs) +
              " host blocks, charged to the host budget" +
              (r.device.host_capacity == unlimited
                   ? std::string(" (unlimited)")
                   : " of " + both(r.device.host_capacity)));
    }
    if (r.config.use_pool) {
      row(out, "hit rate", percent(r.hit_rate()) + " (" + std::to_string(r.hits) + " hits, " +
                               std::to_string(r.misses) + " misses)");
    }
    row(out, "allocator calls", std::to_string(r.allocator_allocations) + " allocations, " +
                                    std::to_string(r.allocator_frees) + " frees, " +
                                    std::to_string(r.allocator_failures) + " failed");
    if (r.config.use_pool) {
      row(out, "free_held retries", std::to_string(r.oom_retries) + " retries rescued " +
                                        std::to_string(r.rescued_requests) + " requests");
    }
    if (r.recorded_failures_that_fit != 0) {
      row(out, "recorded failures", std::to_string(r.recorded_failures_that_fit) +
                                        " alloc_failed requests fit in this replay");
    }
  }
  if (result.min_capacity) {
    const min_capacity_result& m = *result.min_capacity;
    if (m.found) {
      // The exact form, the rounded one only where it says something more (4194304 TiB = 4 EiB).
      const std::string exact = format_bytes_exact(m.capacity), rounded = format_bytes(m.capacity);
      out << "minimum capacity: " << exact;
      if (rounded != exact) out << " = " << rounded;
      out << " (" << m.capacity << " bytes)"
          << "\n  (granule " << format_bytes_exact(m.granule) << ", " << m.replays << " replays";
      if (m.capacity > 0) out << "; " << format_bytes_exact(m.capacity - m.granule) << " runs out";
      out << ")\n";
      const replay_report* below = m.one_granule_below ? &*m.one_granule_below : nullptr;
      if (below != nullptr && below->oom && below->sites) {
        // The allocation that fails one granule below is the one the minimum is there for.
        out << "  set by the allocation at " << site_name(below->sites.get(), below->oom->stack)
            << " (event " << below->oom->event_index << ", " << format_bytes(below->oom->requested_bytes)
            << ")\n";
      }
    } else {
      out << "minimum capacity: none: " << m.why_not << "\n";
    }
  }
  return out.str();
}

namespace {

// The replay that speaks for the first configuration: the one at the requested capacity, else the
// clean one at its minimum capacity; null when there is neither.
const replay_report* first_report(const std::vector<config_result>& results) {
  if (results.empty()) return nullptr;
  const config_result& first = results[0];
  if (first.replay) return &*first.replay;
  if (first.min_capacity && first.min_capacity->at_result) return &*first.min_capacity->at_result;
  return nullptr;
}

}  // namespace

std::string pooled_trace_warning(const std::vector<config_result>& results) {
  const replay_report* r = first_report(results);
  if (r == nullptr || !r->looks_recorded_below_a_pool()) return "";
  return "warning: " + std::to_string(r->bin_sized_allocs) + " of " +
         std::to_string(r->sized_allocs) +
         " allocations of 4 KiB or more have sizes a PyOpenCL-style pool rounds to (e.g. "
         "1114111 bytes for 1 MiB): the trace seems to be recorded below a memory pool, so it "
         "holds the pool's requests to the driver, not the application's, and comparing nopool "
         "with pool configurations on it tells nothing. Record the application's requests: wrap "
         "its pool with clpool.record.recording(pool, PATH) (one line; see python/README.md), or "
         "run it under the layer without its pool.\n";
}

std::string format_table(const std::vector<config_result>& results, const std::string& input) {
  std::vector<std::string> labels;
  std::vector<std::vector<std::string>> cols;
  const auto add = [&](std::size_t c, const std::string& label, const std::string& value) {
    if (c == 0) labels.push_back(label);
    cols[c].push_back(value);
  };
  cols.resize(results.size());
  for (std::size_t c = 0; c < results.size(); ++c) {
    const config_result& res = results[c];
    add(c, "configuration", to_string(res.config));
    if (res.replay) {
      const replay_report& r = *res.replay;
      add(c, "result", r.ok() ? "clean" : "OUT OF MEMORY");
      add(c, "first OOM event", r.ok() ? "-" : std::to_string(r.oom->event_index));
      add(c, "OOM request (rounded)", r.ok() ? "-" : format_bytes(r.oom->rounded_bytes));
      add(c, "OOM cause", r.ok() ? "-" : std::string(to_string(r.oom->site)));
      add(c, "held at OOM request", r.ok() ? "-" : format_bytes(r.oom->held_before_bytes));
      add(c, "lost to bin rounding at OOM", r.ok() ? "-" : format_bytes(r.oom->rounding_loss_bytes));
      add(c, "lost to page rounding at OOM", r.ok() ? "-" : format_bytes(r.oom->page_loss_bytes));
      add(c, "events replayed", std::to_string(r.events));
      add(c, "peak active", format_bytes(r.peak_active_bytes));
      add(c, "peak managed", format_bytes(r.peak_managed_bytes));
      add(c, "peak device used", format_bytes(r.peak_device_bytes));
      add(c, "hit rate", r.config.use_pool ? percent(r.hit_rate()) : "-");
      add(c, "allocator allocations", std::to_string(r.allocator_allocations));
      add(c, "allocator frees", std::to_string(r.allocator_frees));
      add(c, "rescued by retry", r.config.use_pool ? std::to_string(r.rescued_requests) : "-");
    }
    if (res.min_capacity) {
      add(c, "minimum capacity",
          res.min_capacity->found ? format_bytes_exact(res.min_capacity->capacity) : "none");
    }
  }
  std::vector<std::size_t> width(cols.size() + 1, 0);
  for (const auto& l : labels) width[0] = std::max(width[0], l.size());
  for (std::size_t c = 0; c < cols.size(); ++c) {
    for (const auto& v : cols[c]) width[c + 1] = std::max(width[c + 1], v.size());
  }
  std::size_t total_width = width[0];
  for (std::size_t c = 1; c < width.size(); ++c) total_width += width[c] + 2;
  std::ostringstream out;
  out << "input " << common::escape_text(input);
  if (const replay_report* r = first_report(results)) {
    // The capacity only when one was asked for; a minimum-capacity search has many.
    out << ", device " << r->device.backend;
    if (results[0].replay) out << " " << capacity_text(r->device.capacity);
    out << ", " << to_string(r->device.semantics) << " allocation, " << device_kind(r->device);
  }
  out << "\n";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    out << labels[i] << std::string(width[0] - labels[i].size() + 2, ' ');
    for (std::size_t c = 0; c < cols.size(); ++c) {
      const std::string& v = i < cols[c].size() ? cols[c][i] : std::string();
      out << std::string(width[c + 1] - v.size(), ' ') << v << (c + 1 < cols.size() ? "  " : "");
    }
    out << "\n";
    if (i == 0) out << std::string(total_width, '-') << "\n";
  }
  // A "none" in the table is explained below it, as the single-configuration report does.
  for (const config_result& res : results) {
    if (res.min_capacity && !res.min_capacity->found) {
      out << "minimum capacity of " << to_string(res.config) << ": none: " << res.min_capacity->why_not
          << "\n";
    }
  }
  return out.str();
}

nlohmann::json to_json(const replay_report& r) {
  nlohmann::json j;
  j["config"] = to_string(r.config);
  j["device"] = r.device.backend;
  j["capacity"] = r.device.capacity;
  j["semantics"] = std::string(to_string(r.device.semantics));
  j["profile"] = r.device.measured ? nlohmann::json(nullptr) : nlohmann::json(common::json_text(r.device.profile.name));
  if (const auto& m = r.device.measured) {
    j["measured_device"] = {{"name", m->name},
                            {"driver_version", m->driver_version},
                            {"free_at_start", m->free_at_start},
                            {"free_memory_source", m->free_memory_source},
                            {"failure_point", m->failure_point},
                            {"usable_bytes", m->usable_bytes}};
  }
  j["looks_recorded_below_a_pool"] = r.looks_recorded_below_a_pool();
  j["ok"] = r.ok();
  j["events"] = r.events;
  j["allocs"] = r.allocs;
  j["frees"] = r.frees;
  j["recorded_failures"] = r.recorded_failures;
  j["recorded_failures_that_fit"] = r.recorded_failures_that_fit;
  j["peak_active_bytes"] = r.peak_active_bytes;
  j["peak_managed_bytes"] = r.peak_managed_bytes;
  j["peak_device_bytes"] = r.peak_device_bytes;
  j["peak_host_bytes"] = r.peak_host_bytes;
  j["host_allocs"] = r.host_allocs;
  j["hits"] = r.hits;
  j["misses"] = r.misses;
  j["hit_rate"] = r.hit_rate();
  j["allocator_allocations"] = r.allocator_allocations;
  j["allocator_frees"] = r.allocator_frees;
  j["allocator_failures"] = r.allocator_failures;
  j["oom_retries"] = r.oom_retries;
  j["rescued_requests"] = r.rescued_requests;
  if (r.oom) {
    const oom_point& p = *r.oom;
    j["oom"] = {{"event_index", p.event_index},
                {"seq", p.seq},
                {"line", p.line},
                {"action", std::string(trace::to_string(p.action))},
                {"id", p.id},
                {"requested_bytes", p.requested_bytes},
                {"rounded_bytes", p.rounded_bytes},
                {"cause", std::string(to_string(p.site))},
                {"recorded_failure", p.recorded_failure},
                {"active_bytes", p.active_bytes},
                {"active_rounded_bytes", p.active_rounded_bytes},
                {"held_bytes", p.held_bytes},
                {"managed_bytes", p.managed_bytes},
                {"device_used_bytes", p.device_used_bytes},
                {"capacity", p.capacity},
                {"limit", p.limit == unlimited ? nlohmann::json(nullptr) : nlohmann::json(p.limit)},
                {"held_in_other_bins_bytes", p.held_before_bytes},
                {"rounding_loss_bytes", p.rounding_loss_bytes},
                {"page_loss_bytes", p.page_loss_bytes},
                {"retries", p.retries},
                {"message", p.message}};
    sites_json(j["oom"], r);
  } else {
    j["oom"] = nullptr;
  }
  return j;
}

nlohmann::json to_json(const min_capacity_result& m) {
  nlohmann::json j;
  j["found"] = m.found;
  j["capacity"] = m.found ? nlohmann::json(m.capacity) : nlohmann::json(nullptr);
  j["granule"] = m.granule;
  j["replays"] = m.replays;
  if (!m.found) j["why_not"] = m.why_not;
  if (m.found && m.one_granule_below && m.one_granule_below->oom && m.one_granule_below->sites) {
    const replay_report& below = *m.one_granule_below;
    j["set_by"] = {{"event_index", below.oom->event_index},
                   {"stack", below.oom->stack},
                   {"site", site_name(below.sites.get(), below.oom->stack)},
                   {"frames", stack_lines(below.sites.get(), below.oom->stack)}};
  }
  return j;
}

nlohmann::json to_json(const std::vector<config_result>& results, const std::string& input,
                       int exit_code) {
  nlohmann::json j;
  j["input"] = common::json_text(input);
  j["exit_code"] = exit_code;
  j["results"] = nlohmann::json::array();
  for (const config_result& res : results) {
    nlohmann::json c;
    c["config"] = to_string(res.config);
    c["replay"] = res.replay ? to_json(*res.replay) : nlohmann::json(nullptr);
    c["min_capacity"] = res.min_capacity ? to_json(*res.min_capacity) : nlohmann::json(nullptr);
    j["results"].push_back(std::move(c));
  }
  return j;
}

}  // namespace clpool::replay
