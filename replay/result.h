// The one result model of a replay: what the engine (replay.h) and the minimum-capacity search
// (min_capacity.h) find, per configuration, as every output writes it (result_json.h is its
// JSON; clpool_replay's text, SVG and page, and Python's clpool.replay, read the same structs).
#ifndef CLPOOL_REPLAY_RESULT_H_
#define CLPOOL_REPLAY_RESULT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device_model/profile.h"
#include "pool/pool_types.h"
#include "replay/config.h"
#include "trace/sites.h"
#include "trace/trace_event.h"

namespace clpool::replay {

using device_model::alloc_semantics;

// The memory one allocation site (one stack id; 0 = allocations without a stack) holds.
struct site_usage {
  std::uint64_t stack = 0;
  std::uint64_t requested_bytes = 0;  // what the program asked for
  std::uint64_t rounded_bytes =
      0;  // the blocks' sizes (the pool's bin rounding; = requested without a pool)
  // What the device's profile commits for these blocks, each rounded on its own (whole pages, or
  // pack granules for a shared request; = rounded on an exact-byte device). The room left in
  // partly filled shared pages is the device's, not a site's, and is not in it.
  std::uint64_t committed_bytes = 0;
  std::uint64_t blocks = 0;
};

// What a real device (--device opencl) said about itself, for the report: it behaves as it does,
// not as a profile says. Absent for sim and mockcl.
struct measured_device {
  std::string name;            // "PLATFORM / DEVICE"
  std::string driver_version;  // CL_DRIVER_VERSION
  std::uint64_t free_at_start = 0;
  std::string free_memory_source;  // "queried: NVML" or "assumed: CL_DEVICE_GLOBAL_MEM_SIZE ..."
  std::string failure_point;       // "first use (clEnqueueMigrateMemObjects: -4 CL_...)"
  std::uint64_t usable_bytes = 0;  // what it accepted, filled with nothing else held
  // How it answered a buffer one byte above its maximum allocation (device_spec::max_alloc):
  // "refused_for_size" (CL_INVALID_BUFFER_SIZE; the replay refuses such requests itself),
  // "accepted", or "unknown" (refused for memory); "" when it reports no maximum.
  std::string above_max_alloc;
};

// The device a replay ran on, as its report names it (replay_device::spec()).
struct device_spec {
  std::uint64_t capacity = unlimited;
  alloc_semantics semantics = alloc_semantics::immediate;
  std::uint64_t host_capacity = unlimited;  // budget for `host` (pinned) blocks
  // CL_DEVICE_MAX_MEM_ALLOC_SIZE (unlimited: not modelled). A pool makes no block above it (its
  // allocator's largest_block(), pool/allocator.h); where the profile enforces it
  // (max_alloc_enforced), a request above it is refused (oom_site::max_alloc).
  std::uint64_t max_alloc = unlimited;
  std::string backend = "sim";  // the device's name in reports: "sim", "mockcl" or "opencl"
  device_model::device_profile profile = {};  // how the device commits memory (default: exact)
  std::optional<measured_device> measured =
      std::nullopt;  // a real device's own account (then no profile)
};

// When a block the program released is free in a replay (FORMAT.md "Two moments of a free"). A
// trace of version 1 or 2 has one moment per free (its `free`), which every rule replays alike.
enum class free_moment : std::uint8_t {
  release,  // at the program's release: a device whose commands finish promptly (a GPU)
  wait,     // at the program's next wait after its release, or at the driver's free if earlier
  driver,   // at the driver's free, as the recording device gave the memory back
};

// Their names, as --frees-at and the JSON spell them, in enum order.
inline constexpr std::string_view free_moment_names[] = {"release", "wait", "driver"};
std::string_view to_string(free_moment moment);
std::optional<free_moment> parse_free_moment(std::string_view word);

// The moment the modelled device frees at: `release` where its profile's commands finish promptly,
// `wait` where they run only when the program waits (commands_finish = at_wait).
free_moment free_moment_of(const device_model::device_profile& profile);

// Where an out-of-memory happened.
enum class oom_site : std::uint8_t {
  allocator,  // the device refused the allocation (immediate semantics), after the pool's retries
  limit,      // the pool's own limit left no room, after its retries
  first_use,  // the allocation succeeded but committing it at first use did not fit (deferred)
  host,       // a `host` block did not fit in the host-pinned budget (device_spec::host_capacity)
  // The request is above the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE (device_spec::max_alloc) and
  // its profile enforces that: CL_INVALID_BUFFER_SIZE, which no capacity changes.
  max_alloc,
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
  // The trace says the recorded run failed here too: an alloc_failed, or for a `use` the layer's
  // "failure: first use of id N" comment.
  bool recorded_failure = false;
  std::uint64_t active_bytes = 0;          // requested bytes of live allocations
  std::uint64_t active_rounded_bytes = 0;  // their rounded bytes
  std::uint64_t held_bytes = 0;            // held by the pool at the failure
  std::uint64_t managed_bytes = 0;         // active rounded + held
  std::uint64_t device_used_bytes = 0;     // committed on the device
  std::uint64_t capacity = 0;
  std::uint64_t limit = unlimited;
  std::uint64_t held_before_bytes = 0;    // held in other bins when the request arrived
  std::uint64_t rounding_loss_bytes = 0;  // active_rounded_bytes - active_bytes (the pool's bins)
  std::uint64_t page_loss_bytes = 0;      // device committed - sizes committed (the device's pages)
  // Live blocks no command has used yet (a trace with first uses, version 4, on a device that
  // commits at first use): in active_bytes and active_rounded_bytes, but nothing on the device.
  std::uint64_t unused_bytes = 0, unused_rounded_bytes = 0;
  // Freed blocks the pool held that no command used: in held_bytes, nothing on the device.
  std::uint64_t held_unused_bytes = 0;
  std::uint64_t retries = 0;  // the pool's retries for this request
  std::string message;        // the pool's or the device's own words
  std::uint64_t stack = 0;    // the failing request's site (FORMAT.md "Sites"); 0: none
  // With replay_options::sites: per allocation site, what was live at the failure, and (with a
  // pool) the freed blocks the pool still held, largest first.
  std::vector<site_usage> live_sites;
  std::vector<site_usage> held_sites;

  // Refused for its size (oom_site::max_alloc, CL_INVALID_BUFFER_SIZE): no memory was short, so
  // no capacity changes it; the reports call it so rather than an out-of-memory.
  bool refused_for_size() const noexcept { return site == oom_site::max_alloc; }
};

// The capacity at an out-of-memory, summed (what the report and the page show, so that their
// numbers add up): device used = live blocks as requested + their rounding to the pool's bins +
// what the pool held + the device's page rounding (+ other: what those do not account for, 0 on
// the simulated and mock devices); capacity = device used + headroom + free. And what the failing
// request needed against what was free.
struct capacity_sum {
  std::uint64_t live_requested = 0;       // requested bytes of live blocks the device holds
  std::uint64_t unused = 0;               // live blocks no command has used yet: not in the sum
  std::uint64_t unused_bin_rounding = 0;  // their pool bins minus their requests: nor this
  std::uint64_t held_unused = 0;    // freed blocks the pool held that no command used: neither
  std::uint64_t bin_rounding = 0;   // their pool bins minus their requests (0 without a pool)
  std::uint64_t held = 0;           // freed blocks the pool held (0 without a pool)
  std::uint64_t page_rounding = 0;  // device committed - blocks' sizes (the profile's pages)
  std::uint64_t other = 0;          // device used beyond the four above
  std::uint64_t device_used = 0;
  std::uint64_t headroom = 0;  // what the driver never hands out (the profile's)
  bool headroom_known = true;  // false on a real device: its own headroom is in `free`
  std::uint64_t free = 0;      // capacity - device used - headroom
  std::uint64_t capacity = 0;
  // The failing request: its pool bin (= the request without a pool), and what the device would
  // commit for it (whole pages, or a new shared page for a request small enough to share one:
  // it failed because no shared page had room).
  std::uint64_t request_rounded = 0;
  std::uint64_t request_device = 0;
  bool request_takes_new_shared_page = false;
};

// The sum at `p`, a replay's out-of-memory on `device` (`pool`: through the pool). Nothing when
// the device is unbounded (the failure was the pool's limit or the host budget on an unbounded
// device, and there is no capacity to sum to).
std::optional<capacity_sum> capacity_sum_at(const oom_point& p, const device_spec& device,
                                            bool pool);

// Whether an alloc of `size` bytes is a sizeable one (at least 4 KiB) whose size is the top of a
// PyOpenCL pool bin (leading bits 4, e.g. 1114111 for 1 MiB): a trace recorded below a pool is
// full of them (replay_report::looks_recorded_below_a_pool).
bool is_sizeable_alloc(std::uint64_t size);
bool has_pool_bin_size(std::uint64_t size);

// What the whole trace holds, applied by a replay or not: a replay that stops early (an
// out-of-memory, replay_options::stop_after_event) reads on to its end, applying nothing
// (replay_stream), so that what the report says of the trace is of all of it.
struct trace_counts {
  std::uint64_t allocs = 0, frees = 0, releases = 0, waits = 0, uses = 0;
  std::uint64_t sized_allocs = 0, bin_sized_allocs = 0;  // is_sizeable_alloc, has_pool_bin_size
  // The trace ended in the zero-filled tail a recorder leaves when the program did not reach its
  // normal exit (trace::trace_reader::ended_in_zero_tail).
  bool cut_off = false;
  // Counts one event.
  void count(const trace::trace_event& e);
  // Blocks the trace leaves live: allocated and never freed.
  std::uint64_t live_at_end() const { return allocs > frees ? allocs - frees : 0; }
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
  std::uint64_t events = 0;  // events applied (through the failing one)
  std::uint64_t allocs = 0, frees = 0, recorded_failures = 0, free_held_calls = 0,
                stop_holding_calls = 0;
  std::uint64_t recorded_failures_that_fit = 0;  // alloc_failed events that succeeded here
  // alloc_failed events the recorded device refused for their size (CL_INVALID_BUFFER_SIZE):
  // counted apart from recorded_failures and not replayed (replayer::apply_size_refusal).
  std::uint64_t recorded_size_refusals = 0;
  // The trace's release and wait events (version 3), and the rule that placed each free: given
  // (replay_options::frees_at) or, when `frees_at_given` is false, the device's profile's.
  std::uint64_t releases = 0, waits = 0;
  // The whole trace's counts (these and the others of trace_counts), read on past an
  // out-of-memory (replay_stream counts the events it did not apply); `trace_counts_known` is
  // false when the rest could not be read (a bad line after the failure).
  trace_counts in_trace;
  bool trace_counts_known = false;
  free_moment frees_at = free_moment::release;
  bool frees_at_given = false;
  // The trace's first uses (version 4, FORMAT.md "First uses"): the kinds of block it records
  // them for ("buffer", "buffer svm"; empty: none), and the use events applied. Where the device
  // commits those kinds at first use, each block commits at its first use event.
  std::string first_use_kinds;
  std::uint64_t uses = 0;
  std::optional<oom_point> oom;  // the first out-of-memory; nothing when the replay was clean
  std::uint64_t peak_active_bytes = 0;
  // The event (0-based, among those applied) that first brought the live blocks to
  // peak_active_bytes; 0 when nothing was ever live. Replayed again up to it
  // (replay_options::stop_after_event), the end figures below are those at the peak.
  std::uint64_t peak_active_event = 0;
  std::uint64_t peak_managed_bytes = 0;
  std::uint64_t peak_device_bytes = 0;
  std::uint64_t peak_host_bytes = 0;  // `host` blocks, charged to the host budget
  std::uint64_t host_allocs = 0;      // `host` alloc events
  // Allocations of at least 4 KiB, and those whose size is the top of a PyOpenCL pool bin
  // (leading bits 4, e.g. 1114111 for 1 MiB): a trace recorded below a pool is full of them.
  std::uint64_t sized_allocs = 0, bin_sized_allocs = 0;
  std::uint64_t hits = 0, misses = 0;  // pool requests served from held blocks / by the device
  std::uint64_t allocator_allocations = 0, allocator_frees = 0, allocator_failures = 0;
  std::uint64_t oom_retries = 0;       // the pool's retries after freeing held memory
  std::uint64_t rescued_requests = 0;  // requests that failed first and succeeded after a retry
  // What was live where the replay ended (its last event, replay_options::stop_after_event, or
  // the out-of-memory): live allocations, as requested, and how many (`host` and `sub` blocks
  // take no device memory and are not in them). With replay_options::sites, the same per site,
  // largest first (the blocks, with a pool, not what it holds).
  std::uint64_t end_active_bytes = 0;
  std::uint64_t end_active_blocks = 0;
  // Of those, the blocks no command had used yet on a device that commits at first use (a
  // version-4 trace): nothing on the device, and in no site's figures.
  std::uint64_t end_unused_bytes = 0;
  std::uint64_t end_unused_blocks = 0;
  std::vector<site_usage> end_live_sites;
  bool stopped = false;  // ended at replay_options::stop_after_event
  // With clpool_replay --peak: per site, what was live at the peak (a second pass, stopped at
  // peak_active_event); `peak_asked` says it was asked for.
  // With replay_options::timeline, on a version-4 trace with a pool: the allocations (event
  // indices, in order) of a kind that commits at first use that the pool served with a block
  // the device had committed already (a hit after a use): committed from their allocation.
  std::vector<std::uint64_t> committed_at_allocation_events;
  bool peak_asked = false;
  std::vector<site_usage> peak_live_sites;
  std::uint64_t peak_unused_bytes = 0, peak_unused_blocks = 0;  // as end_unused_*, at the peak
  std::vector<timeline_point> timeline;  // empty unless replay_options::timeline
  // The last replay_options::timeline_tail_events events, one point each, oldest first (the
  // failing event last when there is one): the picture's zoom on the failure. Empty unless
  // replay_options::timeline.
  std::vector<timeline_point> timeline_tail;
  // The trace's frames and stacks (FORMAT.md "Sites"), read to its end or its failure; null for
  // inputs without sites.
  std::shared_ptr<const trace::site_table> sites;

  bool ok() const { return !oom.has_value(); }
  // The trace has release or wait events (version 3), up to the failure or after it: the report
  // names the rule that placed each free.
  bool has_releases() const { return releases + waits + in_trace.releases + in_trace.waits != 0; }
  // The sizeable allocations the pool warning judges by, and those of them with pool-bin sizes:
  // the whole trace's where it was read, else those replayed.
  std::uint64_t judged_sized_allocs() const {
    return trace_counts_known ? in_trace.sized_allocs : sized_allocs;
  }
  std::uint64_t judged_bin_sized_allocs() const {
    return trace_counts_known ? in_trace.bin_sized_allocs : bin_sized_allocs;
  }
  // True when most sizeable allocations have pool-bin sizes (at least 16 of them, over half):
  // the trace holds a pool's requests to the driver, not the application's.
  bool looks_recorded_below_a_pool() const {
    return judged_sized_allocs() >= 16 && 2 * judged_bin_sized_allocs() > judged_sized_allocs();
  }
  // The trace ended without its recorder's normal end and left blocks live (trace_counts): what
  // came after the cut, and whether those blocks would have been freed, is not in it.
  bool ends_cut_off_with_live_blocks() const {
    return trace_counts_known && in_trace.cut_off && in_trace.live_at_end() != 0;
  }
  // hits / (hits + misses), 0 when there were none.
  double hit_rate() const {
    return hits + misses == 0 ? 0.0
                              : static_cast<double>(hits) / static_cast<double>(hits + misses);
  }
};

struct min_capacity_result {
  bool found = false;
  std::uint64_t capacity = 0;  // the smallest clean capacity, a multiple of granule
  std::uint64_t granule = 0;
  std::uint64_t replays = 0;                       // full replays run
  std::string why_not;                             // when !found: why no capacity helps
  std::optional<replay_report> at_result;          // the clean replay at `capacity`
  std::optional<replay_report> one_granule_below;  // the failing replay at capacity - granule
};

// One configuration's results: the replay at the requested capacity (if one was given) and the
// minimum capacity search (if one was asked for).
// A real device's own account of how the last replay started, once the ballast that leaves its
// capacity free was placed: what its free-memory query said (where it has one), and what a fill
// up to one byte over the capacity took before the device refused it. On a device that commits
// memory in pages these can differ from the capacity asked for by up to a page.
struct replay_start {
  std::uint64_t free_at_start = 0;  // before the ballast, with a context open (measured_device's)
  std::optional<std::uint64_t> free_queried;
  std::uint64_t fill_accepted = 0;
};

// One replay of --trials: its capacity, and where it ran out (nothing: it replayed cleanly).
struct capacity_trial {
  std::uint64_t capacity = 0;
  std::optional<oom_point> oom;
  std::optional<replay_start> device_start;  // a real device's account
};

struct config_result {
  replay_config config;
  std::optional<replay_report> replay;
  std::optional<min_capacity_result> min_capacity;
  std::vector<capacity_trial> trials = {};  // --trials, in increasing capacity; empty without it
};

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_RESULT_H_
