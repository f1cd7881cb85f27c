#include "pool/opencl/svm_allocator.h"

#include <algorithm>
#include <limits>
#include <string>

#include "pool/opencl/cl_error.h"
#include "pool/opencl/queue_sync.h"

namespace clpool::opencl {

svm_allocator::svm_allocator(cl_context context, cl_uint alignment, cl_svm_mem_flags flags,
                             cl_command_queue queue)
    : alignment_(alignment), flags_(flags) {
  if (context == nullptr) throw invalid_use("svm_allocator: null context");
  if ((alignment & (alignment - 1)) != 0) {
    throw invalid_use("svm_allocator: alignment " + std::to_string(alignment) +
                      " is not 0 or a power of two");
  }
  cl_device_svm_capabilities all = ~cl_device_svm_capabilities{0};
  bool any = false;
  std::uint64_t max_alloc = std::numeric_limits<std::uint64_t>::max();
  for (cl_device_id device : context_devices(context)) {
    const cl_device_svm_capabilities caps = device_svm_capabilities(device);
    if ((caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) == 0) continue;
    any = true;
    all &= caps;
    if (const std::uint64_t m = device_max_alloc(device); m != 0) {  // 0: says nothing
      max_alloc = std::min(max_alloc, m);
    }
  }
  if (!any) {
    throw unsupported_feature(
        "svm_allocator: no device of the context supports SVM "
        "(CL_DEVICE_SVM_CAPABILITIES is 0 or not available)");
  }
  if ((flags & CL_MEM_SVM_FINE_GRAIN_BUFFER) != 0 && (all & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) == 0) {
    throw unsupported_feature(
        "svm_allocator: CL_MEM_SVM_FINE_GRAIN_BUFFER requested but the "
        "devices lack CL_DEVICE_SVM_FINE_GRAIN_BUFFER");
  }
  if ((flags & CL_MEM_SVM_ATOMICS) != 0 && (all & CL_DEVICE_SVM_ATOMICS) == 0) {
    throw unsupported_feature(
        "svm_allocator: CL_MEM_SVM_ATOMICS requested but the devices lack "
        "CL_DEVICE_SVM_ATOMICS");
  }
  max_alloc_ = max_alloc;
  if (queue != nullptr) {
    if (queue_context(queue) != context) {
      throw invalid_use("svm_allocator: the queue belongs to another context");
    }
    if (queue_is_out_of_order(queue)) {
      throw invalid_use(
          "svm_allocator: the free queue is out-of-order; frees must be ordered "
          "after the work enqueued before them, which needs an in-order queue");
    }
  }
  context_ = context_ref::retain(context);
  queue_ = queue_ref::retain(queue);
}

svm_block svm_allocator::allocate(std::uint64_t bytes) {
  return clpool::allocate_or_throw(*this, bytes);
}

bool svm_allocator::try_allocate(std::uint64_t bytes, svm_block& out,
                                 clpool::allocator_refusal& refusal) {
  if (bytes > max_alloc_) {
    throw cl_error(CL_INVALID_BUFFER_SIZE, "clSVMAlloc",
                   std::to_string(bytes) + " bytes is above CL_DEVICE_MAX_MEM_ALLOC_SIZE (" +
                       std::to_string(max_alloc_) + ")");
  }
  void* ptr = clSVMAlloc(context_.get(), flags_, static_cast<size_t>(bytes), alignment_);
  if (ptr == nullptr) {
    refusal.status = CL_MEM_OBJECT_ALLOCATION_FAILURE;
    refusal.message = "clSVMAlloc returned NULL for " + std::to_string(bytes) +
                      " bytes (treated as out of memory)";
    return false;
  }
  out = svm_block{ptr, nullptr};
  return true;
}

void svm_allocator::deallocate(svm_block block, std::uint64_t) noexcept {
  cl_command_queue pending = block.pending_queue;
  cl_command_queue free_queue = queue_.get();
  bool freed = false;
  if (free_queue != nullptr) {
    cl_event wait = nullptr;
    bool ready = true;
    if (pending != nullptr && pending != free_queue) {
      try {
        wait = marker_after(pending);
      } catch (...) {
        ready = false;
      }
    }
    if (ready) {
      void* ptrs[1] = {block.ptr};
      freed = clEnqueueSVMFree(free_queue, 1, ptrs, nullptr, nullptr, wait != nullptr ? 1 : 0,
                               wait != nullptr ? &wait : nullptr, nullptr) == CL_SUCCESS;
      if (freed) clFlush(free_queue);
    }
    if (wait != nullptr) clReleaseEvent(wait);
  }
  if (!freed) {
    // No free queue, or enqueueing failed: wait for the pending work, then free synchronously.
    for (cl_command_queue q : {pending, free_queue}) {
      if (q == nullptr) continue;
      try {
        wait_for_queue(q);
      } catch (...) {
        clFinish(q);  // best effort: the free must happen regardless
      }
    }
    clSVMFree(context_.get(), block.ptr);
  }
  if (pending != nullptr) clReleaseCommandQueue(pending);
}

}  // namespace clpool::opencl
