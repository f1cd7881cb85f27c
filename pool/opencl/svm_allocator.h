// An SVM allocator for memory_pool: PyOpenCL's SVMAllocator(context, alignment, flags, queue).
//
// allocate() calls clSVMAlloc. A NULL result is out-of-memory (CL_MEM_OBJECT_ALLOCATION_FAILURE:
// false from try_allocate(), allocator_out_of_memory from allocate()): a null pointer is never
// handed out. A request above the
// smallest CL_DEVICE_MAX_MEM_ALLOC_SIZE of the context's devices throws cl_error with
// CL_INVALID_BUFFER_SIZE instead, so the pool does not free held memory for a hopeless request.
//
// deallocate() frees only after all work on the block completes: with a free queue it uses
// clEnqueueSVMFree on that queue (waiting, through a marker, for the block's pending queue when
// that is another queue); without one it waits for the pending queue and calls clSVMFree.
#ifndef CLPOOL_POOL_OPENCL_SVM_ALLOCATOR_H_
#define CLPOOL_POOL_OPENCL_SVM_ALLOCATOR_H_

// Installed headers are used outside Bazel: pick OpenCL 3.0 unless the includer chose.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <cstdint>

#include "pool/allocator.h"
#include "pool/opencl/cl_object.h"

namespace clpool::opencl {

// One pooled SVM block: the pointer, and an owned reference to the in-order queue on which work on
// it may still be pending (or null). See queue_sync.h.
struct svm_block {
  void* ptr = nullptr;
  cl_command_queue pending_queue = nullptr;
};

class svm_allocator {
 public:
  using handle_type = svm_block;

  // Retains `context` (and `queue`, if given). `alignment` is 0 (the default) or a power of two;
  // `flags` are clSVMAlloc flags. Throws:
  //   invalid_use: null context, bad alignment, a queue of another context or an out-of-order one;
  //   unsupported_feature: no device of the context supports SVM, or the fine-grain/atomics flags
  //     ask for a capability the devices lack;
  //   cl_error: a query failed.
  explicit svm_allocator(cl_context context, cl_uint alignment = 0,
                         cl_svm_mem_flags flags = CL_MEM_READ_WRITE,
                         cl_command_queue queue = nullptr);

  // See the file comment. try_allocate() reports the NULL result by value (false, `refusal`
  // filled), allocate() as allocator_out_of_memory; the pool calls try_allocate().
  bool try_allocate(std::uint64_t bytes, svm_block& out, clpool::allocator_refusal& refusal);
  svm_block allocate(std::uint64_t bytes);

  // See the file comment. Errors cannot be reported here; when an enqueued free fails it falls
  // back to waiting and clSVMFree, so the block is always freed.
  void deallocate(svm_block block, std::uint64_t bytes) noexcept;

  cl_context context() const noexcept { return context_.get(); }
  cl_command_queue queue() const noexcept { return queue_.get(); }
  cl_uint alignment() const noexcept { return alignment_; }
  cl_svm_mem_flags flags() const noexcept { return flags_; }
  // The largest size allocate() accepts; largest_block() for a pool (pool/allocator.h).
  std::uint64_t max_alloc_bytes() const noexcept { return max_alloc_; }
  std::uint64_t largest_block() const noexcept { return max_alloc_; }

 private:
  context_ref context_;
  queue_ref queue_;
  cl_uint alignment_;
  cl_svm_mem_flags flags_;
  std::uint64_t max_alloc_ = 0;
};

}  // namespace clpool::opencl

#endif  // CLPOOL_POOL_OPENCL_SVM_ALLOCATOR_H_
