// buffer_pool<A>: PyOpenCL's MemoryPool/PooledBuffer over the core memory_pool, for cl_mem
// buffers from immediate_buffer_allocator (the default) or deferred_buffer_allocator.
//
//   buffer_pool<> pool(immediate_buffer_allocator(queue), {.cross_queue_safety = true});
//   pooled_buffer<> b = pool.allocate(1 << 20, queue);   // b.mem() / (cl_mem)b is the buffer
//   clEnqueueWriteBuffer(queue, b, ...);
//   b.release();   // or let it go out of scope: the block is held for reuse
//
// Counters, limits, trimming and statistics are the core pool's (pool()). Cross-queue safety is
// opt-in: when on, a block reused on another queue waits (on the device, via a marker) for the
// commands its previous user enqueued on its queue before release; PyOpenCL has no such safety.
// With a deferred allocator the pool can over-commit: see buffer_allocators.h.
#ifndef CLPOOL_POOL_OPENCL_BUFFER_POOL_H_
#define CLPOOL_POOL_OPENCL_BUFFER_POOL_H_

// Installed headers are used outside Bazel: pick OpenCL 3.0 unless the includer chose.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <cstdint>
#include <utility>

#include "pool/memory_pool.h"
#include "pool/opencl/buffer_allocators.h"
#include "pool/opencl/pool_front.h"
#include "pool/opencl/queue_bound_allocation.h"

namespace clpool::opencl {

// A buffer from a buffer_pool. Usable directly where a cl_mem is expected.
template <block_allocator A = immediate_buffer_allocator>
class pooled_buffer : public queue_bound_allocation<A> {
 public:
  using queue_bound_allocation<A>::queue_bound_allocation;
  pooled_buffer() noexcept = default;

  // The buffer, or nullptr when released or empty. Valid until release().
  cl_mem mem() const noexcept { return this->has_block() ? this->handle().mem : nullptr; }
  operator cl_mem() const noexcept { return mem(); }
};

struct buffer_pool_options {
  pool_options pool = {};           // the core pool's options (leading bits, limit, trim)
  bool cross_queue_safety = false;  // order reuse across queues (see the file comment)
};

template <block_allocator A = immediate_buffer_allocator>
class buffer_pool : public pool_front<A> {
 public:
  // Takes the allocator. Throws argument_error for bad pool options.
  explicit buffer_pool(A allocator, buffer_pool_options options = {})
      : buffer_pool(allocator.context(), std::move(allocator), options) {}

  // A buffer of at least `size` bytes, bound to `queue` when it is not null (see
  // queue_bound_allocation). A zero-size request gives an empty pooled_buffer. Throws
  // invalid_use for an out-of-order or foreign queue (before touching the pool), out_of_memory
  // when no block can be had, cl_error for other OpenCL failures.
  pooled_buffer<A> allocate(std::uint64_t size, cl_command_queue queue = nullptr) {
    if (queue != nullptr) check_bindable_queue(queue, context_, "buffer_pool::allocate");
    return pooled_buffer<A>(this->pool_.allocate(size), context_, cross_queue_safety_, queue);
  }
  pooled_buffer<A> operator()(std::uint64_t size, cl_command_queue queue = nullptr) {
    return allocate(size, queue);
  }

  // Counters, free_held, stop_holding and pool(): pool_front.

  bool cross_queue_safety() const noexcept { return cross_queue_safety_; }
  cl_context context() const noexcept { return context_; }

 private:
  // The context is read before the allocator moves into the core pool.
  buffer_pool(cl_context context, A&& allocator, const buffer_pool_options& options)
      : pool_front<A>(std::move(allocator), options.pool),
        context_(context),
        cross_queue_safety_(options.cross_queue_safety) {}

  cl_context context_;  // owned by the allocator inside the core pool
  bool cross_queue_safety_;
};

}  // namespace clpool::opencl

#endif  // CLPOOL_POOL_OPENCL_BUFFER_POOL_H_
