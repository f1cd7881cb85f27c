// The device seam of the replay engine: what a replay needs from "a GPU with N bytes free".
//
// One seam, one hop: a device_backend opens a replay_device for each replay (open(capacity));
// the engine allocates, frees and first-uses blocks on it, and its spec() is what the report says
// of the device. simulated_device (below) is the built-in one: pure bookkeeping, no memory
// touched; simulated_backend opens one per replay. clpool_replay's other backends (tools/replay:
// mockcl_device.h, opencl_device.h) implement the same calls over clCreateBuffer /
// clReleaseMemObject / clEnqueueMigrateMemObjects, so the engine and every report stay unchanged.
//
//   simulated_backend sim(device_spec{.semantics = alloc_semantics::deferred, .profile = p});
//   replay_report r = replay_stream(reader, config, sim.open(128ull << 20));
//
// Three allocation semantics, because real OpenCL drivers differ:
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
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "device_model/device_memory.h"
#include "device_model/simulated_device.h"
#include "pool/errors.h"
#include "replay/result.h"

namespace clpool::replay {

// One home: next to the device profile (device_model/profile.h), with semantics_of() and the
// names (to_string, parse_semantics).
using device_model::alloc_semantics;
using device_model::parse_semantics;
using device_model::semantics_of;
using device_model::to_string;

class replay_device {
 public:
  explicit replay_device(device_spec spec) : spec_(std::move(spec)) {}
  virtual ~replay_device() = default;
  replay_device(const replay_device&) = delete;
  replay_device& operator=(const replay_device&) = delete;

  // What the device is, as the report names it: its backend, capacity, semantics, profile, host
  // budget, and for a real device its own account.
  const device_spec& spec() const noexcept { return spec_; }

  // Creates a block of `bytes` (> 0) and returns a non-zero handle. With immediate semantics,
  // throws clpool::allocator_out_of_memory when it does not fit. Deferred devices do not fail here.
  virtual std::uint64_t allocate(std::uint64_t bytes) = 0;

  // Destroys a block; `bytes` is what allocate() was given.
  virtual void deallocate(std::uint64_t handle, std::uint64_t bytes) noexcept = 0;

  // The block is used for the first time (or again: later calls do nothing). Returns false when
  // committing it does not fit: the deferred out-of-memory. Immediate devices always return true.
  virtual bool first_use(std::uint64_t handle) = 0;

  // allocate() and first_use() together, for a block the device refuses at allocation although
  // it defers others: an SVM block whose profile says svm_oom_at = creation (clSVMAlloc returns
  // NULL), or a buffer a pool's allocator commits at once (replay_config::immediate_allocator).
  // Throws clpool::allocator_out_of_memory, as an immediate device's allocate() does; its message
  // says the bytes "do not fit " + `where`.
  std::uint64_t allocate_committed(std::uint64_t bytes, std::string_view where);

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

 private:
  device_spec spec_;
};

// A device that is only bookkeeping: device_model's simulated_device (the one ledger, with the
// profile's pages, packing and headroom; the blocks and handles the pool's test device uses too)
// behind the replay seam, with the semantics deciding when a block is committed. Deterministic.
// Not thread-safe (replay is single-threaded and the pool serialises allocator calls anyway).
class simulated_device final : public replay_device {
 public:
  // The device `spec` describes: its capacity, semantics and profile.
  explicit simulated_device(const device_spec& spec)
      : replay_device(spec), device_(spec.profile, spec.capacity), semantics_(spec.semantics) {}
  simulated_device(std::uint64_t capacity, alloc_semantics semantics,
                   const device_model::device_profile& profile = {})
      : simulated_device(
            device_spec{.capacity = capacity, .semantics = semantics, .profile = profile}) {}

  std::uint64_t allocate(std::uint64_t bytes) override;
  void deallocate(std::uint64_t handle, std::uint64_t bytes) noexcept override;
  bool first_use(std::uint64_t handle) override;
  bool defers_allocation() const noexcept override {
    return semantics_ == alloc_semantics::deferred;
  }
  std::uint64_t used_bytes() const noexcept override { return memory().committed(); }
  std::uint64_t requested_bytes() const noexcept override { return memory().requested(); }
  std::uint64_t capacity() const noexcept override { return memory().capacity(); }
  std::uint64_t peak_used_bytes() const noexcept override { return memory().peak_committed(); }

  // allocate() calls that threw out-of-memory.
  std::uint64_t failed_allocations() const noexcept { return failures_; }
  const device_model::device_memory& memory() const noexcept { return device_.memory(); }

 private:
  device_model::simulated_device device_;
  alloc_semantics semantics_;
  std::uint64_t failures_ = 0;
};

// The device cannot give an answer that can be trusted (it does not enforce its memory, or its
// free memory changed during the replay). what() says so and what to do instead; exit 2.
class device_untrusted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where a replay's devices come from: open(capacity) is the seam; the rest are the checks a real
// device needs (a simulated one passes them all).
class device_backend {
 public:
  virtual ~device_backend() = default;
  // The device for one replay starting with `capacity` bytes free. One at a time: a backend may
  // refuse to open a second while the first is alive (one mock per process).
  virtual std::unique_ptr<replay_device> open(std::uint64_t capacity) = 0;
  // True for a real device, which behaves as it does rather than as the profile says.
  virtual bool is_real_device() const { return false; }
  // The largest capacity a replay can have (a real device's free memory), 0 when unbounded.
  virtual std::uint64_t largest_capacity() const { return 0; }
  // Throws config_error when no replay can start with `capacity` free (more than a real device
  // has). Called before the first replay.
  virtual void check_capacity(std::uint64_t capacity) const { (void)capacity; }
  // Called once before the first replay (a --capacity replay or a --min-capacity search):
  // throws device_untrusted when the device would not answer truthfully.
  virtual void check_device() {}
  // Called after each replay: throws device_untrusted when that replay's answer cannot be
  // trusted (the device changed under it).
  virtual void after_replay() {}
  // After after_replay(): a real device's account of that replay's start; nothing for a
  // simulated one.
  virtual std::optional<replay_start> last_replay_start() const { return std::nullopt; }
};

// simulated_devices, one per replay: `prototype` with the capacity asked for.
class simulated_backend final : public device_backend {
 public:
  explicit simulated_backend(device_spec prototype) : prototype_(std::move(prototype)) {}
  std::unique_ptr<replay_device> open(std::uint64_t capacity) override {
    device_spec spec = prototype_;
    spec.capacity = capacity;
    return std::make_unique<simulated_device>(spec);
  }

 private:
  device_spec prototype_;
};

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_DEVICE_H_
