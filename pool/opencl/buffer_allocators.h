// OpenCL buffer allocators for memory_pool: PyOpenCL's DeferredAllocator and ImmediateAllocator.
//
// Both hand out buffer_block handles (a cl_mem plus the queue with pending work on it, see
// queue_sync.h) and classify failures: CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES and
// CL_OUT_OF_HOST_MEMORY are out-of-memory (the pool frees held memory and retries), which
// try_allocate() reports by value and allocate() by throwing clpool::allocator_out_of_memory;
// every other status, CL_INVALID_BUFFER_SIZE included, throws cl_error at once from either. The
// pool calls try_allocate() (pool/allocator.h), so its retries cost no exception.
#ifndef CLPOOL_POOL_OPENCL_BUFFER_ALLOCATORS_H_
#define CLPOOL_POOL_OPENCL_BUFFER_ALLOCATORS_H_

// Installed headers are used outside Bazel: pick OpenCL 3.0 unless the includer chose.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <cstdint>

#include "pool/allocator.h"
#include "pool/opencl/cl_object.h"

namespace clpool::opencl {

// One pooled buffer. `pending_queue` is an owned reference to the in-order queue on which work on
// the buffer may still be pending, or null; the pool wrappers maintain it and deallocate releases
// it.
struct buffer_block {
  cl_mem mem = nullptr;
  cl_command_queue pending_queue = nullptr;
};

// Flags a pool cannot honour (CL_MEM_USE_HOST_PTR, CL_MEM_COPY_HOST_PTR) throw invalid_use.
void check_pool_buffer_flags(cl_mem_flags flags, const char* who);

// clCreateBuffer(context, flags, bytes) and nothing else. CAVEAT: most implementations (POCL,
// NVIDIA) only reserve memory at first use, so creation succeeds even when the device is full and
// the out-of-memory error surfaces later, at an enqueue or a wait, outside the pool's retry loop.
// A pool over this allocator can therefore over-commit. Use immediate_buffer_allocator to get the
// error at allocation time, where the pool can free held memory and retry.
class deferred_buffer_allocator {
 public:
  using handle_type = buffer_block;

  // Retains `context`. Throws invalid_use for a null context or unusable flags.
  explicit deferred_buffer_allocator(cl_context context, cl_mem_flags flags = CL_MEM_READ_WRITE);

  // A new buffer of `bytes` bytes in `out` and true; false with `refusal` filled on
  // out-of-memory; see the file comment for the other errors.
  bool try_allocate(std::uint64_t bytes, buffer_block& out, clpool::allocator_refusal& refusal);
  // try_allocate() with out-of-memory thrown as clpool::allocator_out_of_memory.
  buffer_block allocate(std::uint64_t bytes);

  // Releases the buffer (the runtime frees it once enqueued commands using it complete) and the
  // block's pending-queue reference.
  void deallocate(buffer_block block, std::uint64_t bytes) noexcept;

  cl_context context() const noexcept { return context_.get(); }
  cl_mem_flags flags() const noexcept { return flags_; }
  // The smallest CL_DEVICE_MAX_MEM_ALLOC_SIZE of the context's devices (pool/allocator.h): a
  // pool over this allocator rounds no request above it.
  std::uint64_t largest_block() const noexcept { return largest_block_; }

 private:
  context_ref context_;
  cl_mem_flags flags_;
  std::uint64_t largest_block_ = 0;
};

// How immediate_buffer_allocator forces the allocation.
enum class force_method : std::uint8_t {
  automatic,  // migrate on OpenCL >= 1.2 devices, write otherwise
  migrate,    // clEnqueueMigrateMemObjects(CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED)
  write,      // a write of up to 4 bytes
};

struct immediate_buffer_options {
  cl_mem_flags flags = CL_MEM_READ_WRITE;
  force_method method = force_method::automatic;
  // Also wait for the forcing command and check its status, so that an error a device reports
  // only at execution is still caught inside allocate(). Costs a round trip per new block.
  bool wait_for_allocation = false;
};

// Creates the buffer, then forces the device to back it by enqueueing a migration (or a small
// write) on `queue`. If forcing fails, the cl_mem is released before the error is reported (no
// leak); an out-of-memory status is out-of-memory as for clCreateBuffer (the pool frees held
// memory and retries), and any other status becomes cl_error.
class immediate_buffer_allocator {
 public:
  using handle_type = buffer_block;

  // Retains `queue` and its context. Throws invalid_use for a null queue or unusable flags, and
  // cl_error when the queue cannot be queried.
  explicit immediate_buffer_allocator(cl_command_queue queue,
                                      immediate_buffer_options options = {});

  // As deferred_buffer_allocator's, with the forcing (and the wait, if asked for) included.
  bool try_allocate(std::uint64_t bytes, buffer_block& out, clpool::allocator_refusal& refusal);
  buffer_block allocate(std::uint64_t bytes);
  void deallocate(buffer_block block, std::uint64_t bytes) noexcept;

  cl_context context() const noexcept { return context_.get(); }
  cl_command_queue queue() const noexcept { return queue_.get(); }
  // The method in use (never `automatic`).
  force_method method() const noexcept { return method_; }
  // The smallest CL_DEVICE_MAX_MEM_ALLOC_SIZE of the context's devices (pool/allocator.h): a
  // pool over this allocator rounds no request above it.
  std::uint64_t largest_block() const noexcept { return largest_block_; }

 private:
  queue_ref queue_;
  context_ref context_;
  immediate_buffer_options options_;
  force_method method_;
  std::uint64_t largest_block_ = 0;
};

}  // namespace clpool::opencl

#endif  // CLPOOL_POOL_OPENCL_BUFFER_ALLOCATORS_H_
