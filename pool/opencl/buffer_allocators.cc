#include "pool/opencl/buffer_allocators.h"

#include <algorithm>
#include <string>

#include "pool/opencl/cl_error.h"

namespace clpool::opencl {

void check_pool_buffer_flags(cl_mem_flags flags, const char* who) {
  if ((flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)) != 0) {
    throw invalid_use(std::string(who) +
                      ": CL_MEM_USE_HOST_PTR and CL_MEM_COPY_HOST_PTR cannot be used by a pool "
                      "(it has no host pointer to give)");
  }
}

namespace {
// The new buffer, or null with `refusal` filled on out-of-memory; other failures throw cl_error.
cl_mem create_buffer(cl_context context, cl_mem_flags flags, std::uint64_t bytes,
                     clpool::allocator_refusal& refusal) {
  cl_int status = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(context, flags, static_cast<size_t>(bytes), nullptr, &status);
  if (status == CL_SUCCESS && mem == nullptr) status = CL_OUT_OF_HOST_MEMORY;
  if (status == CL_SUCCESS) return mem;         // the failure text is built only on failure
  if (mem != nullptr) clReleaseMemObject(mem);  // a failing status with an object: not ours to keep
  allocation_succeeded(status, "clCreateBuffer", std::to_string(bytes) + " bytes", refusal);
  return nullptr;  // out-of-memory (any other status threw above)
}

void release_block(buffer_block block) noexcept {
  if (block.pending_queue != nullptr) clReleaseCommandQueue(block.pending_queue);
  if (block.mem != nullptr) clReleaseMemObject(block.mem);
}
}  // namespace

deferred_buffer_allocator::deferred_buffer_allocator(cl_context context, cl_mem_flags flags)
    : flags_(flags) {
  if (context == nullptr) throw invalid_use("deferred_buffer_allocator: null context");
  check_pool_buffer_flags(flags, "deferred_buffer_allocator");
  context_ = context_ref::retain(context);
  largest_block_ = context_max_alloc(context);
}

bool deferred_buffer_allocator::try_allocate(std::uint64_t bytes, buffer_block& out,
                                             clpool::allocator_refusal& refusal) {
  cl_mem mem = create_buffer(context_.get(), flags_, bytes, refusal);
  if (mem == nullptr) return false;
  out = buffer_block{mem, nullptr};
  return true;
}

buffer_block deferred_buffer_allocator::allocate(std::uint64_t bytes) {
  return clpool::allocate_or_throw(*this, bytes);
}

void deferred_buffer_allocator::deallocate(buffer_block block, std::uint64_t) noexcept {
  release_block(block);
}

immediate_buffer_allocator::immediate_buffer_allocator(cl_command_queue queue,
                                                       immediate_buffer_options options)
    : options_(options), method_(options.method) {
  if (queue == nullptr) throw invalid_use("immediate_buffer_allocator: null queue");
  check_pool_buffer_flags(options.flags, "immediate_buffer_allocator");
  queue_ = queue_ref::retain(queue);
  context_ = context_ref::retain(queue_context(queue));
  largest_block_ = context_max_alloc(context_.get());
  if (method_ == force_method::automatic) {
    method_ =
        device_version(queue_device(queue)) >= 120 ? force_method::migrate : force_method::write;
  }
}

buffer_block immediate_buffer_allocator::allocate(std::uint64_t bytes) {
  return clpool::allocate_or_throw(*this, bytes);
}

bool immediate_buffer_allocator::try_allocate(std::uint64_t bytes, buffer_block& out,
                                              clpool::allocator_refusal& refusal) {
  mem_ref mem = mem_ref::adopt(create_buffer(context_.get(), options_.flags, bytes, refusal));
  if (!mem) return false;
  cl_event forced = nullptr;
  cl_event* event_out = options_.wait_for_allocation ? &forced : nullptr;
  cl_int status = CL_SUCCESS;
  const char* call = nullptr;
  if (method_ == force_method::migrate) {
    cl_mem m = mem.get();
    call = "clEnqueueMigrateMemObjects";
    status = clEnqueueMigrateMemObjects(
        queue_.get(), 1, &m, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, nullptr, event_out);
  } else {
    static const unsigned char zeros[4] = {0, 0, 0, 0};
    call = "clEnqueueWriteBuffer";
    status = clEnqueueWriteBuffer(queue_.get(), mem.get(), CL_FALSE, 0,
                                  static_cast<size_t>(std::min<std::uint64_t>(bytes, 4)), zeros, 0,
                                  nullptr, event_out);
  }
  event_ref event = event_ref::adopt(forced);
  if (status == CL_SUCCESS && event) {
    call = "clWaitForEvents";
    status = clWaitForEvents(1, &forced);
    cl_int exec = CL_COMPLETE;
    if (clGetEventInfo(forced, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(exec), &exec, nullptr) ==
            CL_SUCCESS &&
        exec < 0) {
      status = exec;  // the forcing command itself failed: its status says why
    }
  }
  // On failure `mem` is released by its owner before we return or throw: nothing leaks.
  if (!allocation_succeeded(
          status, call, "forcing the allocation of " + std::to_string(bytes) + " bytes", refusal)) {
    return false;
  }
  out = buffer_block{mem.release_ownership(), nullptr};
  return true;
}

void immediate_buffer_allocator::deallocate(buffer_block block, std::uint64_t) noexcept {
  release_block(block);
}

}  // namespace clpool::opencl
