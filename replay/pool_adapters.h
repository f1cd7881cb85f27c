// What the pool sees of a replay (replay.cc): its allocator, the replay device behind
// clpool::block_allocator, and the observer that keeps the report's figures from the pool's
// events. Private to //replay:engine.
#ifndef CLPOOL_REPLAY_POOL_ADAPTERS_H_
#define CLPOOL_REPLAY_POOL_ADAPTERS_H_

#include <cstdint>

#include "pool/pool_types.h"
#include "replay/device.h"
#include "replay/site_ledger.h"
#include "trace/id_map.h"

namespace clpool::replay {

// Sees every pool event (under the pool's lock; replay is single-threaded anyway) and keeps what
// the report needs without taking the pool's lock on every trace event: the latest counters, the
// retry count and the true peak of managed bytes (the pool's own statistic also counts requests
// that were in flight and then failed).
class replay_observer final : public pool_observer {
 public:
  void on_event(const pool_event& e) noexcept override {
    last = e.counters;
    last_kind = e.kind;
    if (e.counters.active_bytes > peak_active) {
      peak_active = e.counters.active_bytes;
      peak_active_event = *events - 1;
    }
    if (e.counters.managed_bytes > peak_managed) peak_managed = e.counters.managed_bytes;
    if (e.kind == pool_event_kind::oom_retry) ++retries;
  }
  explicit replay_observer(const std::uint64_t* events_applied) : events(events_applied) {}
  pool_counters last{};
  pool_event_kind last_kind{};
  std::uint64_t retries = 0;
  std::uint64_t peak_managed = 0;
  std::uint64_t peak_active = 0;
  std::uint64_t peak_active_event = 0;
  const std::uint64_t* events;  // the replay's count of events applied (the report's)
};

// On a device that commits blocks at their first use, as a version-4 trace records it: which of
// the pool's device blocks the device has committed (a block the pool hands out again needs no
// first use), and which blocks the pool holds that no command ever used (the device holds nothing
// for them), with their sum. The replay marks them; the allocator forgets a block the device
// gets back.
struct first_use_handles {
  trace::flat_id_map<char> committed;
  trace::flat_id_map<std::uint64_t> held_unused;  // device handle -> its rounded bytes
  std::uint64_t held_unused_bytes = 0;
  // The pool holds `handle`, which no command used, of `bytes` (its bin).
  void hold_unused(std::uint64_t handle, std::uint64_t bytes) {
    if (held_unused.insert(handle, bytes) != nullptr) held_unused_bytes += bytes;
  }
  // `handle` left the pool's holding (handed out again, or given back to the device).
  void not_held(std::uint64_t handle) {
    std::uint64_t bytes = 0;
    if (held_unused.erase(handle, &bytes)) held_unused_bytes -= bytes;
  }
  void forget(std::uint64_t handle) {
    if (committed.empty() && held_unused.empty()) return;  // a trace without first uses
    committed.erase(handle);
    not_held(handle);
  }
};

// The clpool::block_allocator over a replay_device, for memory_pool<device_allocator>.
struct device_allocator {
  using handle_type = std::uint64_t;
  replay_device* device = nullptr;  // not owned; outlives the pool
  // Told of every block the pool gives back, so that it stops counting it as held; may be null.
  site_ledger* ledger = nullptr;
  // When it points at a text, a block is committed as it is allocated (replay_device::
  // allocate_committed, the text saying where): the replay sets it for an SVM block its profile
  // refuses at clSVMAlloc, and for a buffer of a pool whose allocator commits at once.
  const char* const* commit_now = nullptr;
  // Told of every block the pool gives back; may be null.
  first_use_handles* handles = nullptr;

  handle_type allocate(std::uint64_t bytes) {
    return commit_now != nullptr && *commit_now != nullptr
               ? device->allocate_committed(bytes, *commit_now)
               : device->allocate(bytes);
  }
  // The device's CL_DEVICE_MAX_MEM_ALLOC_SIZE (device_spec::max_alloc; unlimited when not
  // modelled): the pool rounds no request up above it, as it does over an OpenCL allocator.
  std::uint64_t largest_block() const noexcept { return device->spec().max_alloc; }
  void deallocate(handle_type handle, std::uint64_t bytes) noexcept {
    if (ledger != nullptr) ledger->on_device_free(handle);
    if (handles != nullptr) handles->forget(handle);
    device->deallocate(handle, bytes);
  }
};

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_POOL_ADAPTERS_H_
