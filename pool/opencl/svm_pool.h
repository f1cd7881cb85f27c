// svm_pool: PyOpenCL's SVMPool/PooledSVM over the core memory_pool and svm_allocator.
//
//   svm_pool pool(svm_allocator(context, 0, CL_MEM_READ_WRITE, queue));
//   pooled_svm p = pool.allocate(4096, queue);    // p.ptr(), p.size(); bound to `queue`
//   clEnqueueSVMMemcpy(queue, CL_FALSE, p.ptr(), src, 4096, 0, nullptr, nullptr);
//   p.release();   // later users (on any queue) wait for the memcpy on the device
//
// Queue semantics (PyOpenCL): bind_to_queue(q) rejects out-of-order queues; unbind_from_queue()
// waits for the queue; release() and enqueue_release(q) give the block back. A block last used on
// queue A and handed out for queue B makes B wait, through a marker on A, for A's earlier work;
// handed out with no queue, the host waits for A. Every event created for this is released.
#ifndef CLPOOL_POOL_OPENCL_SVM_POOL_H_
#define CLPOOL_POOL_OPENCL_SVM_POOL_H_

// Installed headers are used outside Bazel: pick OpenCL 3.0 unless the includer chose.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "pool/memory_pool.h"
#include "pool/opencl/pool_front.h"
#include "pool/opencl/queue_bound_allocation.h"
#include "pool/opencl/svm_allocator.h"

namespace clpool::opencl {

// An SVM pointer with its size.
struct svm_span {
  void* ptr = nullptr;
  std::size_t size = 0;
};

// An SVM block from an svm_pool. A is svm_allocator, or an adaptor over it whose handles are
// svm_blocks (limited_allocator<svm_allocator>, say: pool/shared_limit.h).
template <block_allocator A = svm_allocator>
class basic_pooled_svm : public queue_bound_allocation<A> {
 public:
  using queue_bound_allocation<A>::queue_bound_allocation;
  basic_pooled_svm() noexcept = default;

  // The SVM pointer (nullptr when released or empty) and the requested size. Valid until release().
  void* ptr() const noexcept { return this->has_block() ? this->handle().ptr : nullptr; }
  svm_span span() const noexcept { return {ptr(), static_cast<std::size_t>(this->size())}; }
  operator svm_span() const noexcept { return span(); }
};
using pooled_svm = basic_pooled_svm<>;

template <block_allocator A = svm_allocator>
class basic_svm_pool : public pool_front<A> {
 public:
  using pooled_svm = basic_pooled_svm<A>;

  // Takes the allocator. Throws argument_error for bad pool options.
  explicit basic_svm_pool(A allocator, pool_options options = {})
      : basic_svm_pool(allocator.context(), std::move(allocator), options) {}

  // An SVM block of at least `size` bytes, bound to in-order `queue` (or unbound when null: the
  // host waits for the block's previous queue). Throws invalid_use for an out-of-order or foreign
  // queue (before touching the pool), out_of_memory when no block can be had, cl_error for other
  // OpenCL failures (the block then stays in the pool with its ordering intact).
  pooled_svm allocate(std::uint64_t size, cl_command_queue queue = nullptr) {
    if (queue != nullptr) check_bindable_queue(queue, context_, "svm_pool::allocate");
    return pooled_svm(this->pool_.allocate(size), context_, /*track=*/true, queue);
  }
  pooled_svm operator()(std::uint64_t size, cl_command_queue queue = nullptr) {
    return allocate(size, queue);
  }

  // Counters, free_held, stop_holding and pool(): pool_front.

  cl_context context() const noexcept { return context_; }

 private:
  // The context is read before the allocator moves into the core pool.
  basic_svm_pool(cl_context context, A&& allocator, const pool_options& options)
      : pool_front<A>(std::move(allocator), options), context_(context) {}

  cl_context context_;  // owned by the allocator inside the core pool
};
using svm_pool = basic_svm_pool<>;

}  // namespace clpool::opencl

#endif  // CLPOOL_POOL_OPENCL_SVM_POOL_H_
