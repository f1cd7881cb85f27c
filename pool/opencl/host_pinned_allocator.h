// A host-pinned allocator for memory_pool: the OpenCL counterpart of PyCUDA's PageLockedMemoryPool
// allocator. Each block is a CL_MEM_ALLOC_HOST_PTR buffer (which implementations back with pinned,
// DMA-able host memory), mapped once for reading and writing when it is allocated and unmapped
// only when it is freed. The block is *host memory*: `host_ptr` is the source or destination of
// transfers to and from other buffers (clEnqueueWriteBuffer / clEnqueueReadBuffer), which run at
// full speed from pinned memory.
//
// The contract, from OpenCL 3.0 section 5.5.4 ("Accessing mapped regions of a memory object"):
// a region mapped for writing is undefined to commands until it is unmapped, and a buffer mapped
// for writing must be unmapped before any command that reads or writes it begins. `mem` stays
// mapped for the block's whole life, so it must never be an argument of an enqueued command
// (copy, read, write, fill, kernel, migrate). It is there to identify and query the buffer, and to
// unmap and release it. On a shared-memory device (POCL's CPU device) breaking this rule happens
// to work; on a discrete GPU (NVIDIA) the device never sees the host's bytes. mockcl's maps=copy
// devices behave like the latter and report the misuse.
#ifndef CLPOOL_POOL_OPENCL_HOST_PINNED_ALLOCATOR_H_
#define CLPOOL_POOL_OPENCL_HOST_PINNED_ALLOCATOR_H_

// Installed headers are used outside Bazel: pick OpenCL 3.0 unless the includer chose.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <cstdint>

#include "pool/allocator.h"
#include "pool/opencl/cl_object.h"

namespace clpool::opencl {

// One pinned block: the (always mapped) buffer and its mapped host address.
struct pinned_block {
  cl_mem mem = nullptr;      // never an argument of a command: see the contract above
  void* host_ptr = nullptr;  // pinned host memory, valid until the block is freed
};

class host_pinned_allocator {
 public:
  using handle_type = pinned_block;

  // Retains `queue` (used for the map and unmap) and its context. `flags` are buffer flags
  // (CL_MEM_ALLOC_HOST_PTR is added). Throws invalid_use for a null queue or flags a pool cannot
  // honour, cl_error when a query fails.
  explicit host_pinned_allocator(cl_command_queue queue, cl_mem_flags flags = CL_MEM_READ_WRITE);

  // Creates the buffer and maps it (blocking, CL_MAP_READ | CL_MAP_WRITE). Out-of-memory statuses
  // from either call are reported by value from try_allocate() (false, `refusal` filled) and
  // thrown as allocator_out_of_memory from allocate(); others throw cl_error from both. The buffer
  // is released before either returns or throws. The pool calls try_allocate().
  bool try_allocate(std::uint64_t bytes, pinned_block& out, clpool::allocator_refusal& refusal);
  pinned_block allocate(std::uint64_t bytes);

  // Unmaps and releases the buffer. The caller has finished every transfer using `host_ptr`.
  void deallocate(pinned_block block, std::uint64_t bytes) noexcept;

  cl_context context() const noexcept { return context_.get(); }
  cl_command_queue queue() const noexcept { return queue_.get(); }
  // The smallest CL_DEVICE_MAX_MEM_ALLOC_SIZE of the context's devices (pool/allocator.h): a
  // pool over this allocator rounds no request above it.
  std::uint64_t largest_block() const noexcept { return largest_block_; }

 private:
  queue_ref queue_;
  context_ref context_;
  cl_mem_flags flags_;
  std::uint64_t largest_block_ = 0;
};

}  // namespace clpool::opencl

#endif  // CLPOOL_POOL_OPENCL_HOST_PINNED_ALLOCATOR_H_
