// The replay engine: runs a trace through a configuration (the pool, or no pool) on a replay
// device and reports whether it ran out of memory, where, and why.
//
//   trace_reader reader("run.trace", {.check_liveness = false});
//   replay_report r = replay_stream(reader, parse_config("pool:lb=4"),
//                                   {.capacity = 4ull << 30, .semantics =
//                                   alloc_semantics::immediate});
//   if (r.oom) ... r.oom->event_index, r.oom->rounded_bytes, ...
//
// What each trace action does: alloc -> allocate (a `sub` block gets no device memory; a `host`
// block, host-pinned memory, is charged to the separate host budget, never to the device or the
// pool, as mockcl and the layer's budget do);
// alloc_failed -> allocate, then release at once (the recorded run failed here; if the replay
// fails too that is its out-of-memory), except one refused for its size (CL_INVALID_BUFFER_SIZE,
// as the recorder's failure comment says), which is only counted; free -> release; free_held /
// stop_holding -> the pool's calls (nothing without a pool); release and wait (version 3) ->
// release where the rule of replay_options::frees_at puts the block's free (free_schedule.h).
// Replay stops at the first out-of-memory.
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
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "pool/memory_pool.h"
#include "replay/config.h"
#include "replay/device.h"
#include "replay/result.h"
#include "trace/id_map.h"
#include "trace/trace_event.h"
#include "trace/trace_reader.h"

namespace clpool::replay {

// The input broke a rule the engine depends on (alloc of a live id, free of an id that is not
// live). replay_stream() turns it into a trace_error naming the file and line.
class replay_input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct replay_options {
  bool timeline = false;                   // sample active/held/managed bytes for a picture
  std::size_t max_timeline_points = 1024;  // downsampled (keeping maxima) to at most this many
  std::size_t timeline_tail_events = 64;   // kept at full resolution in timeline_tail
  bool sites = false;  // attribute live and held memory to allocation sites at an out-of-memory
  // The user's patterns of library frames, which never name a site (trace/library_frames.h).
  std::vector<std::string> library_patterns = {};
  // How many innermost program frames make a site (--site-frames; trace::site_table::site_frames).
  std::size_t site_frames = 1;
  // When a block the program released is free (free_schedule.h); nothing: the moment the
  // device's profile predicts (free_moment_of).
  std::optional<free_moment> frees_at = {};
  // Stop after the event with this 0-based index, as if the input ended there: the report's end
  // figures (end_active_bytes, end_live_sites) are then those of that moment, e.g. the peak's
  // (replay_report::peak_active_event). apply() returns false from then on.
  std::optional<std::uint64_t> stop_after_event = {};
  // replay_stream calls its progress function every this many events read (a power of two):
  // often enough for a caller that checks for an interrupt there (clpool.replay's Ctrl-C).
  std::uint64_t progress_interval = std::uint64_t{1} << 20;
};

// Applies events one at a time. Single-threaded.
class replayer {
 public:
  // Replays on `device` (from a device_backend's open()), which the replayer owns. Throws
  // clpool::argument_error for a pool configuration the pool refuses.
  replayer(const replay_config& config, std::unique_ptr<replay_device> device,
           replay_options options = {});
  // Replays on a simulated_device as `device` describes it.
  replayer(const replay_config& config, const device_spec& device, replay_options options = {});
  // Replays on `device`, which must outlive the replayer.
  replayer(const replay_config& config, replay_device& device, replay_options options = {});
  ~replayer();
  replayer(const replayer&) = delete;
  replayer& operator=(const replayer&) = delete;

  // Applies one event read from `line` (0 if none). Returns false once the replay has run out of
  // memory (this event or an earlier one; later events are ignored). Throws replay_input_error
  // for an alloc of a live id or a free of an id that is not live, changing nothing.
  bool apply(const trace::trace_event& event, std::uint64_t line = 0);

  // Applies an alloc_failed the recorded device refused for its size (trace::is_size_refusal:
  // CL_INVALID_BUFFER_SIZE, above its CL_DEVICE_MAX_MEM_ALLOC_SIZE). No memory was involved and
  // the replay does not model that limit, so nothing is allocated: the event is counted
  // (replay_report::recorded_size_refusals), never an out-of-memory nor a failure that fits.
  // Returns as apply() does.
  bool apply_size_refusal(const trace::trace_event& event);

  // The kinds of block whose first uses the trace records (its `# first_uses:` comment, version
  // 4: "buffer", "svm" or both, blank-separated; other words are ignored). Called before the
  // first event: on a device that commits those kinds at first use, such a block commits at its
  // first `use` event rather than as it is allocated.
  void set_first_use_kinds(std::string_view kinds);

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
namespace detail {
// The whole trace's counts of the events `report` applied (replay_report::in_trace), to which a
// replay that stopped early adds those it did not apply.
trace_counts applied_counts(const replay_report& report);
// Whether `source` ended in a recorder's zero-filled tail (a trace_reader's say; others: no).
template <class Source>
bool ended_in_zero_tail(const Source& source) {
  if constexpr (requires { source.ended_in_zero_tail(); }) {
    return source.ended_in_zero_tail();
  } else {
    return false;
  }
}
// `report` with the sites of a trace that has them (the RMM importer has none), read once the
// replay is done.
template <class Source>
replay_report with_sites(const Source& source, const replay_options& options,
                         replay_report report) {
  if constexpr (requires { source.sites(); }) {
    if (!source.sites().empty()) {
      auto table = std::make_shared<trace::site_table>(source.sites());
      table->set_library_patterns(options.library_patterns);
      table->set_site_frames(options.site_frames);
      report.sites = std::move(table);
    }
  }
  return report;
}
// Which kinds' first uses the trace records (its `# first_uses:` comment before the first event,
// version 4 only), for `r`.
template <class Source>
void take_first_uses(const Source& source, replayer& r) {
  if constexpr (requires {
                  source.metadata();
                  source.version();
                }) {
    if (source.version() < trace::first_use_format_version) return;
    for (const auto& [key, value] : source.metadata()) {
      if (key == "first_uses") return r.set_first_use_kinds(value);
    }
  }
}
// What the recorded run was refused, as the recorder's `# failure:` comments say (a comment
// belongs to the event before it): the live blocks whose first use was refused (a use event
// followed by the layer's "first use of id N ..." comment, FORMAT.md "First uses"), and the
// alloc_failed events refused for their size ("seq N status -61 ...": trace::is_size_refusal).
// Read from every comment while this watches the source, not only the first 256 its metadata()
// keeps (trace::comment_watch). A block leaves the first-use set when its free is applied, and an
// alloc_failed leaves the other when it is applied, so both are bounded by the live set and the
// lookahead as the rest of the engine is. A source without comments (the RMM importer) has none.
template <class Source>
class recorded_refusals {
 public:
  explicit recorded_refusals(Source& source)
      : watch_(source, [this](std::string_view key, std::string_view value) {
          if (key == "failure") on_failure(value);
        }) {}

  // The event the source returned last: the comments read before the next one are its. It must
  // stay where it is until the next event is read (replay_stream's ring reads into another slot).
  void read(const trace::trace_event* e) { last_read_ = e; }
  // Applies `e` to `r`: as a size refusal when it is an alloc_failed the recorded device refused
  // for its size (its comment was read with the lookahead; then forgotten), else as any event.
  // Returns what replayer::apply returns.
  bool apply(replayer& r, const trace::trace_event& e, std::uint64_t line) {
    const bool refused_size = e.action == trace::trace_action::alloc_failed &&
                              !size_refusals_.empty() && size_refusals_.erase(e.seq) != 0;
    return refused_size ? r.apply_size_refusal(e) : r.apply(e, line);
  }
  // An event the replay applied: a freed block's refusals are forgotten.
  void applied(const trace::trace_event& e) {
    if (e.action == trace::trace_action::free && !ids_.empty()) ids_.erase(e.id);
  }
  // At a first use that does not fit: whether the recorded run was refused that first use too.
  void mark(replay_report& report) const {
    if (report.oom && report.oom->action == trace::trace_action::use &&
        ids_.count(report.oom->id) != 0) {
      report.oom->recorded_failure = true;
    }
  }

 private:
  void on_failure(std::string_view value) {
    if (last_read_ == nullptr) return;
    const trace::trace_event& e = *last_read_;
    last_read_ = nullptr;  // the first failure comment after an event is its (FORMAT.md)
    if (e.action == trace::trace_action::use) {
      if (trace::first_use_failure_id(value) == e.id) ids_.insert(e.id);
    } else if (trace::is_size_refusal(e, value)) {
      size_refusals_.insert(e.seq);
    }
  }

  const trace::trace_event* last_read_ = nullptr;
  std::unordered_set<std::uint64_t> ids_;            // blocks whose first use was refused
  std::unordered_set<std::uint64_t> size_refusals_;  // seqs of alloc_failed refused for size
  trace::comment_watch<Source> watch_;  // last: it stops calling on_failure before they go
};
template <class Source>
replay_report replay_stream(Source& source, replayer& r, const replay_options& options,
                            const progress_fn& progress) {
  // Two events of lookahead hide most of the live set's memory latency: the id map's slot for event
  // i + 2 and the block of i + 1 are prefetched while i is applied. A read error in the lookahead
  // is held until the events before it are applied: results and errors are a plain loop's.
  struct slot {
    trace::trace_event event;
    std::uint64_t line = 0;
  };
  slot ring[3];
  std::optional<trace::trace_error> pending;
  recorded_refusals<Source> refused(source);  // before the first comment is read
  const auto read = [&](slot& s) {
    if (pending) return false;
    try {
      if (!source.next(s.event)) return false;
      s.line = source.line();
      refused.read(&s.event);
      return true;
    } catch (const trace::trace_error& error) {
      pending = error;
      return false;
    }
  };
  const auto with_sites = [&source, &options](replay_report report) {
    return detail::with_sites(source, options, std::move(report));
  };
  int count = 0;  // events in the ring, starting at `head`
  int head = 0;
  if (read(ring[0])) count = 1;
  take_first_uses(source, r);  // the comments before the first event are read by now
  while (count < 3 && read(ring[count])) ++count;
  if (count > 1) r.prefetch(ring[1].event, 0);
  if (count > 2) r.prefetch(ring[2].event, 1);
  std::uint64_t n = 0;
  while (count > 0) {
    slot& s = ring[head];
    try {
      if (!refused.apply(r, s.event, s.line)) {
        replay_report report = r.report();
        refused.mark(report);  // the comments after the failing event are read by now (lookahead)
        // Frames may be defined after the failure, and what the report says of the trace is of
        // all of it (releases up to the failure: 23 of 74; the uses, the pool warning's
        // allocations, how it ended): read on, applying nothing.
        report.in_trace = applied_counts(report);
        for (int k = 1; k < count; ++k) report.in_trace.count(ring[(head + k) % 3].event);
        while (read(s)) {
          report.in_trace.count(s.event);
          if (progress && (++n & (options.progress_interval - 1)) == 0) {
            progress(source.bytes_consumed(), source.total_bytes());
          }
        }
        report.trace_counts_known = !pending;
        report.in_trace.cut_off = !pending && ended_in_zero_tail(source);
        return with_sites(std::move(report));
      }
    } catch (const replay_input_error& error) {
      throw trace::trace_error(source.name(), s.line, error.what(), n);
    }
    refused.applied(s.event);
    ++n;
    if (progress && (n & (options.progress_interval - 1)) == 0) {
      progress(source.bytes_consumed(), source.total_bytes());
    }
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
  replay_report report = r.report();
  report.in_trace = applied_counts(report);
  report.in_trace.cut_off = ended_in_zero_tail(source);
  report.trace_counts_known = true;
  return with_sites(std::move(report));
}
}  // namespace detail

// Replays `source` on `device` (from a device_backend's open()).
template <class Source>
replay_report replay_stream(Source& source, const replay_config& config,
                            std::unique_ptr<replay_device> device,
                            const replay_options& options = {}, const progress_fn& progress = {}) {
  replayer r(config, std::move(device), options);
  return detail::replay_stream(source, r, options, progress);
}

// Replays `source` on a simulated_device as `device` describes it.
template <class Source>
replay_report replay_stream(Source& source, const replay_config& config, const device_spec& device,
                            const replay_options& options = {}, const progress_fn& progress = {}) {
  replayer r(config, device, options);
  return detail::replay_stream(source, r, options, progress);
}

// Whether the replay `r` committed a block of `kind` at its first `use` event rather than as it
// was allocated: its trace records that kind's first uses (replayer::set_first_use_kinds, its
// report's first_use_kinds) and its device commits such blocks at first use. One rule for the
// replay and for what draws its blocks (the page).
bool commits_at_first_use(const replay_report& r, trace::trace_kind kind);

// The block a replay's pool makes for a request of `bytes` (`config` with a pool): its bin's size,
// or `bytes` itself in the bin that straddles the device's maximum allocation (pool/allocator.h,
// device_spec::max_alloc). One rule for the replay and for what draws its blocks (the page).
std::uint64_t pool_block_bytes(const replay_config& config, const device_spec& device,
                               std::uint64_t bytes);

// Replays events held in memory (tests, small traces). There are no comments here: every
// alloc_failed is replayed as an allocation, a size refusal too (leave those out, as the
// followed session does, or call replayer::apply_size_refusal for them).
replay_report replay_events(const std::vector<trace::trace_event>& events,
                            const replay_config& config, const device_spec& device,
                            const replay_options& options = {});
replay_report replay_events(const std::vector<trace::trace_event>& events,
                            const replay_config& config, std::unique_ptr<replay_device> device,
                            const replay_options& options = {});

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_REPLAY_H_
