// The device seam of the replay engine: what replay needs from "a GPU with N bytes".
//
// replay_device is the one interface a backend implements. simulated_device (below) is the
// built-in one: pure bookkeeping, no memory touched. A mockcl-backed device (README.md, "Plugging
// in mockcl") implements the same four calls over clCreateBuffer / clReleaseMemObject /
// clEnqueueFillBuffer, so the engine and every report stay unchanged.
//
// Two allocation semantics, because real OpenCL drivers differ:
//   immediate: allocate() itself fails when the device is full. The pool sees the failure, frees
//              held blocks and retries (this is what fake_device in pool/testing does).
//   deferred:  allocate() always succeeds (like clCreateBuffer on most drivers, which only
//              reserves a handle); the memory is committed at first use, and that is where
//              CL_MEM_OBJECT_ALLOCATION_FAILURE shows up. The pool never sees it, so its retry
//              cannot help; held blocks keep counting against the device.
//   host_oom:  like immediate, but the device reports the failure as CL_OUT_OF_HOST_MEMORY (Intel-
//              like; mockcl's semantics=host_oom). The pool retries it the same way.
// Replay models "first use" as immediately after the allocation (the trace carries no kernel
// launches), by calling first_use() after every successful allocate.
#ifndef CLPOOL_REPLAY_DEVICE_H_
#define CLPOOL_REPLAY_DEVICE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device_model/device_memory.h"
#include "replay/handle_table.h"
#include "replay/site_ledger.h"
#include "pool/errors.h"

namespace clpool::replay {

// One home: next to the device profile (device_model/profile.h), with semantics_of() and the
// names (to_string, parse_semantics).
using device_model::alloc_semantics;
using device_model::parse_semantics;
using device_model::semantics_of;
using device_model::to_string;

class replay_device {
 public:
  virtual ~replay_device() = default;

  // Creates a block of `bytes` (> 0) and returns a non-zero handle. With immediate semantics,
  // throws clpool::allocator_out_of_memory when it does not fit. Deferred devices do not fail here.
  virtual std::uint64_t allocate(std::uint64_t bytes) = 0;

  // Destroys a block; `bytes` is what allocate() was given.
  virtual void deallocate(std::uint64_t handle, std::uint64_t bytes) noexcept = 0;

  // The block is used for the first time (or again: later calls do nothing). Returns false when
  // committing it does not fit: the deferred out-of-memory. Immediate devices always return true.
  virtual bool first_use(std::uint64_t handle) = 0;

  // True when allocation is deferred to first use. Replay skips first_use() on devices that say
  // false (it is then always true), one virtual call less per request.
  virtual bool defers_allocation() const noexcept = 0;

  // Bytes committed on the device now (for deferred: used blocks only), and its capacity.
  virtual std::uint64_t used_bytes() const noexcept = 0;
  virtual std::uint64_t capacity() const noexcept = 0;
  // Highest used_bytes() seen.
  virtual std::uint64_t peak_used_bytes() const noexcept = 0;
  // Sum of the sizes of the committed blocks; used_bytes() - requested_bytes() is what the
  // device's page rounding costs (0 on an exact-byte device).
  virtual std::uint64_t requested_bytes() const noexcept = 0;
};

// A device that is only bookkeeping: its memory is a device_model::device_memory (the one
// ledger, with the profile's pages, packing and headroom); handles index a slot table reused
// through a free list, so memory is bounded by the blocks alive at once. Deterministic. Not
// thread-safe (replay is single-threaded and the pool serialises allocator calls anyway).
class simulated_device final : public replay_device {
 public:
  simulated_device(std::uint64_t capacity, alloc_semantics semantics,
                   const device_model::device_profile& profile = {})
      : memory_(profile, capacity), semantics_(semantics) {}

  std::uint64_t allocate(std::uint64_t bytes) override;
  void deallocate(std::uint64_t handle, std::uint64_t bytes) noexcept override;
  bool first_use(std::uint64_t handle) override;
  bool defers_allocation() const noexcept override {
    return semantics_ == alloc_semantics::deferred;
  }
  std::uint64_t used_bytes() const noexcept override { return memory_.committed(); }
  std::uint64_t requested_bytes() const noexcept override { return memory_.requested(); }
  std::uint64_t capacity() const noexcept override { return memory_.capacity(); }
  std::uint64_t peak_used_bytes() const noexcept override { return memory_.peak_committed(); }

  // allocate() calls that threw out-of-memory.
  std::uint64_t failed_allocations() const noexcept { return failures_; }
  const device_model::device_memory& memory() const noexcept { return memory_; }

 private:
  struct slot {
    std::uint64_t bytes = 0;
    bool committed = false;
    device_model::placement where;
  };

  device_model::device_memory memory_;
  alloc_semantics semantics_;
  std::uint64_t failures_ = 0;
  handle_table<slot> slots_;
};

// The clpool::block_allocator over a replay_device, for memory_pool<device_allocator>.
struct device_allocator {
  using handle_type = std::uint64_t;
  replay_device* device = nullptr;  // not owned; outlives the pool
  // Told of every block the pool gives back, so that it stops counting it as held; may be null.
  site_ledger* ledger = nullptr;

  handle_type allocate(std::uint64_t bytes) { return device->allocate(bytes); }
  void deallocate(handle_type handle, std::uint64_t bytes) noexcept {
    if (ledger != nullptr) ledger->on_device_free(handle);
    device->deallocate(handle, bytes);
  }
};

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_DEVICE_H_
