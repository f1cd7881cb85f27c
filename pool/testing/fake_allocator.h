// Fake allocators for testing and benchmarking pools without a device.
//
// fake_device simulates a device of fixed capacity: it tracks every outstanding block, reports
// out-of-memory as allocator_out_of_memory, detects double and mismatched frees, and can be told to
// fail with an error that is NOT out-of-memory. fake_allocator is the block_allocator over it; the
// test keeps a shared_ptr to the device to inspect it while the pool owns the allocator.
#ifndef CLPOOL_POOL_TESTING_FAKE_ALLOCATOR_H_
#define CLPOOL_POOL_TESTING_FAKE_ALLOCATOR_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

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

// A simulated capacity-limited device. Thread-safe.
class fake_device {
 public:
  explicit fake_device(std::uint64_t capacity = unlimited) : capacity_(capacity) {}

  // Allocates `bytes`, or throws allocator_out_of_memory when outstanding + bytes > capacity, or
  // fake_device_error when a failure was armed with fail_next_allocations().
  std::uint64_t allocate(std::uint64_t bytes) {
    std::lock_guard<std::mutex> guard(mutex_);
    ++allocate_calls_;
    if (armed_failures_ > 0) {
      --armed_failures_;
      throw fake_device_error("fake_device: injected failure");
    }
    if (bytes > capacity_ || outstanding_bytes_ > capacity_ - bytes) {
      ++oom_failures_;
      // One snprintf, not to_string temporaries: fuzzers hit this on every out-of-memory.
      char message[96];
      std::snprintf(message, sizeof message, "fake_device: %llu bytes requested, %llu free",
                    static_cast<unsigned long long>(bytes),
                    static_cast<unsigned long long>(capacity_ - outstanding_bytes_));
      throw allocator_out_of_memory(fake_oom_status, message);
    }
    const std::uint64_t handle = ++next_handle_;
    blocks_.emplace(handle, bytes);
    outstanding_bytes_ += bytes;
    if (outstanding_bytes_ > peak_bytes_) peak_bytes_ = outstanding_bytes_;
    return handle;
  }

  // Frees a block. A free of an unknown handle, or with a size other than the allocated one, is
  // recorded in errors() (a test asserts there are none).
  void deallocate(std::uint64_t handle, std::uint64_t bytes) noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    ++deallocate_calls_;
    auto it = blocks_.find(handle);
    if (it == blocks_.end()) {
      errors_.push_back("free of unknown or already freed block " + std::to_string(handle));
      return;
    }
    if (it->second != bytes) {
      errors_.push_back("block " + std::to_string(handle) + " freed with size " +
                        std::to_string(bytes) + ", allocated with " + std::to_string(it->second));
    }
    outstanding_bytes_ -= it->second;
    blocks_.erase(it);
  }

  // The next `n` allocate calls throw fake_device_error.
  void fail_next_allocations(unsigned n) {
    std::lock_guard<std::mutex> guard(mutex_);
    armed_failures_ = n;
  }

  void set_capacity(std::uint64_t capacity) {
    std::lock_guard<std::mutex> guard(mutex_);
    capacity_ = capacity;
  }

  std::uint64_t capacity() const { return locked(capacity_); }
  std::uint64_t outstanding_bytes() const { return locked(outstanding_bytes_); }
  std::uint64_t outstanding_blocks() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return blocks_.size();
  }
  std::uint64_t peak_bytes() const { return locked(peak_bytes_); }
  std::uint64_t allocate_calls() const { return locked(allocate_calls_); }
  std::uint64_t deallocate_calls() const { return locked(deallocate_calls_); }
  std::uint64_t oom_failures() const { return locked(oom_failures_); }
  bool is_outstanding(std::uint64_t handle) const {
    std::lock_guard<std::mutex> guard(mutex_);
    return blocks_.count(handle) != 0;
  }
  std::vector<std::string> errors() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return errors_;
  }

 private:
  std::uint64_t locked(const std::uint64_t& field) const {
    std::lock_guard<std::mutex> guard(mutex_);
    return field;
  }

  mutable std::mutex mutex_;
  std::uint64_t capacity_;
  std::uint64_t outstanding_bytes_ = 0;
  std::uint64_t peak_bytes_ = 0;
  std::uint64_t next_handle_ = 0;
  std::uint64_t allocate_calls_ = 0;
  std::uint64_t deallocate_calls_ = 0;
  std::uint64_t oom_failures_ = 0;
  unsigned armed_failures_ = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> blocks_;
  std::vector<std::string> errors_;
};

// The block_allocator over a shared fake_device.
struct fake_allocator {
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

}  // namespace clpool::testing

#endif  // CLPOOL_POOL_TESTING_FAKE_ALLOCATOR_H_
