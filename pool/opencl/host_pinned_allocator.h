// A host-pinned allocator for memory_pool: the OpenCL counterpart of PyCUDA's PageLockedMemoryPool
// allocator. Each block is a CL_MEM_ALLOC_HOST_PTR buffer (which implementations back with pinned,
// DMA-able host memory) kept mapped, so the host writes through `host_ptr` and the device transfers
// from `mem` at full speed.
#ifndef CLPOOL_POOL_OPENCL_HOST_PINNED_ALLOCATOR_H_
#define CLPOOL_POOL_OPENCL_HOST_PINNED_ALLOCATOR_H_

#include <CL/cl.h>

#include <cstdint>

#include "pool/allocator.h"
#include "pool/opencl/cl_object.h"

namespace clpool::opencl {

// One pinned block: the buffer and its mapped host address.
struct pinned_block {
  cl_mem mem = nullptr;
  void* host_ptr = nullptr;
};

class host_pinned_allocator {
 public:
  using handle_type = pinned_block;

  // Retains `queue` (used for the map and unmap) and its context. `flags` are buffer flags
  // (CL_MEM_ALLOC_HOST_PTR is added); `map_flags` are the mapping's. Throws invalid_use for a null
  // queue or flags a pool cannot honour, cl_error when a query fails.
  explicit host_pinned_allocator(cl_command_queue queue, cl_mem_flags flags = CL_MEM_READ_WRITE,
                                 cl_map_flags map_flags = CL_MAP_READ | CL_MAP_WRITE);

  // Creates the buffer and maps it (blocking). Out-of-memory statuses from either call are
  // reported by value from try_allocate() (false, `refusal` filled) and thrown as
  // allocator_out_of_memory from allocate(); others throw cl_error from both. The buffer is
  // released before either returns or throws. The pool calls try_allocate().
  bool try_allocate(std::uint64_t bytes, pinned_block& out, clpool::allocator_refusal& refusal);
  pinned_block allocate(std::uint64_t bytes);

  // Unmaps and releases the buffer.
  void deallocate(pinned_block block, std::uint64_t bytes) noexcept;

  cl_context context() const noexcept { return context_.get(); }
  cl_command_queue queue() const noexcept { return queue_.get(); }

 private:
  queue_ref queue_;
  context_ref context_;
  cl_mem_flags flags_;
  cl_map_flags map_flags_;
};

}  // namespace clpool::opencl

#endif  // CLPOOL_POOL_OPENCL_HOST_PINNED_ALLOCATOR_H_
