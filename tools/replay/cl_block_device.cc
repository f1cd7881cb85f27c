#include "tools/replay/cl_block_device.h"

#include "common/cl_status.h"
#include "pool/errors.h"
#include "pool/opencl/cl_error.h"

namespace clpool::replay_cli {

using replay::alloc_semantics;
using replay::device_spec;
using replay::replay_device;

cl_block_device::cl_block_device(cl_device_id device, const device_spec& spec)
    : replay_device(spec), capacity_(spec.capacity), semantics_(spec.semantics) {
  cl_int s = CL_SUCCESS;
  context_ = opencl::context_ref::adopt(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &s));
  opencl::throw_if_failed(s, "clCreateContext");
  queue_ = opencl::queue_ref::adopt(
      clCreateCommandQueueWithProperties(context_.get(), device, nullptr, &s));
  opencl::throw_if_failed(s, "clCreateCommandQueueWithProperties");
  if (semantics_ != alloc_semantics::deferred) {
    immediate_.emplace(queue_.get(),
                       opencl::immediate_buffer_options{.method = opencl::force_method::migrate});
  } else {
    deferred_.emplace(context_.get());
  }
}

cl_block_device::~cl_block_device() { close(); }

void cl_block_device::release_blocks() noexcept {
  slots_.for_each_slot([this](std::uint64_t handle, const slot& s) {
    if (s.block.mem != nullptr) deallocate(handle, s.bytes);
  });
  if (queue_) clFinish(queue_.get());
}

void cl_block_device::close() noexcept {
  release_blocks();
  immediate_.reset();
  deferred_.reset();
  queue_ = {};
  context_ = {};
}

std::uint64_t cl_block_device::allocate(std::uint64_t bytes) {
  if (capacity_ == 0 && semantics_ != alloc_semantics::deferred) {
    throw allocator_out_of_memory(common::status_mem_object_allocation_failure,
                                  "OpenCL replay device: capacity 0");
  }
  const opencl::buffer_block block =
      immediate_ ? immediate_->allocate(bytes) : deferred_->allocate(bytes);
  const std::uint64_t handle = slots_.insert(slot{block, bytes, false});
  if (immediate_) mark_committed(slots_[handle]);
  return handle;
}

void cl_block_device::mark_committed(slot& s) noexcept {
  s.committed = true;
  committed_bytes_ += s.bytes;
  if (committed_bytes_ > peak_committed_bytes_) peak_committed_bytes_ = committed_bytes_;
}

void cl_block_device::deallocate(std::uint64_t handle, std::uint64_t bytes) noexcept {
  slot& s = slots_[handle];
  if (s.committed) committed_bytes_ -= s.bytes;
  if (immediate_) {
    immediate_->deallocate(s.block, bytes);
  } else {
    deferred_->deallocate(s.block, bytes);
  }
  slots_.erase(handle);
}

bool cl_block_device::first_use(std::uint64_t handle) {
  slot& s = slots_[handle];
  if (s.committed) return true;
  if (capacity_ == 0) return false;
  const cl_int status = clEnqueueMigrateMemObjects(
      queue_.get(), 1, &s.block.mem, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, nullptr, nullptr);
  if (common::is_out_of_memory_status(status)) return false;
  opencl::throw_if_failed(status, "clEnqueueMigrateMemObjects", "first use of a replay block");
  mark_committed(s);
  return true;
}

}  // namespace clpool::replay_cli
