#include "tools/replay/report_format.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "common/text_escape.h"
#include "tools/replay/site_report.h"

namespace clpool::replay_cli {

using replay::capacity_sum;
using replay::capacity_sum_at;
using replay::config_result;
using replay::device_spec;
using replay::format_bytes;
using replay::format_bytes_exact;
using replay::free_moment;
using replay::min_capacity_result;
using replay::oom_point;
using replay::oom_site;
using replay::replay_report;
using replay::site_name;
using replay::to_string;
using replay::unbounded_capacity;

std::string bytes_both(std::uint64_t bytes) {
  if (bytes == unlimited) return "unlimited";
  return common::format_bytes_both(bytes);
}

std::string counted(std::uint64_t n, const std::string& what, const std::string& plural) {
  return std::to_string(n) + " " + (n == 1 ? what : plural.empty() ? what + "s" : plural);
}

std::string exact_size_text(std::uint64_t bytes, bool with_bytes) {
  const std::string exact = format_bytes_exact(bytes), largest = format_bytes(bytes);
  if (exact.ends_with(" B")) return bytes_both(bytes);  // bytes alone: "3 bytes", "1536 bytes"
  std::string text = exact;
  // The largest unit's form only where it is exact too (no decimals): "4.00 GiB" for 4099 MiB
  // would hide that it is more than 4 GiB.
  if (largest != exact && largest.find('.') == std::string::npos) text += " = " + largest;
  return with_bytes ? text + " (" + std::to_string(bytes) + " bytes)" : text;
}

namespace {

const auto both = bytes_both;

// A figure in its short form, "3.75 GiB", in the words of the long one below a KiB ("1 byte", not
// "1 B" beside "2 bytes").
std::string short_bytes(std::uint64_t bytes) {
  return bytes < 1024 ? both(bytes) : format_bytes(bytes);
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
  return common::escape_text(d.profile.name) + " profile" +
         (d.max_alloc == unlimited ? "" : ", max alloc " + both(d.max_alloc));
}

// How a real device answered a buffer one byte above its maximum allocation.
std::string above_max_alloc_text(const replay::measured_device& m) {
  if (m.above_max_alloc == "refused_for_size")
    return "it refuses a buffer above it for its size, and so does the replay";
  if (m.above_max_alloc == "accepted") return "it accepts a buffer above it";
  return "whether it refuses a buffer above it is not known: one was refused for memory";
}

// A failed replay's result: a request above the maximum allocation is no out-of-memory.
std::string failure_word(const oom_point& p) {
  return p.refused_for_size() ? "REFUSED FOR ITS SIZE" : "OUT OF MEMORY";
}

void row(std::ostringstream& out, const std::string& label, const std::string& value) {
  out << "  " << label << std::string(label.size() < 26 ? 26 - label.size() : 1, ' ') << value
      << "\n";
}

// The release and wait events with their scope: the whole trace's for a replay that read it all,
// else those up to the failure out of the trace's.
std::string release_counts_text(const replay_report& r) {
  if (!r.oom && !r.stopped) {
    return "the trace has " + counted(r.releases, "release") + " and " + counted(r.waits, "wait");
  }
  const std::string where = r.oom ? "up to the failure" : "up to the event replayed last";
  const auto of = [&r](std::uint64_t n, std::uint64_t total) {
    return std::to_string(n) +
           (r.trace_counts_known ? " of " + std::to_string(total) : std::string());
  };
  return "releases " + where + ": " + of(r.releases, r.in_trace.releases) + "; waits " + where +
         ": " + of(r.waits, r.in_trace.waits) +
         (r.trace_counts_known ? "" : " (the rest of the trace unread)");
}

}  // namespace

// Where the trace's first uses (version 4) commit a block: "" for a trace without them.
std::string first_uses_text(const replay_report& r) {
  if (r.first_use_kinds.empty()) return "";
  // The trace's use events; at an out-of-memory, also those up to it (the summary's).
  std::string count;
  if (!r.trace_counts_known) {
    count = counted(r.uses, "use event") + " up to the failure, the rest of the trace unread";
  } else {
    count = counted(r.in_trace.uses, "use event");
    if (r.oom || r.stopped) {
      count += ", " + std::to_string(r.uses) +
               (r.oom ? " up to the failure" : " up to the event replayed last");
    }
  }
  std::string s = "the trace records them (" + r.first_use_kinds + "; " + count + "): ";
  if (r.device.semantics != replay::alloc_semantics::deferred) {
    return s + "this device commits every block as it is allocated";
  }
  return s + "each such block commits at its first use, one never used takes nothing";
}

namespace {
// How the trace ended, when its recorder did not reach the program's normal exit and it left
// blocks live (replay_report::ends_cut_off_with_live_blocks); "" otherwise.
std::string trace_end_text(const replay_report& r) {
  if (!r.ends_cut_off_with_live_blocks()) return "";
  return "cut off: the trace ends in the zero-filled rest of its recorder's file, not at the "
         "program's normal exit (it was killed, crashed or called _exit), with " +
         counted(r.in_trace.live_at_end(), "block") +
         " still live; what the program did after that is not in it";
}
}  // namespace

// Which moment of each free the replay used (FORMAT.md "Two moments of a free"), for a trace that
// has both; "" for one that has one moment per free, which every rule replays alike.
std::string frees_at_text(const replay_report& r) {
  if (!r.has_releases()) return "";
  std::string s;
  switch (r.frees_at) {
    case free_moment::release:
      s = "the program's release (clReleaseMemObject dropping its last reference, "
          "clEnqueueSVMFree)";
      break;
    case free_moment::wait:
      s = "the program's next wait after its release (clFinish, clWaitForEvents, a blocking "
          "call), or the driver's free if earlier";
      break;
    case free_moment::driver:
      s = "the driver's free, as the recording device gave the memory back";
      break;
  }
  if (r.frees_at_given) {
    s += " (--frees-at " + std::string(to_string(r.frees_at)) + ")";
  } else if (r.device.measured) {
    s += " (the default for a real device; --frees-at to choose)";
  } else {
    s += " (what the " + common::escape_text(r.device.profile.name) +
         " profile predicts: its commands finish " +
         (r.device.profile.commands_finish == device_model::command_completion::at_wait
              ? "when the program waits"
              : "promptly") +
         "; --frees-at to choose)";
  }
  return s + "; " + release_counts_text(r);
}

namespace {

// The capacity at the failure as a sum whose lines add up (result.h, capacity_sum).
void capacity_sum_text(std::ostringstream& out, const replay_report& r) {
  const std::optional<capacity_sum> sum = capacity_sum_at(*r.oom, r.device, r.config.use_pool);
  if (!sum) return;
  const capacity_sum& s = *sum;
  std::vector<std::pair<std::string, std::string>> lines;  // (operator and figure, what)
  for (const capacity_sum_row& row : capacity_sum_rows(s, r)) {
    lines.push_back(
        {(row.op.empty() ? std::string(" ") : row.op) + " " + both(row.bytes), row.what});
  }
  std::size_t width = 0;
  for (const auto& l : lines) width = std::max(width, l.first.size());
  out << "capacity at the failure, summed:\n";
  for (const auto& [figure, what] : lines) {
    out << "  " << figure << std::string(width - figure.size() + 2, ' ') << what << "\n";
  }
  out << "  " << capacity_request_text(s, r) << "\n";
  if (const std::string unused = capacity_unused_text(s); !unused.empty())
    out << "  " << unused << "\n";
}

// After "device used / capacity": what was left, under the names the sum gives it (nothing on an
// unbounded device).
std::string left_of_capacity(const oom_point& p, const replay_report& r) {
  const std::optional<capacity_sum> s = capacity_sum_at(p, r.device, r.config.use_pool);
  if (!s) return "";
  if (!s->headroom_known) {
    return ", " + both(s->free) + " " + free_to_program_name +
           " (the device's own headroom included)";
  }
  std::string text = ", " + both(s->free) + " " + free_to_program_name;
  if (s->headroom != 0) text += " + " + both(s->headroom) + " " + driver_headroom_name;
  return text;
}

void oom_text(std::ostringstream& out, const replay_report& r) {
  const oom_point& p = *r.oom;
  out << failure_word(p) << " at event " << p.event_index << " (seq " << p.seq;
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
      short_bytes(p.device_used_bytes) + " / " + capacity_text(p.capacity) +
          left_of_capacity(p, r));
  if (p.limit != unlimited) row(out, "pool limit", both(p.limit));
  if (pool) {
    row(out, "lost to bin rounding",
        both(p.rounding_loss_bytes) + " (live blocks' rounded - requested)");
  }
  row(out, "lost to page rounding",
      both(p.page_loss_bytes) + " (device committed - blocks' sizes, " +
          (r.device.measured ? std::string("as the device reports it")
                             : common::escape_text(r.device.profile.name) + " profile") +
          ")");
  if (pool && !p.refused_for_size()) {  // no retry, nothing to return
    // At first use the pool returned nothing: what it held stays committed, but for blocks no
    // command ever used (a version-4 trace), which never were.
    const std::uint64_t unused = std::min(p.held_unused_bytes, p.held_before_bytes);
    const std::string first_use_why =
        unused == 0 ? " (still committed: the pool never saw a failure; one whose allocator "
                      "commits at once, alloc=immediate, frees them and retries)"
        : unused == p.held_before_bytes
            ? " (none of it committed: no command used it)"
            : " (" + both(p.held_before_bytes - unused) +
                  " of it still committed, the rest never used: the pool never saw a failure)";
    row(out, "held in other bins",
        both(p.held_before_bytes) + " when the request arrived" +
            (p.site == oom_site::first_use ? first_use_why
                                           : " (the retry returned what it could)"));
    row(out, "pool retries", std::to_string(p.retries) + " for this request");
  }
  if (p.recorded_failure) {
    row(out, "recorded run",
        p.action == trace::trace_action::use
            ? "also failed here (the trace's failure comment: this first use refused)"
            : "also failed here (alloc_failed in the trace)");
  }
  row(out, "message", p.message);
  capacity_sum_text(out, r);
}

}  // namespace

namespace {

// The summary rows of one replay: events, peaks, the pool's hits, the allocator's calls.
void summary_text(std::ostringstream& out, const replay_report& r) {
  out << "summary (through the last event replayed):\n";
  std::string events = std::to_string(r.allocs) + " alloc, " + std::to_string(r.frees) + " free, " +
                       std::to_string(r.recorded_failures) + " alloc_failed";
  if (r.recorded_size_refusals != 0) {
    events += ", " + counted(r.recorded_size_refusals, "size refusal") +
              " (CL_INVALID_BUFFER_SIZE: not replayed)";
  }
  if (r.releases != 0 || r.waits != 0) {
    events += ", " + std::to_string(r.releases) + " release, " + std::to_string(r.waits) + " wait";
  }
  if (!r.first_use_kinds.empty()) events += ", " + std::to_string(r.uses) + " use";
  row(out, "events replayed", std::to_string(r.events) + " (" + events + ")");
  row(out, "peak active", both(r.peak_active_bytes));
  if (r.config.use_pool) row(out, "peak managed", both(r.peak_managed_bytes));
  row(out, "peak device used", both(r.peak_device_bytes));
  if (r.host_allocs != 0) {
    row(out, "peak host (pinned)",
        both(r.peak_host_bytes) + " in " + counted(r.host_allocs, "host block") +
            ", charged to the host budget" +
            (r.device.host_capacity == unlimited ? std::string(" (unlimited)")
                                                 : " of " + both(r.device.host_capacity)));
  }
  if (r.config.use_pool) {
    row(out, "hit rate",
        percent(r.hit_rate()) + " (" + counted(r.hits, "hit") + ", " +
            counted(r.misses, "miss", "misses") + ")");
  }
  row(out, "allocator calls",
      counted(r.allocator_allocations, "allocation") + ", " + counted(r.allocator_frees, "free") +
          ", " + std::to_string(r.allocator_failures) + " failed");
  if (r.config.use_pool) {
    row(out, "free_held retries",
        counted(r.oom_retries, "retry", "retries") + " rescued " +
            counted(r.rescued_requests, "request"));
  }
  if (r.recorded_failures_that_fit != 0) {
    row(out, "recorded failures",
        std::to_string(r.recorded_failures_that_fit) + " alloc_failed requests fit in this replay");
  }
}

// The minimum capacity's lines, and the site of the allocation it is there for.
void min_capacity_text(std::ostringstream& out, const config_result& result) {
  const min_capacity_result& m = *result.min_capacity;
  if (!result.replay && m.at_result) {
    if (const std::string f = frees_at_text(*m.at_result); !f.empty()) row(out, "frees at", f);
    if (const std::string f = first_uses_text(*m.at_result); !f.empty()) row(out, "first uses", f);
    if (const std::string t = trace_end_text(*m.at_result); !t.empty()) row(out, "trace end", t);
  }
  if (m.found) {
    out << "minimum capacity: " << exact_size_text(m.capacity) << "\n  (granule "
        << exact_size_text(m.granule, false) << ", " << counted(m.replays, "replay");
    if (m.capacity > 0)
      out << "; " << exact_size_text(m.capacity - m.granule, false) << " runs out";
    out << ")\n";
    const replay_report* below = m.one_granule_below ? &*m.one_granule_below : nullptr;
    if (below != nullptr && below->oom && below->sites) {
      // The allocation that fails one granule below is the one the minimum is there for.
      out << "  set by the allocation at " << site_name(below->sites.get(), below->oom->stack)
          << " (event " << below->oom->event_index << ", "
          << format_bytes(below->oom->requested_bytes) << ")\n";
    }
  } else {
    out << "minimum capacity: none: " << m.why_not << "\n";
  }
}

}  // namespace

std::string format_text(const config_result& result, const std::string& input, bool full_stacks) {
  std::ostringstream out;
  out << "configuration " << to_string(result.config) << "  (input " << common::escape_text(input)
      << ")\n";
  if (result.replay) {
    const replay_report& r = *result.replay;
    out << "device: " << r.device.backend << ", " << capacity_text(r.device.capacity) << ", "
        << to_string(r.device.semantics) << " allocation, " << device_kind(r.device) << "\n";
    if (const auto& m = r.device.measured) {
      row(out, "device",
          common::escape_text(m->name) + ", driver " + common::escape_text(m->driver_version));
      row(out, "free memory at start", both(m->free_at_start) + " (" + m->free_memory_source + ")");
      row(out, "out of memory at", m->failure_point);
      row(out, "usable when empty", both(m->usable_bytes) + " (what it accepted before refusing)");
      if (r.device.max_alloc != unlimited)
        row(out, "max allocation",
            both(r.device.max_alloc) + " (" + above_max_alloc_text(*m) + ")");
    }
    if (const std::string f = frees_at_text(r); !f.empty()) row(out, "frees at", f);
    if (const std::string f = first_uses_text(r); !f.empty()) row(out, "first uses", f);
    if (const std::string t = trace_end_text(r); !t.empty()) row(out, "trace end", t);
    out << "result: ";
    if (r.ok()) {
      out << "replayed cleanly, " << counted(r.events, "event") << ", no out-of-memory\n";
    } else {
      oom_text(out, r);
      sites_text(out, r, full_stacks);
    }
    summary_text(out, r);
    peak_and_end_text(out, r, full_stacks);
  }
  if (result.min_capacity) min_capacity_text(out, result);
  if (!result.trials.empty()) out << format_trials_text(result);
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
  return "warning: " + std::to_string(r->judged_bin_sized_allocs()) + " of " +
         std::to_string(r->judged_sized_allocs()) + " allocations of 4 KiB or more " +
         (r->trace_counts_known ? "in the trace" : "up to the failure (the rest of it unread)") +
         " have sizes a PyOpenCL-style pool rounds to (e.g. "
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
      add(c, "result", r.ok() ? "clean" : failure_word(*r.oom));
      add(c, "first OOM event", r.ok() ? "-" : std::to_string(r.oom->event_index));
      add(c, "OOM request (rounded)", r.ok() ? "-" : format_bytes(r.oom->rounded_bytes));
      add(c, "OOM cause", r.ok() ? "-" : std::string(to_string(r.oom->site)));
      add(c, "held at OOM request", r.ok() ? "-" : format_bytes(r.oom->held_before_bytes));
      add(c, "lost to bin rounding at OOM",
          r.ok() ? "-" : format_bytes(r.oom->rounding_loss_bytes));
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
    if (!res.trials.empty()) add(c, "trials clean", trials_clean_text(res));
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
  if (const replay_report* r = first_report(results)) {
    if (const std::string f = frees_at_text(*r); !f.empty()) out << "frees at " << f << "\n";
    if (const std::string f = first_uses_text(*r); !f.empty()) out << "first uses " << f << "\n";
  }
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
      out << "minimum capacity of " << to_string(res.config)
          << ": none: " << res.min_capacity->why_not << "\n";
    }
  }
  for (const config_result& res : results) {
    if (res.trials.empty()) continue;
    out << "\n" << to_string(res.config) << " " << format_trials_text(res);
  }
  return out.str();
}

}  // namespace clpool::replay_cli
