#include "replay/replay.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>

#include "replay/replay_impl.h"

namespace clpool::replay {

using trace::trace_action;
using trace::trace_event;
using trace::trace_kind;

std::uint64_t pool_block_bytes(const replay_config& config, const device_spec& device,
                               std::uint64_t bytes) {
  const std::uint64_t largest = device.max_alloc;
  if (largest != unlimited &&
      bin_number(bytes, config.leading_bits) == straddling_bin(largest, config.leading_bits))
    return bytes;
  return rounded_size(bytes, config.leading_bits);
}

bool replayer::impl::refused_for_size(const trace_event& e, std::uint64_t line) {
  const device_spec& d = report.device;
  if (e.kind == trace_kind::sub || d.max_alloc == unlimited ||
      !device_model::exceeds_max_alloc(d.profile, e.size, d.max_alloc))
    return false;
  oom_point& p = start_oom(e, line, oom_site::max_alloc);
  if (config.use_pool) {
    fill_pool_oom(p, observer->last);
  } else {
    p.active_bytes = p.active_rounded_bytes = p.managed_bytes = raw_active;
  }
  p.message = "CL_INVALID_BUFFER_SIZE: " + std::to_string(e.size) +
              " bytes is above the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE, " +
              std::to_string(d.max_alloc) + " bytes, which the " +
              (d.measured ? "device" : "profile") + " enforces; no capacity changes that";
  return true;
}

void replayer::impl::alloc(const trace_event& e, std::uint64_t line) {
  if (schedule.freed_early(e.id)) already_live(e.id);  // released and freed early, not yet `free`d
  if (refused_for_size(e, line)) return;
  if (e.kind == trace_kind::host) {
    if (config.use_pool) {
      std::uint32_t* index = live.insert(e.id, 0);
      if (index == nullptr) already_live(e.id);
      *index = take_slot();  // stays empty: the pool never sees host blocks
      if (!host_alloc(e, line)) {
        std::uint32_t i = 0;
        live.erase(e.id, &i);
        free_slots.push_back(i);
      }
    } else {
      raw_block* slot = raw_live.insert(e.id, raw_block());
      if (slot == nullptr) already_live(e.id);
      if (!host_alloc(e, line)) {
        raw_live.erase(e.id);
        return;
      }
      *slot = raw_block{0, 0};  // handle 0: its bytes are in host_live
    }
    return;
  }
  if (config.use_pool) {
    std::uint32_t* index = live.insert(e.id, 0);
    if (index == nullptr) already_live(e.id);
    *index = take_slot();
    if (e.kind == trace_kind::sub) return;  // a view of another block: no device memory
    const std::uint32_t i = *index;
    pool_alloc(e, line, &slab[i]);
    if (report.oom) {
      live.erase(e.id);
      free_slots.push_back(i);
    } else if (slab[i].has_block()) {
      const std::uint64_t handle = slab[i].handle();
      const bool awaits_use = settle_first_use(e.kind, handle);
      if (awaits_use) add_unused(e.id, e.size, slab[i].rounded_size());
      // A block of a kind that commits at first use, handed out committed (the page draws it
      // from here, not from a use).
      if (!awaits_use && options.timeline && commits_at_use(e.kind))
        report.committed_at_allocation_events.push_back(report.events - 1);
      if (ledger)
        ledger->on_alloc(e.id, e.stack, e.size, slab[i].rounded_size(), handle, awaits_use);
    }
  } else {
    raw_block* slot = raw_live.insert(e.id, raw_block());
    if (slot == nullptr) already_live(e.id);
    if (e.kind == trace_kind::sub) return;
    raw_alloc(e, line, slot);
    if (report.oom) {
      raw_live.erase(e.id);
    } else if (slot->handle != 0) {
      const bool awaits_use = commits_at_use(e.kind);
      if (awaits_use) add_unused(e.id, e.size, e.size);
      if (ledger) ledger->on_alloc(e.id, e.stack, e.size, e.size, slot->handle, awaits_use);
    }
  }
}

void replayer::impl::use(const trace_event& e, std::uint64_t line) {
  ++report.uses;
  bool is_live = false;
  std::uint64_t handle = 0;  // the device block under the trace's, where it has one
  if (config.use_pool) {
    if (const std::uint32_t* i = live.find(e.id)) {
      is_live = true;
      if (slab[*i].has_block()) handle = slab[*i].handle();
    }
  } else if (const raw_block* b = raw_live.find(e.id)) {
    is_live = true;
    handle = b->handle;
  }
  if (!is_live) {
    if (schedule.freed_early(e.id)) return;  // released, and freed at the release (--frees-at)
    not_live_use(e.id);
  }
  // Only a block its own alloc marked as committing at first use (its kind, not the event's),
  // and only its first use, commits.
  const unused_block* u = unused.find(e.id);
  if (u == nullptr) return;
  const unused_block block = *u;
  if (device->first_use(handle)) {
    take_unused(e.id);
    if (config.use_pool) handles.committed.insert(handle, 1);
    if (ledger) ledger->on_use(e.id);
    return;
  }
  oom_point& p = start_oom(e, line, oom_site::first_use);
  p.requested_bytes = block.bytes;  // the block's, whatever the event says
  if (config.use_pool) {
    fill_pool_oom(p, observer->last);
    p.rounded_bytes = block.rounded;
    p.held_before_bytes = p.held_bytes;
    p.message = commit_refused(block.rounded);
  } else {
    fill_raw_oom(p, commit_refused(block.rounded));
  }
}

replay_report replayer::impl::snapshot() const {
  replay_report r = report;
  r.peak_device_bytes = device->peak_used_bytes();
  if (pool) {
    const pool_statistics s = pool->statistics();
    r.peak_active_bytes = observer->peak_active;  // the pool's own counts a failed request
    r.peak_managed_bytes = observer->peak_managed;
    r.hits = s.hits;
    r.misses = s.misses;
    r.allocator_allocations = s.allocator_allocations;
    r.allocator_frees = s.allocator_frees;
    r.allocator_failures = s.allocator_failures;
    r.oom_retries = s.oom_retries;
    // A request that failed at its first use was served by the pool, not by this replay: not a
    // hit nor a miss, and the new block it got is an allocator call that failed.
    if (failed_at_first_use == pool_event_kind::hit) --r.hits;
    if (failed_at_first_use == pool_event_kind::miss) {
      --r.misses;
      --r.allocator_allocations;
      ++r.allocator_failures;
    }
    r.peak_active_event = observer->peak_active_event;
    r.end_active_bytes = observer->last.active_bytes;
    r.end_active_blocks = observer->last.active_blocks;
  } else {
    r.peak_managed_bytes = r.peak_active_bytes;
    r.end_active_bytes = raw_active;
    r.end_active_blocks = raw_blocks;
  }
  if (ledger) r.end_live_sites = ledger->live_sites();
  r.end_unused_bytes = unused_bytes;
  r.end_unused_blocks = unused.size();
  if (options.timeline) {
    r.timeline = sampler.points();
    r.timeline_tail = sampler.tail();
  }
  return r;
}

replayer::replayer(const replay_config& config, std::unique_ptr<replay_device> device,
                   replay_options options) {
  replay_device* d = device.get();
  impl_ = std::make_unique<impl>(config, std::move(device), d, options);
}

replayer::replayer(const replay_config& config, const device_spec& device, replay_options options)
    : replayer(config, std::make_unique<simulated_device>(device), options) {}

replayer::replayer(const replay_config& config, replay_device& device, replay_options options)
    : impl_(std::make_unique<impl>(config, nullptr, &device, options)) {}

replayer::~replayer() = default;

bool replayer::apply(const trace_event& event, std::uint64_t line) {
  return impl_->apply(event, line);
}

bool replayer::apply_size_refusal(const trace_event& event) {
  if (event.action != trace_action::alloc_failed)
    throw std::invalid_argument("apply_size_refusal: an alloc_failed only, not " +
                                std::string(trace::to_string(event.action)));
  return impl_->apply_size_refusal();
}

replay_report replayer::report() const { return impl_->snapshot(); }

const char* replayer::impl::committed_at_allocation(const trace_event& e) const {
  if (svm_at_creation && e.kind == trace_kind::svm) return "at clSVMAlloc (svm_oom_at = creation)";
  if (deferred && config.immediate_allocator && e.kind == trace_kind::buffer)
    return "as the pool's allocator commits it at once (alloc=immediate)";
  return nullptr;
}

bool commits_at_first_use(const replay_report& r, trace::trace_kind kind) {
  if (r.device.semantics != alloc_semantics::deferred) return false;
  // A pool whose allocator commits each buffer as it makes it (alloc=immediate).
  if (kind == trace_kind::buffer && r.config.use_pool && r.config.immediate_allocator) return false;
  if (kind == trace_kind::buffer) return trace::first_uses_names(r.first_use_kinds, kind);
  return kind == trace_kind::svm && !internal::svm_committed_at_creation(r.device) &&
         trace::first_uses_names(r.first_use_kinds, kind);
}

void replayer::set_first_use_kinds(std::string_view kinds) {
  impl& m = *impl_;
  const bool buffer = trace::first_uses_names(kinds, trace_kind::buffer),
             svm = trace::first_uses_names(kinds, trace_kind::svm);
  m.report.first_use_kinds = buffer && svm ? "buffer svm" : buffer ? "buffer" : svm ? "svm" : "";
  m.buffers_at_use = commits_at_first_use(m.report, trace_kind::buffer);
  m.svm_at_use = commits_at_first_use(m.report, trace_kind::svm);
}

void replayer::prefetch(const trace_event& event, int stage) const noexcept {
  impl& m = *impl_;
  if (!m.config.use_pool) {
    m.raw_live.prefetch(event.id);
  } else if (stage != 0) {
    m.live.prefetch(event.id);
  } else if (event.action == trace_action::free || event.action == trace_action::release) {
    if (const std::uint32_t* i = m.live.find(event.id)) __builtin_prefetch(&m.slab[*i]);
  }
}

}  // namespace clpool::replay
