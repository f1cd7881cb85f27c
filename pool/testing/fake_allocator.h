// Fake allocators for testing and benchmarking pools without a device.
//
// fake_device simulates a device of fixed capacity: it is device_model's simulated_device (the
// device model's ledger with the exact profile; the same blocks and handles clpool_replay's
// simulated device uses), behind a lock, reporting out-of-memory (by value from try_allocate, as
// allocator_out_of_memory from allocate), detecting double and mismatched frees, and able to be
// told to fail with an error that is NOT out-of-memory.
// fake_allocator and throwing_fake_allocator are block_allocators over it, one for each form of
// the seam (allocator.h); the test keeps a shared_ptr to the device to inspect it while the pool
// owns the allocator.
#ifndef CLPOOL_POOL_TESTING_FAKE_ALLOCATOR_H_
#define CLPOOL_POOL_TESTING_FAKE_ALLOCATOR_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_model/simulated_device.h"
#include "pool/allocator.h"
#include "pool/errors.h"

namespace clpool::testing {

// The status fake_device reports with allocator_out_of_memory (OpenCL's
// CL_MEM_OBJECT_ALLOCATION_FAILURE, for familiarity).
inline constexpr int fake_oom_status = -4;

// An allocator failure that is not out-of-memory; the pool must pass it on unchanged.
class fake_device_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A simulated capacity-limited device. Thread-safe. Handles are device_model::simulated_device's:
// a slot and its generation, so a handle freed once is still recognised as freed after its slot
// was reused.
class fake_device {
 public:
  using handle_type = std::uint64_t;

  explicit fake_device(std::uint64_t capacity = unlimited) : device_({}, capacity) {}

  // Makes a block of `bytes` and returns true with its handle in `out`; or returns false, with
  // status fake_oom_status and a message in `refusal`, when outstanding + bytes > capacity; or
  // throws fake_device_error when a failure was armed with fail_next_allocations().
  bool try_allocate(std::uint64_t bytes, std::uint64_t& out, allocator_refusal& refusal) {
    std::lock_guard<std::mutex> guard(mutex_);
    ++allocate_calls_;
    if (armed_failures_ > 0) {
      --armed_failures_;
      throw fake_device_error("fake_device: injected failure");
    }
    const std::uint64_t handle = device_.allocate(bytes, /*commit=*/true);
    if (handle == 0) {
      ++oom_failures_;
      // One snprintf, not to_string temporaries: fuzzers hit this on every out-of-memory.
      char message[96];
      std::snprintf(message, sizeof message, "fake_device: %llu bytes requested, %llu free",
                    static_cast<unsigned long long>(bytes),
                    static_cast<unsigned long long>(device_.memory().free_bytes()));
      refusal.status = fake_oom_status;
      refusal.message = message;
      return false;
    }
    out = handle;
    return true;
  }

  // try_allocate() with out-of-memory thrown as allocator_out_of_memory.
  std::uint64_t allocate(std::uint64_t bytes) { return allocate_or_throw(*this, bytes); }

  // Frees a block. A free of an unknown handle, or with a size other than the allocated one, is
  // recorded in errors() (a test asserts there are none).
  void deallocate(std::uint64_t handle, std::uint64_t bytes) noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    ++deallocate_calls_;
    const std::optional<std::uint64_t> size = device_.live_bytes(handle);
    if (!size) {
      errors_.push_back("free of unknown or already freed block " + std::to_string(handle));
      return;
    }
    if (*size != bytes) {
      errors_.push_back("block " + std::to_string(handle) + " freed with size " +
                        std::to_string(bytes) + ", allocated with " + std::to_string(*size));
    }
    device_.release(handle);
  }

  // The next `n` allocate calls throw fake_device_error.
  void fail_next_allocations(unsigned n) {
    std::lock_guard<std::mutex> guard(mutex_);
    armed_failures_ = n;
  }

  void set_capacity(std::uint64_t capacity) {
    std::lock_guard<std::mutex> guard(mutex_);
    device_.memory().set_capacity(capacity);
  }

  std::uint64_t capacity() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return device_.memory().capacity();
  }
  std::uint64_t outstanding_bytes() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return device_.memory().committed();
  }
  std::uint64_t outstanding_blocks() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return device_.live_blocks();
  }
  std::uint64_t peak_bytes() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return device_.memory().peak_committed();
  }
  std::uint64_t allocate_calls() const { return locked(allocate_calls_); }
  std::uint64_t deallocate_calls() const { return locked(deallocate_calls_); }
  std::uint64_t oom_failures() const { return locked(oom_failures_); }
  bool is_outstanding(std::uint64_t handle) const {
    std::lock_guard<std::mutex> guard(mutex_);
    return device_.live_bytes(handle).has_value();
  }
  // Every bad free so far, in order; error_count() is its size without copying it.
  std::vector<std::string> errors() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return errors_;
  }
  std::size_t error_count() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return errors_.size();
  }

 private:
  std::uint64_t locked(const std::uint64_t& field) const {
    std::lock_guard<std::mutex> guard(mutex_);
    return field;
  }

  mutable std::mutex mutex_;
  device_model::simulated_device device_;  // the exact profile: every byte counts once
  std::uint64_t allocate_calls_ = 0;
  std::uint64_t deallocate_calls_ = 0;
  std::uint64_t oom_failures_ = 0;
  unsigned armed_failures_ = 0;
  std::vector<std::string> errors_;
};

// The block_allocator over a shared fake_device. It reports out-of-memory by value
// (allocator_reports_oom_by_value), as allocators over OpenCL status codes can.
struct fake_allocator {
  using handle_type = std::uint64_t;

  std::shared_ptr<fake_device> device = std::make_shared<fake_device>();

  handle_type allocate(std::uint64_t bytes) { return device->allocate(bytes); }
  bool try_allocate(std::uint64_t bytes, handle_type& out, allocator_refusal& refusal) {
    return device->try_allocate(bytes, out, refusal);
  }
  void deallocate(handle_type handle, std::uint64_t bytes) noexcept {
    device->deallocate(handle, bytes);
  }
};

// The same allocator without try_allocate, so the pool learns of out-of-memory only from
// allocator_out_of_memory: for testing the seam's throwing form (allocator.h).
struct throwing_fake_allocator {
  using handle_type = std::uint64_t;

  std::shared_ptr<fake_device> device = std::make_shared<fake_device>();

  handle_type allocate(std::uint64_t bytes) { return device->allocate(bytes); }
  void deallocate(handle_type handle, std::uint64_t bytes) noexcept {
    device->deallocate(handle, bytes);
  }
};

// The cheapest possible allocator, for benchmarks: no bookkeeping, handles are a counter, and an
// optional capacity makes it report out-of-memory. Not thread-safe (the pool serialises it).
struct counting_allocator {
  using handle_type = std::uint64_t;

  std::uint64_t capacity = unlimited;
  std::uint64_t outstanding = 0;
  std::uint64_t next = 0;

  handle_type allocate(std::uint64_t bytes) {
    if (bytes > capacity - outstanding) throw allocator_out_of_memory(fake_oom_status, "full");
    outstanding += bytes;
    return ++next;
  }
  void deallocate(handle_type, std::uint64_t bytes) noexcept { outstanding -= bytes; }
};

// counting_allocator that reports out-of-memory by value (allocator_reports_oom_by_value), to
// measure what the seam's two forms cost on a failed request.
struct counting_allocator_by_value : counting_allocator {
  bool try_allocate(std::uint64_t bytes, handle_type& out, allocator_refusal& refusal) {
    if (bytes > capacity - outstanding) {
      refusal.status = fake_oom_status;
      refusal.message = "full";
      return false;
    }
    outstanding += bytes;
    out = ++next;
    return true;
  }
};

}  // namespace clpool::testing

#endif  // CLPOOL_POOL_TESTING_FAKE_ALLOCATOR_H_
