// host_pinned_pool: PyCUDA's PageLockedMemoryPool for OpenCL, over the core memory_pool and
// host_pinned_allocator. A block is pinned *host* memory for fast transfers to and from device
// buffers; it is kept mapped for its whole life and reused.
//
//   host_pinned_pool pool{host_pinned_allocator(queue)};
//   pinned_memory m = pool.allocate(n);
//   std::memcpy(m.data(), src, n);                    // the host fills pinned memory
//   m.write_to(queue, dev);                           // clEnqueueWriteBuffer(dev, ..., m.data())
//   ...kernels on dev...
//   m.read_from(queue, dev, 0, n, /*blocking=*/true); // clEnqueueReadBuffer(dev, ..., m.data())
//
// The block's own buffer (mem()) is mapped, so it must never be an argument of a command (OpenCL
// 3.0, 5.5.4: a buffer mapped for writing must be unmapped before any command using it begins).
// Use data() as the host side of transfers; write_to/read_from do that and remember their events.
#ifndef CLPOOL_POOL_OPENCL_HOST_PINNED_POOL_H_
#define CLPOOL_POOL_OPENCL_HOST_PINNED_POOL_H_

// Installed headers are used outside Bazel: pick OpenCL 3.0 unless the includer chose.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "pool/memory_pool.h"
#include "pool/opencl/cl_object.h"
#include "pool/opencl/host_pinned_allocator.h"
#include "pool/opencl/pool_front.h"

namespace clpool::opencl {

// A pinned host block from a host_pinned_pool. Move-only; gives the block back when destroyed.
class pinned_memory {
 public:
  using allocation = memory_pool<host_pinned_allocator>::allocation;
  static constexpr std::uint64_t whole = std::numeric_limits<std::uint64_t>::max();

  pinned_memory() noexcept = default;
  explicit pinned_memory(allocation block) noexcept : block_(std::move(block)) {}
  pinned_memory(pinned_memory&&) noexcept = default;
  pinned_memory& operator=(pinned_memory&& other) noexcept {
    if (this != &other) {
      release();
      block_ = std::move(other.block_);
      transfers_ = std::move(other.transfers_);
    }
    return *this;
  }
  ~pinned_memory() { release(); }

  // The pinned host address (nullptr when released or empty); valid until the block is released.
  void* data() const noexcept { return block_.has_block() ? block_.handle().host_ptr : nullptr; }
  std::uint64_t size() const noexcept { return block_.size(); }
  bool has_block() const noexcept { return block_.has_block(); }
  // The mapped buffer behind data(), to identify or query it only: never pass it to a command.
  cl_mem mem() const noexcept { return block_.has_block() ? block_.handle().mem : nullptr; }

  // Enqueues clEnqueueWriteBuffer(queue, dst, blocking, dst_offset, bytes, data()): the host's
  // bytes [0, bytes) to the device buffer `dst` (`whole`: size()). Returns the transfer's event;
  // the block keeps a reference too, and release() waits for it. The host must not write data()
  // until the event completes. Throws invalid_use when empty, for a null queue or buffer, or when
  // `bytes` exceeds size(); cl_error when the enqueue fails.
  event_ref write_to(cl_command_queue queue, cl_mem dst, std::uint64_t dst_offset = 0,
                     std::uint64_t bytes = whole, bool blocking = false);
  // The reverse: clEnqueueReadBuffer of `src` [src_offset, src_offset + bytes) into data(). The
  // host must not read data() until the event completes (or pass blocking = true).
  event_ref read_from(cl_command_queue queue, cl_mem src, std::uint64_t src_offset = 0,
                      std::uint64_t bytes = whole, bool blocking = false);

  // PyCUDA's name: gives the block back to the pool now, after waiting for the transfers enqueued
  // through write_to/read_from (the pool hands the block to another user, or unmaps it). Transfers
  // the caller enqueued itself with data() must be finished before.
  void free() noexcept { release(); }
  void release() noexcept;

 private:
  event_ref transfer(bool to_device, cl_command_queue queue, cl_mem buffer, std::uint64_t offset,
                     std::uint64_t bytes, bool blocking);
  allocation block_;
  std::vector<event_ref> transfers_;  // not yet known to be complete
};

class host_pinned_pool : public pool_front<host_pinned_allocator> {
 public:
  // Throws argument_error for bad pool options.
  explicit host_pinned_pool(host_pinned_allocator allocator, pool_options options = {})
      : pool_front(std::move(allocator), options) {}

  // A pinned block of at least `size` bytes. Throws out_of_memory, or cl_error for failures that
  // are not out-of-memory.
  pinned_memory allocate(std::uint64_t size) { return pinned_memory(pool_.allocate(size)); }

  // Counters, free_held, stop_holding and pool(): pool_front.
};

}  // namespace clpool::opencl

#endif  // CLPOOL_POOL_OPENCL_HOST_PINNED_POOL_H_
