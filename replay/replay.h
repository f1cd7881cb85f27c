// The replay engine: runs a trace through a configuration (the pool, or no pool) on a replay
// device and reports whether it ran out of memory, where, and why.
//
//   trace_reader reader("run.trace", {.check_liveness = false});
//   replay_report r = replay_stream(reader, parse_config("pool:lb=4"),
//                                   {.capacity = 4ull << 30, .semantics = alloc_semantics::immediate});
//   if (r.oom) ... r.oom->event_index, r.oom->rounded_bytes, ...
//
// What each trace action does: alloc -> allocate (a `sub` block gets no device memory; a `host`
// block, host-pinned memory, is charged to the separate host budget, never to the device or the
// pool, as mockcl and the layer's budget do);
// alloc_failed -> allocate, then release at once (the recorded run failed here; if the replay
// fails too that is its out-of-memory); free -> release; free_held / stop_holding -> the pool's
// calls (nothing without a pool). Replay stops at the first out-of-memory.
//
// Deterministic: the same events, config and device give the same report. Memory is bounded by
// the live set: the engine keeps one hash-map entry per live id and never the trace.
#ifndef CLPOOL_REPLAY_REPLAY_H_
#define CLPOOL_REPLAY_REPLAY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pool/memory_pool.h"
#include "replay/config.h"
#include "replay/device.h"
#include "trace/id_map.h"
#include "trace/trace_event.h"
#include "trace/trace_reader.h"

namespace clpool::replay {

struct device_spec;
// Builds the device for a spec; see mockcl_device.h.
using device_factory = std::function<std::unique_ptr<replay_device>(const device_spec&)>;

// What a real device (--device opencl) said about itself, for the report: it behaves as it does,
// not as a profile says. Absent for sim and mockcl.
struct measured_device {
  std::string name;            // "PLATFORM / DEVICE"
  std::string driver_version;  // CL_DRIVER_VERSION
  std::uint64_t free_at_start = 0;
  std::string free_memory_source;  // "queried: NVML" or "assumed: CL_DEVICE_GLOBAL_MEM_SIZE ..."
  std::string failure_point;       // "first use (clEnqueueMigrateMemObjects: -4 CL_...)"
  std::uint64_t usable_bytes = 0;  // what it accepted, filled with nothing else held
};

// The device a replay runs on: a simulated_device unless make_device is set (--device mockcl).
struct device_spec {
  std::uint64_t capacity = unlimited;
  alloc_semantics semantics = alloc_semantics::immediate;
  std::uint64_t host_capacity = unlimited;  // budget for `host` (pinned) blocks
  std::string backend = "sim";  // the device's name in reports: "sim", "mockcl" or "opencl"
  device_model::device_profile profile = {};  // how the device commits memory (default: exact)
  device_factory make_device = nullptr;  // empty: simulated_device(capacity, semantics)
  std::optional<measured_device> measured = std::nullopt;  // a real device's own account (then no profile)
};

// The input broke a rule the engine depends on (alloc of a live id, free of an id that is not
// live). replay_stream() turns it into a trace_error naming the file and line.
class replay_input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where an out-of-memory happened.
enum class oom_site : std::uint8_t {
  allocator,  // the device refused the allocation (immediate semantics), after the pool's retries
  limit,      // the pool's own limit left no room, after its retries
  first_use,  // the allocation succeeded but committing it at first use did not fit (deferred)
  host,       // a `host` block did not fit in the host-pinned budget (device_spec::host_capacity)
};
std::string_view to_string(oom_site site);

// The first out-of-memory of a replay. Byte figures are taken at the failure (after the pool's
// retries), except held_before_bytes.
struct oom_point {
  std::uint64_t event_index = 0;  // 0-based position among the trace's events
  std::uint64_t seq = 0;          // the event's seq
  std::uint64_t line = 0;         // its line in the input file (0 when not read from a file)
  trace::trace_action action = trace::trace_action::alloc;
  std::uint64_t id = 0;
  std::uint64_t requested_bytes = 0;
  std::uint64_t rounded_bytes = 0;  // the block the pool needed (= requested without a pool)
  oom_site site = oom_site::allocator;
  bool recorded_failure = false;   // the trace says the recorded run failed here too
  std::uint64_t active_bytes = 0;          // requested bytes of live allocations
  std::uint64_t active_rounded_bytes = 0;  // their rounded bytes
  std::uint64_t held_bytes = 0;            // held by the pool at the failure
  std::uint64_t managed_bytes = 0;         // active rounded + held
  std::uint64_t device_used_bytes = 0;     // committed on the device
  std::uint64_t capacity = 0;
  std::uint64_t limit = unlimited;
  std::uint64_t held_before_bytes = 0;     // held in other bins when the request arrived
  std::uint64_t rounding_loss_bytes = 0;   // active_rounded_bytes - active_bytes (the pool's bins)
  std::uint64_t page_loss_bytes = 0;       // device committed - sizes committed (the device's pages)
  std::uint64_t retries = 0;               // the pool's retries for this request
  std::string message;                     // the pool's or the device's own words
  std::uint64_t stack = 0;                 // the failing request's site (FORMAT.md "Sites"); 0: none
  // With replay_options::sites: per allocation site, what was live at the failure, and (with a
  // pool) the freed blocks the pool still held, largest first.
  std::vector<site_usage> live_sites;
  std::vector<site_usage> held_sites;
};

// One point of the timeline: the maxima over a run of consecutive events starting at `event`.
struct timeline_point {
  std::uint64_t event = 0;
  std::uint64_t active_bytes = 0;
  std::uint64_t held_bytes = 0;
  std::uint64_t managed_bytes = 0;
  std::uint64_t device_used_bytes = 0;
};

struct replay_report {
  replay_config config;
  device_spec device;
  std::uint64_t events = 0;   // events applied (through the failing one)
  std::uint64_t allocs = 0, frees = 0, recorded_failures = 0, free_held_calls = 0,
                stop_holding_calls = 0;
  std::uint64_t recorded_failures_that_fit = 0;  // alloc_failed events that succeeded here
  std::optional<oom_point> oom;  // the first out-of-memory; nothing when the replay was clean
  std::uint64_t peak_active_bytes = 0;
  std::uint64_t peak_managed_bytes = 0;
  std::uint64_t peak_device_bytes = 0;
  std::uint64_t peak_host_bytes = 0;   // `host` blocks, charged to the host budget
  std::uint64_t host_allocs = 0;       // `host` alloc events
  // Allocations of at least 4 KiB, and those whose size is the top of a PyOpenCL pool bin
  // (leading bits 4, e.g. 1114111 for 1 MiB): a trace recorded below a pool is full of them.
  std::uint64_t sized_allocs = 0, bin_sized_allocs = 0;
  std::uint64_t hits = 0, misses = 0;  // pool requests served from held blocks / by the device
  std::uint64_t allocator_allocations = 0, allocator_frees = 0, allocator_failures = 0;
  std::uint64_t oom_retries = 0;       // the pool's retries after freeing held memory
  std::uint64_t rescued_requests = 0;  // requests that failed first and succeeded after a retry
  std::vector<timeline_point> timeline;  // empty unless replay_options::timeline
  // The last replay_options::timeline_tail_events events, one point each, oldest first (the
  // failing event last when there is one): the picture's zoom on the failure. Empty unless
  // replay_options::timeline.
  std::vector<timeline_point> timeline_tail;
  // The trace's frames and stacks (FORMAT.md "Sites"), read to its end or its failure; null for
  // inputs without sites.
  std::shared_ptr<const trace::site_table> sites;

  bool ok() const { return !oom.has_value(); }
  // True when most sizeable allocations have pool-bin sizes (at least 16 of them, over half):
  // the trace holds a pool's requests to the driver, not the application's.
  bool looks_recorded_below_a_pool() const {
    return sized_allocs >= 16 && 2 * bin_sized_allocs > sized_allocs;
  }
  // hits / (hits + misses), 0 when there were none.
  double hit_rate() const {
    return hits + misses == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(hits + misses);
  }
};

struct replay_options {
  bool timeline = false;               // sample active/held/managed bytes for a picture
  std::size_t max_timeline_points = 1024;  // downsampled (keeping maxima) to at most this many
  std::size_t timeline_tail_events = 64;   // kept at full resolution in timeline_tail
  bool sites = false;  // attribute live and held memory to allocation sites at an out-of-memory
};

// Applies events one at a time. Single-threaded.
class replayer {
 public:
  // Replays on the device `device` describes (device.make_device(device), or a simulated_device
  // when that is empty); the replayer owns it. Throws clpool::argument_error for a pool
  // configuration the pool refuses.
  replayer(const replay_config& config, const device_spec& device, replay_options options = {});
  // Replays on `device` (a mockcl-backed one, say), which must outlive the replayer.
  replayer(const replay_config& config, replay_device& device, replay_options options = {});
  ~replayer();
  replayer(const replayer&) = delete;
  replayer& operator=(const replayer&) = delete;

  // Applies one event read from `line` (0 if none). Returns false once the replay has run out of
  // memory (this event or an earlier one; later events are ignored). Throws replay_input_error
  // for an alloc of a live id or a free of an id that is not live, changing nothing.
  bool apply(const trace::trace_event& event, std::uint64_t line = 0);

  // Hints that `event` is coming, so its memory can be loaded early. Optional. Stage 1 (a few
  // events ahead) loads the id map's slot; stage 0 (the next event) looks the id up and loads the
  // live block it names.
  void prefetch(const trace::trace_event& event, int stage) const noexcept;

  // The report so far. Final once the input is exhausted or apply() returned false.
  replay_report report() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// Called now and then with (bytes consumed, total bytes or 0) while a replay reads its input.
using progress_fn = std::function<void(std::uint64_t, std::uint64_t)>;

// A source of events: trace::trace_reader, or anything with the same next(), line(), name(),
// bytes_consumed() and total_bytes() (the RMM CSV importer). Bad input is a trace_error naming the
// file and line, thrown after every earlier event was applied.
template <class Source>
replay_report replay_stream(Source& source, const replay_config& config, const device_spec& device,
                            const replay_options& options = {}, const progress_fn& progress = {}) {
  replayer r(config, device, options);
  // Two events of lookahead hide most of the live set's memory latency: the id map's slot for
  // event i + 2 and the block of event i + 1 are prefetched while event i is applied. A read error
  // in the lookahead is held until the events before it are applied, so results and error order
  // are those of a plain loop.
  struct slot {
    trace::trace_event event;
    std::uint64_t line = 0;
  };
  slot ring[3];
  std::optional<trace::trace_error> pending;
  const auto read = [&](slot& s) {
    if (pending) return false;
    try {
      if (!source.next(s.event)) return false;
      s.line = source.line();
      return true;
    } catch (const trace::trace_error& error) {
      pending = error;
      return false;
    }
  };
  // The sites of a trace that has them (the RMM importer has none), read once replay is done.
  const auto with_sites = [&source](replay_report report) {
    if constexpr (requires { source.sites(); }) {
      if (!source.sites().empty()) {
        report.sites = std::make_shared<const trace::site_table>(source.sites());
      }
    }
    return report;
  };
  int count = 0;  // events in the ring, starting at `head`
  int head = 0;
  while (count < 3 && read(ring[count])) ++count;
  if (count > 1) r.prefetch(ring[1].event, 0);
  if (count > 2) r.prefetch(ring[2].event, 1);
  std::uint64_t n = 0;
  while (count > 0) {
    slot& s = ring[head];
    try {
      if (!r.apply(s.event, s.line)) {
        if (options.sites) {  // frames may be defined after the failure: read them (not events)
          try {
            trace::trace_event rest;
            while (read(s)) rest = s.event;
          } catch (...) {
          }
        }
        return with_sites(r.report());
      }
    } catch (const replay_input_error& error) {
      throw trace::trace_error(source.name(), s.line, error.what(), n);
    }
    ++n;
    if (progress && (n & 0xFFFFF) == 0) progress(source.bytes_consumed(), source.total_bytes());
    // Refill the slot just applied with the event three ahead.
    if (read(s)) {
      r.prefetch(s.event, 1);
    } else {
      --count;
    }
    head = head == 2 ? 0 : head + 1;
    if (count > 1) r.prefetch(ring[head == 2 ? 0 : head + 1].event, 0);
  }
  if (pending) throw *pending;
  return with_sites(r.report());
}

// Replays events held in memory (tests, small traces).
replay_report replay_events(const std::vector<trace::trace_event>& events,
                            const replay_config& config, const device_spec& device,
                            const replay_options& options = {});

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_REPLAY_H_
