// host_pinned_pool: PyCUDA's PageLockedMemoryPool for OpenCL, over the core memory_pool and
// host_pinned_allocator. Blocks are mapped CL_MEM_ALLOC_HOST_PTR buffers kept for reuse.
//
//   host_pinned_pool pool(host_pinned_allocator(queue));
//   pinned_memory m = pool.allocate(1 << 20);
//   std::memcpy(m.data(), src, 1 << 20);            // host side
//   clEnqueueCopyBuffer(queue, m.mem(), dev, ...);  // device side, from pinned memory
#ifndef CLPOOL_POOL_OPENCL_HOST_PINNED_POOL_H_
#define CLPOOL_POOL_OPENCL_HOST_PINNED_POOL_H_

#include <CL/cl.h>

#include <cstdint>
#include <utility>

#include "pool/memory_pool.h"
#include "pool/opencl/host_pinned_allocator.h"

namespace clpool::opencl {

// A pinned host block from a host_pinned_pool. Move-only; gives the block back when destroyed.
class pinned_memory {
 public:
  using allocation = memory_pool<host_pinned_allocator>::allocation;

  pinned_memory() noexcept = default;
  explicit pinned_memory(allocation block) noexcept : block_(std::move(block)) {}

  // The mapped host address (nullptr when released or empty) and the buffer behind it.
  void* data() const noexcept { return block_.has_block() ? block_.handle().host_ptr : nullptr; }
  cl_mem mem() const noexcept { return block_.has_block() ? block_.handle().mem : nullptr; }
  std::uint64_t size() const noexcept { return block_.size(); }
  bool has_block() const noexcept { return block_.has_block(); }

  // PyCUDA's name: gives the block back to the pool now. The caller must have finished every
  // transfer using it (the pool does not track queues for host memory).
  void free() noexcept { block_.release(); }
  void release() noexcept { block_.release(); }

 private:
  allocation block_;
};

class host_pinned_pool {
 public:
  explicit host_pinned_pool(host_pinned_allocator allocator, pool_options options = {})
      : pool_(std::move(allocator), options) {}

  // A pinned block of at least `size` bytes. Throws out_of_memory, or cl_error for failures that
  // are not out-of-memory.
  pinned_memory allocate(std::uint64_t size) { return pinned_memory(pool_.allocate(size)); }

  std::uint64_t held_blocks() const { return pool_.held_blocks(); }
  std::uint64_t active_blocks() const { return pool_.active_blocks(); }
  void free_held() { pool_.free_held(); }
  void stop_holding() { pool_.stop_holding(); }
  memory_pool<host_pinned_allocator>& pool() noexcept { return pool_; }

 private:
  memory_pool<host_pinned_allocator> pool_;
};

}  // namespace clpool::opencl

#endif  // CLPOOL_POOL_OPENCL_HOST_PINNED_POOL_H_
