// replayer's state and the handling of each event (replay.cc's replayer forwards to it): private to
// //replay:engine, a header of its own so that neither file outgrows its limit.
#ifndef CLPOOL_REPLAY_REPLAY_IMPL_H_
#define CLPOOL_REPLAY_REPLAY_IMPL_H_

#include "replay/free_schedule.h"
#include "replay/pool_adapters.h"
#include "replay/replay.h"
#include "replay/site_ledger.h"
#include "replay/timeline_sampler.h"

#include <algorithm>
#include <utility>

#include <string>
#include <string_view>

namespace clpool::replay {

using trace::trace_action;
using trace::trace_event;
using trace::trace_kind;

namespace internal {

struct raw_block {
  std::uint64_t handle = 0;  // 0: a host block (in host_live) or a sub-buffer
  std::uint64_t bytes = 0;
};

// A live host block: what it took on the host-pinned budget.
struct host_block {
  device_model::placement where;
  std::uint64_t bytes = 0;
};

// Whether a deferred device's profile refuses an SVM block at clSVMAlloc (svm_oom_at = creation),
// so that it is committed as it is allocated; a real device's replay uses buffers for every block.
inline bool svm_committed_at_creation(const device_spec& d) {
  return !d.measured && d.profile.svm_oom_at == device_model::refusal_point::creation;
}

}  // namespace internal

struct replayer::impl {
  using raw_block = internal::raw_block;
  using host_block = internal::host_block;
  using pool_type = memory_pool<device_allocator>;
  using allocation = pool_type::allocation;

  impl(const replay_config& c, std::unique_ptr<replay_device> own, replay_device* d,
       const replay_options& o)
      : config(c),
        options(o),
        owned(std::move(own)),
        device(d),
        deferred(d->defers_allocation()),
        svm_at_creation(deferred && internal::svm_committed_at_creation(d->spec())),
        schedule(o.frees_at.value_or(free_moment_of(d->spec().profile))),
        sampler(o.max_timeline_points, o.timeline_tail_events) {
    report.config = c;
    report.device = device->spec();
    report.frees_at = schedule.moment();
    report.frees_at_given = o.frees_at.has_value();
    // The device's profile rounds each block, for the sites' committed bytes.
    if (o.sites && !c.use_pool) ledger = std::make_unique<site_ledger>(report.device.profile);
    if (c.use_pool) {
      if (o.sites) ledger = std::make_unique<site_ledger>(report.device.profile);
      pool.emplace(device_allocator{device, ledger.get(), &commit_now, &handles},
                   pool_options{c.leading_bits, c.limit, c.trim});
      observer = std::make_shared<replay_observer>(&report.events);
      pool->set_observer(observer);
    }
  }

  ~impl() {
    // Allocations go back to the pool, then the pool returns everything to the device.
    slab.clear();
  }

  // A free slab slot for a new allocation (recycled, so the slab never outgrows the live set).
  std::uint32_t take_slot() {
    if (!free_slots.empty()) {
      const std::uint32_t i = free_slots.back();
      free_slots.pop_back();
      return i;
    }
    slab.emplace_back();
    return static_cast<std::uint32_t>(slab.size() - 1);
  }

  // A trace the reader would refuse (replay_events' callers may skip it): the event's id.
  [[noreturn]] static void bad_id(const char* action, std::uint64_t id, const char* why) {
    throw replay_input_error(std::string(action) + " of id " + std::to_string(id) + ", which " +
                             why);
  }
  [[noreturn]] static void not_live(std::uint64_t id) {
    bad_id("free", id, "is not live (never allocated, or already freed)");
  }
  [[noreturn]] static void not_live_release(std::uint64_t id) {
    bad_id("release", id, "is not live (never allocated, or already freed)");
  }
  [[noreturn]] static void not_live_use(std::uint64_t id) {
    bad_id("use", id, "is not live (never allocated, or already freed)");
  }
  [[noreturn]] static void already_live(std::uint64_t id) {
    bad_id("alloc", id, "is already live (allocated earlier and not freed)");
  }

  oom_point& start_oom(const trace_event& e, std::uint64_t line, oom_site site) {
    oom_point& p = report.oom.emplace();
    p.event_index = report.events - 1;
    p.seq = e.seq;
    p.line = line;
    p.action = e.action;
    p.id = e.id;
    p.requested_bytes = e.size;
    p.rounded_bytes = config.use_pool ? pool_block_bytes(config, device->spec(), e.size) : e.size;
    p.site = site;
    p.recorded_failure = e.action == trace_action::alloc_failed;
    p.device_used_bytes = device->used_bytes();
    p.page_loss_bytes = device->used_bytes() - device->requested_bytes();
    p.unused_bytes = unused_bytes;
    p.unused_rounded_bytes = unused_rounded_bytes;
    p.held_unused_bytes = handles.held_unused_bytes;
    p.capacity = device->capacity();
    p.limit = config.limit;
    p.stack = e.stack;
    if (ledger) {
      p.live_sites = ledger->live_sites();
      p.held_sites = ledger->held_sites();
    }
    return p;
  }

  // A request the device refuses for its size, before any memory (CL_INVALID_BUFFER_SIZE): above
  // its maximum allocation, where the profile enforces that. Records the failure; a sub-buffer
  // (a view) is never refused here.
  bool refused_for_size(const trace_event& e, std::uint64_t line);

  // One request through the pool. `slot` receives the allocation (null: release it at once).
  void pool_alloc(const trace_event& e, std::uint64_t line, allocation* slot) {
    const std::uint64_t held_before = observer->last.held_bytes;
    const std::uint64_t retries_before = observer->retries;
    const std::uint64_t peak_before = observer->peak_managed;
    const std::uint64_t peak_active_before = observer->peak_active;
    const std::uint64_t peak_active_event_before = observer->peak_active_event;
    commit_now = committed_at_allocation(e);
    try {
      allocation a = pool->allocate(e.size);
      if (tracks_first_uses() && a.has_block()) handles.not_held(a.handle());  // handed out
      if (observer->retries != retries_before) ++report.rescued_requests;
      if (deferred && a.has_block() && !commits_at_use(e.kind) && !device->first_use(a.handle())) {
        // Deferred: the pool thinks it has the block; the device cannot commit it. Figures
        // exclude the failing request, as the pool's own out-of-memory reports do: it is not
        // active, and the block it got is a failed allocator call, not a miss (snapshot()).
        pool_counters c = observer->last;
        failed_at_first_use = observer->last_kind;
        observer->peak_managed = peak_before;  // the failed request never really fit
        observer->peak_active = peak_active_before;
        observer->peak_active_event = peak_active_event_before;
        oom_point& p = start_oom(e, line, oom_site::first_use);
        p.active_bytes = c.active_bytes - a.size();
        p.active_rounded_bytes = c.active_rounded_bytes - a.rounded_size();
        p.held_bytes = c.held_bytes;
        p.managed_bytes = c.managed_bytes - a.rounded_size();
        p.held_before_bytes = held_before;
        p.rounding_loss_bytes = p.active_rounded_bytes - p.active_bytes;
        p.message = commit_refused(a.rounded_size());
        return;
      }
      if (slot != nullptr) {
        *slot = std::move(a);
      } else {
        ++report.recorded_failures_that_fit;
        // Straight back to the pool: a block awaiting its first use holds nothing there.
        if (a.has_block() && settle_first_use(e.kind, a.handle()))
          handles.hold_unused(a.handle(), a.rounded_size());
      }
    } catch (const out_of_memory& x) {
      const oom_report& r = x.report();
      oom_point& p =
          start_oom(e, line, r.cause == oom_cause::limit ? oom_site::limit : oom_site::allocator);
      p.rounded_bytes = r.rounded_bytes;
      p.active_bytes = r.active_bytes;
      p.active_rounded_bytes = r.active_rounded_bytes;
      p.held_bytes = r.held_bytes;
      p.managed_bytes = r.managed_bytes;
      p.held_before_bytes = held_before;
      p.rounding_loss_bytes = r.active_rounded_bytes - r.active_bytes;
      p.retries = observer->retries - retries_before;
      p.message = x.what();
    }
  }

  // One request straight to the device. `slot` receives the block (null: free it at once).
  void raw_alloc(const trace_event& e, std::uint64_t line, raw_block* slot) {
    if (e.size == 0) return;
    std::uint64_t handle = 0;
    try {
      const char* where = committed_at_allocation(e);
      handle =
          where != nullptr ? device->allocate_committed(e.size, where) : device->allocate(e.size);
    } catch (const allocator_out_of_memory& x) {
      ++report.allocator_failures;
      fill_raw_oom(start_oom(e, line, oom_site::allocator), x.what());
      return;
    }
    if (deferred && !commits_at_use(e.kind) && !device->first_use(handle)) {
      device->deallocate(handle, e.size);
      ++report.allocator_failures;  // the block the device could not commit
      fill_raw_oom(start_oom(e, line, oom_site::first_use),
                   "the device could not commit " + std::to_string(e.size) + " bytes at first use");
      return;
    }
    ++report.allocator_allocations;
    if (slot == nullptr) {
      device->deallocate(handle, e.size);
      ++report.allocator_frees;
      ++report.recorded_failures_that_fit;
      return;
    }
    *slot = raw_block{handle, e.size};
    raw_active += e.size;
    ++raw_blocks;
    if (raw_active > report.peak_active_bytes) {
      report.peak_active_bytes = raw_active;
      report.peak_active_event = report.events - 1;
    }
  }

  // Why a deferred device refused a block of `bytes` at its first use (a pool's block, or a use
  // event's).
  std::string commit_refused(std::uint64_t bytes) const {
    return "the device could not commit " + std::to_string(bytes) +
           " bytes at first use: " + std::to_string(device->used_bytes()) + " of " +
           std::to_string(device->capacity()) + " bytes committed";
  }

  // The pool's figures as they stand, for an out-of-memory outside its own allocate().
  static void fill_pool_oom(oom_point& p, const pool_counters& c) {
    p.active_bytes = c.active_bytes;
    p.active_rounded_bytes = c.active_rounded_bytes;
    p.held_bytes = c.held_bytes;
    p.managed_bytes = c.managed_bytes;
    p.rounding_loss_bytes = c.active_rounded_bytes - c.active_bytes;
  }

  void fill_raw_oom(oom_point& p, std::string message) {
    p.active_bytes = p.active_rounded_bytes = p.managed_bytes = raw_active;
    p.message = std::move(message);
  }

  // A `host` block: charged to the host-pinned budget only (its own ledger, in exact bytes, as
  // mockcl keeps it). Returns false at its out-of-memory; records a live block in host_live.
  bool host_alloc(const trace_event& e, std::uint64_t line) {
    ++report.host_allocs;
    if (!host_memory)
      host_memory.emplace(device_model::device_profile{}, report.device.host_capacity);
    host_block b{{}, e.size};
    if (!host_memory->try_commit(e.size, b.where)) {
      oom_point& p = start_oom(e, line, oom_site::host);
      p.message = "the host-pinned budget could not take " + std::to_string(e.size) +
                  " bytes: " + std::to_string(host_memory->committed()) + " of " +
                  std::to_string(host_memory->capacity()) + " bytes in use";
      if (config.use_pool) {
        fill_pool_oom(p, observer->last);
      } else {
        p.active_bytes = p.active_rounded_bytes = p.managed_bytes = raw_active;
      }
      return false;
    }
    if (e.action == trace_action::alloc_failed) {
      host_memory->release(b.where, b.bytes);
      ++report.recorded_failures_that_fit;
      return true;
    }
    host_live.insert(e.id, b);
    report.peak_host_bytes = host_memory->peak_committed();
    return true;
  }

  // Frees the host block `id` if there is one.
  void host_free(std::uint64_t id) {
    host_block b;
    if (report.host_allocs != 0 && host_live.erase(id, &b)) host_memory->release(b.where, b.bytes);
  }

  // A block the program allocates: through the pool or straight to the device, or charged to the
  // host budget (a `host` block).
  void alloc(const trace_event& e, std::uint64_t line);

  // Gives block `id` back (the pool or the device), when the rule says it is free.
  void free(std::uint64_t id) {
    const bool was_unused = take_unused(id);
    if (config.use_pool) {
      std::uint32_t i = 0;
      if (!live.erase(id, &i)) not_live(id);
      if (ledger) ledger->on_free(id, /*pool_holds=*/true);  // until the device gets it back
      // The pool holds a block no command used (the allocator forgets it if the pool does not).
      if (was_unused) handles.hold_unused(slab[i].handle(), slab[i].rounded_size());
      slab[i].release();  // gives the block back to the pool
      free_slots.push_back(i);
      host_free(id);
    } else {
      raw_block b;
      if (!raw_live.erase(id, &b)) not_live(id);
      if (ledger) ledger->on_free(id, /*pool_holds=*/false);
      if (b.handle != 0) {
        device->deallocate(b.handle, b.bytes);
        raw_active -= b.bytes;
        --raw_blocks;
        ++report.allocator_frees;
      } else {
        host_free(id);  // a host block (nothing for a sub-buffer)
      }
    }
  }

  // A version-4 use: where the device commits a block of this kind at first use, and the trace
  // records those first uses, the block commits here (FORMAT.md "First uses"); a block already
  // committed, or of another kind, or on a device that commits at allocation, takes nothing.
  void use(const trace_event& e, std::uint64_t line);

  // A version-3 release: the block stays live until the rule frees it (free_schedule.h).
  void release(const trace_event& e) {
    const bool is_live =
        config.use_pool ? live.find(e.id) != nullptr : raw_live.find(e.id) != nullptr;
    // A block freed early is no longer in the maps: free_schedule names the second release.
    if (!is_live && !schedule.freed_early(e.id)) not_live_release(e.id);
    on_schedule(e);
  }

  void on_schedule(const trace_event& e) {
    try {
      schedule.on_event(e, [this](std::uint64_t id) { free(id); });
    } catch (const std::invalid_argument& x) {
      throw replay_input_error(x.what());
    }
  }

  bool apply(const trace_event& e, std::uint64_t line) {
    if (report.oom || report.stopped) return false;
    ++report.events;
    switch (e.action) {
      case trace_action::alloc:
        ++report.allocs;
        if (is_sizeable_alloc(e.size)) {
          ++report.sized_allocs;
          report.bin_sized_allocs += has_pool_bin_size(e.size) ? 1 : 0;
        }
        alloc(e, line);
        break;
      case trace_action::alloc_failed:
        ++report.recorded_failures;
        if (refused_for_size(e, line)) break;
        if (e.kind == trace_kind::host) {
          host_alloc(e, line);
        } else if (config.use_pool) {
          pool_alloc(e, line, nullptr);
        } else {
          raw_alloc(e, line, nullptr);
        }
        break;
      case trace_action::free:
        ++report.frees;
        on_schedule(e);
        break;
      case trace_action::release:
        ++report.releases;
        release(e);
        break;
      case trace_action::wait:
        ++report.waits;
        on_schedule(e);
        break;
      case trace_action::use:
        use(e, line);
        break;
      case trace_action::free_held:
        ++report.free_held_calls;
        if (pool) pool->free_held();
        break;
      case trace_action::stop_holding:
        ++report.stop_holding_calls;
        if (pool) pool->stop_holding();
        break;
    }
    return finish_event();
  }

  bool apply_size_refusal() {
    if (report.oom || report.stopped) return false;
    ++report.events;
    ++report.recorded_size_refusals;
    return finish_event();
  }

  // What follows every event applied: the timeline's sample, and the stop after an event.
  bool finish_event() {
    if (options.timeline) sample();
    if (options.stop_after_event && report.events > *options.stop_after_event)
      report.stopped = true;
    return !report.oom && !report.stopped;
  }

  void sample() {
    const std::uint64_t event = report.events - 1;
    if (config.use_pool) {
      const pool_counters& c = observer->last;
      sampler.add(event, c.active_bytes, c.held_bytes, c.managed_bytes, device->used_bytes());
    } else {
      sampler.add(event, raw_active, 0, raw_active, device->used_bytes());
    }
  }

  replay_report snapshot() const;

  replay_config config;
  replay_options options;
  replay_report report;
  // Destroyed last to first: live blocks go back to the pool, the pool to the device.
  std::unique_ptr<replay_device> owned;
  replay_device* device;
  bool deferred;  // call first_use() after each allocation
  // An SVM block is committed as it is allocated, and refused there (the profile's svm_oom_at =
  // creation on a deferred device; a real device's replay uses buffers for every block).
  bool svm_at_creation;
  // The pool's allocator: this request is such a block, and where it is committed; else null.
  const char* commit_now = nullptr;
  // How the pool served the request whose block the device then could not commit (pool_alloc):
  // a hit or a miss the pool counted, which the report does not.
  std::optional<pool_event_kind> failed_at_first_use;
  // The kinds whose blocks commit at their first `use` event rather than as they are allocated:
  // those the trace records first uses of (set_first_use_kinds), on a device that defers them.
  bool buffers_at_use = false, svm_at_use = false;
  // The live blocks that commit at their first use and have had none yet, with their sizes
  // (requested, and the pool's bin), and the sums of those sizes.
  struct unused_block {
    std::uint64_t bytes = 0, rounded = 0;
  };
  trace::flat_id_map<unused_block> unused;
  first_use_handles handles;  // the pool's blocks, when a version-4 trace records first uses
  std::uint64_t unused_bytes = 0, unused_rounded_bytes = 0;
  void add_unused(std::uint64_t id, std::uint64_t bytes, std::uint64_t rounded) {
    if (unused.insert(id, {bytes, rounded}) == nullptr) return;
    unused_bytes += bytes;
    unused_rounded_bytes += rounded;
  }
  // Forgets block `id` as unused (its first use committed it, or it is freed): whether it was.
  bool take_unused(std::uint64_t id) {
    unused_block u;
    if (!unused.erase(id, &u)) return false;
    unused_bytes -= u.bytes;
    unused_rounded_bytes -= u.rounded;
    return true;
  }
  // A version-4 trace records first uses: the pool's blocks' state is kept (first_use_handles).
  bool tracks_first_uses() const { return buffers_at_use || svm_at_use; }
  // Whether the pool's block `handle`, handed out for a block of kind `k`, awaits its first use
  // (its kind commits there and the device has not committed it); else it is committed now.
  bool settle_first_use(trace_kind k, std::uint64_t handle) {
    if (!tracks_first_uses()) return false;
    if (commits_at_use(k) && handles.committed.find(handle) == nullptr) return true;
    handles.committed.insert(handle, 1);
    return false;
  }
  bool commits_at_use(trace_kind k) const {
    return (k == trace_kind::buffer && buffers_at_use) || (k == trace_kind::svm && svm_at_use);
  }
  // Whether a request's block is committed as it is allocated, and where (the out-of-memory's
  // words); null when the device commits it where it does.
  const char* committed_at_allocation(const trace_event& e) const;  // replay.cc

  free_schedule schedule;  // when released blocks are free (version 3)
  std::unique_ptr<site_ledger>
      ledger;  // with options.sites; outlives the pool, which reports to it
  std::optional<pool_type> pool;
  std::shared_ptr<replay_observer> observer;
  // Live allocations sit in a dense slab; the id map holds 4-byte slab indices, so its probes and
  // backward shifts touch 16-byte slots instead of whole allocations (a measured ~10-20% of replay
  // time went to that map).
  trace::flat_id_map<std::uint32_t> live;
  std::vector<allocation> slab;
  std::vector<std::uint32_t> free_slots;
  trace::flat_id_map<raw_block> raw_live;
  std::uint64_t raw_active = 0;
  std::uint64_t raw_blocks = 0;                            // live device blocks (raw_active's)
  std::optional<device_model::device_memory> host_memory;  // the host-pinned budget's ledger
  trace::flat_id_map<host_block> host_live;                // live host blocks

  timeline_sampler sampler;
};

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_REPLAY_IMPL_H_
