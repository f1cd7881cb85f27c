// cl_block_device: the part of a replay device that every OpenCL-backed device shares. Each
// block is a real cl_mem from pool/opencl's allocators on one context and in-order queue:
//   immediate / host_oom: immediate_buffer_allocator (create, then migrate: a device that fails
//                         at creation or at first use both refuse here, and the pool retries);
//   deferred:             deferred_buffer_allocator (create only); first_use() enqueues
//                         clEnqueueMigrateMemObjects, where the device commits the buffer, and
//                         an out-of-memory status there is the deferred out-of-memory.
// What the device has committed is the subclass's to say (the mock's own ledger, or a real
// device's free-memory query), so it stays in one place.
#ifndef CLPOOL_TOOLS_REPLAY_CL_BLOCK_DEVICE_H_
#define CLPOOL_TOOLS_REPLAY_CL_BLOCK_DEVICE_H_

#include <CL/cl.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "pool/opencl/buffer_allocators.h"
#include "pool/opencl/cl_object.h"
#include "replay/device.h"
#include "replay/handle_table.h"
#include "replay/result.h"

namespace clpool::replay_cli {

class cl_block_device : public replay::replay_device {
 public:
  ~cl_block_device() override;

  std::uint64_t allocate(std::uint64_t bytes) override;
  void deallocate(std::uint64_t handle, std::uint64_t bytes) noexcept override;
  bool first_use(std::uint64_t handle) override;
  bool defers_allocation() const noexcept override {
    return semantics_ == replay::alloc_semantics::deferred;
  }
  std::uint64_t capacity() const noexcept override { return capacity_; }

 protected:
  // Creates a context and an in-order queue on `device`, for a replay device as `spec` says
  // (its capacity and semantics). A capacity of 0 refuses everything (a device cannot be made
  // smaller than nothing).
  cl_block_device(cl_device_id device, const replay::device_spec& spec);

  // Releases every block still alive (a no-pool replay stops at its out-of-memory with live
  // blocks), waits for the queue, then releases the allocators, the queue and the context.
  // Idempotent; the destructor calls it, and a subclass that must act after the device's
  // objects are gone (the mock's reset) calls it first.
  void close() noexcept;

  // Releases every block still alive and waits for the queue; the context and queue stay (a
  // subclass may still use them, e.g. to check the device once the replay's blocks are gone).
  void release_blocks() noexcept;

  // Sum of the sizes of the blocks committed now (what a device without a free-memory query
  // can be said to hold; its own rounding is unknown).
  std::uint64_t committed_block_bytes() const noexcept { return committed_bytes_; }
  std::uint64_t peak_committed_block_bytes() const noexcept { return peak_committed_bytes_; }

  cl_context context() const noexcept { return context_.get(); }
  cl_command_queue queue() const noexcept { return queue_.get(); }

 private:
  struct slot {
    opencl::buffer_block block;
    std::uint64_t bytes = 0;
    bool committed = false;
  };

  std::uint64_t capacity_;
  replay::alloc_semantics semantics_;
  opencl::context_ref context_;
  opencl::queue_ref queue_;
  std::optional<opencl::immediate_buffer_allocator> immediate_;
  std::optional<opencl::deferred_buffer_allocator> deferred_;
  void mark_committed(slot& s) noexcept;
  std::uint64_t committed_bytes_ = 0, peak_committed_bytes_ = 0;
  replay::handle_table<slot> slots_;
};

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_CL_BLOCK_DEVICE_H_
