#include "pool/opencl/host_pinned_allocator.h"

#include <string>

#include "pool/opencl/buffer_allocators.h"
#include "pool/opencl/cl_error.h"

namespace clpool::opencl {

host_pinned_allocator::host_pinned_allocator(cl_command_queue queue, cl_mem_flags flags)
    : flags_(flags | CL_MEM_ALLOC_HOST_PTR) {
  if (queue == nullptr) throw invalid_use("host_pinned_allocator: null queue");
  check_pool_buffer_flags(flags, "host_pinned_allocator");
  if (flags & (CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY)) {
    throw invalid_use(
        "host_pinned_allocator: CL_MEM_HOST_* access flags forbid the host's read-write mapping");
  }
  queue_ = queue_ref::retain(queue);
  context_ = context_ref::retain(queue_context(queue));
  largest_block_ = context_max_alloc(context_.get());
}

pinned_block host_pinned_allocator::allocate(std::uint64_t bytes) {
  return clpool::allocate_or_throw(*this, bytes);
}

bool host_pinned_allocator::try_allocate(std::uint64_t bytes, pinned_block& out,
                                         clpool::allocator_refusal& refusal) {
  cl_int status = CL_SUCCESS;
  const std::string what = std::to_string(bytes) + " bytes of host-pinned memory";
  mem_ref mem = mem_ref::adopt(
      clCreateBuffer(context_.get(), flags_, static_cast<size_t>(bytes), nullptr, &status));
  if (status == CL_SUCCESS && !mem) status = CL_OUT_OF_HOST_MEMORY;
  if (!allocation_succeeded(status, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", what, refusal)) {
    return false;
  }
  void* host = clEnqueueMapBuffer(queue_.get(), mem.get(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                  static_cast<size_t>(bytes), 0, nullptr, nullptr, &status);
  if (status == CL_SUCCESS && host == nullptr) status = CL_MAP_FAILURE;
  // On failure `mem` releases the buffer before we return or throw.
  if (!allocation_succeeded(status, "clEnqueueMapBuffer", what, refusal)) return false;
  out = pinned_block{mem.release_ownership(), host};
  return true;
}

void host_pinned_allocator::deallocate(pinned_block block, std::uint64_t) noexcept {
  if (block.mem == nullptr) return;
  // A discrete device copies the host's bytes back at the unmap: wasted work, but legal and rare
  // (a pool unmaps only when it frees a block).
  clEnqueueUnmapMemObject(queue_.get(), block.mem, block.host_ptr, 0, nullptr, nullptr);
  clReleaseMemObject(block.mem);  // destroyed by the runtime once the unmap has run
  clFlush(queue_.get());          // submit the unmap now, so the buffer does not linger
}

}  // namespace clpool::opencl
