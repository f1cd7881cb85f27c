#include "replay/replay.h"

#include <algorithm>
#include <string_view>

#include "replay/replay_impl.h"

namespace clpool::replay {

using trace::trace_action;
using trace::trace_event;
using trace::trace_kind;

void replayer::impl::use(const trace_event& e, std::uint64_t line) {
  ++report.uses;
  if (!commits_at_use(e.kind)) return;
  if (config.use_pool) {
    const std::uint32_t* i = live.find(e.id);
    if (i == nullptr) not_live_use(e.id);
    const allocation& a = slab[*i];
    if (!a.has_block() || device->first_use(a.handle())) return;
    oom_point& p = start_oom(e, line, oom_site::first_use);
    fill_pool_oom(p, observer->last);
    p.rounded_bytes = a.rounded_size();
    p.held_before_bytes = p.held_bytes;
    p.message = "the device could not commit " + std::to_string(a.rounded_size()) +
                " bytes at first use: " + std::to_string(device->used_bytes()) + " of " +
                std::to_string(device->capacity()) + " bytes committed";
  } else {
    const raw_block* b = raw_live.find(e.id);
    if (b == nullptr) not_live_use(e.id);
    if (b->handle == 0 || device->first_use(b->handle)) return;
    fill_raw_oom(start_oom(e, line, oom_site::first_use),
                 "the device could not commit " + std::to_string(b->bytes) +
                     " bytes at first use: " + std::to_string(device->used_bytes()) + " of " +
                     std::to_string(device->capacity()) + " bytes committed");
  }
}

replay_report replayer::impl::snapshot() const {
  replay_report r = report;
  r.peak_device_bytes = device->peak_used_bytes();
  if (pool) {
    const pool_statistics s = pool->statistics();
    r.peak_active_bytes = s.peak_active_bytes;
    r.peak_managed_bytes = observer->peak_managed;
    r.hits = s.hits;
    r.misses = s.misses;
    r.allocator_allocations = s.allocator_allocations;
    r.allocator_frees = s.allocator_frees;
    r.allocator_failures = s.allocator_failures;
    r.oom_retries = s.oom_retries;
    r.peak_active_event = observer->peak_active_event;
    r.end_active_bytes = observer->last.active_bytes;
    r.end_active_blocks = observer->last.active_blocks;
  } else {
    r.peak_managed_bytes = r.peak_active_bytes;
    r.end_active_bytes = raw_active;
    r.end_active_blocks = raw_blocks;
  }
  if (ledger) r.end_live_sites = ledger->live_sites();
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

replay_report replayer::report() const { return impl_->snapshot(); }

void replayer::set_first_use_kinds(std::string_view kinds) {
  impl& m = *impl_;
  const auto has = [kinds](std::string_view word) {
    for (std::size_t at = 0; at <= kinds.size();) {
      const std::size_t end = std::min(kinds.find(' ', at), kinds.size());
      if (kinds.substr(at, end - at) == word) return true;
      at = end + 1;
    }
    return false;
  };
  m.buffers_at_use = has("buffer");
  m.svm_at_use = has("svm");
  m.report.first_use_kinds = m.buffers_at_use && m.svm_at_use ? "buffer svm"
                             : m.buffers_at_use               ? "buffer"
                             : m.svm_at_use                   ? "svm"
                                                              : "";
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
