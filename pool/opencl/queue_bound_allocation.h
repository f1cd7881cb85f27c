// queue_bound_allocation<A>: a pooled block that may be bound to an in-order command queue, with
// PyOpenCL PooledSVM's queue semantics (bind_to_queue, unbind_from_queue, release,
// enqueue_release). The base of pooled_buffer and pooled_svm.
//
// The block's handle records the queue it is bound to (an owned reference in
// handle().pending_queue). When the allocation is released, the block goes back to the pool still
// carrying that queue; the next user's bind (or the allocator's free) then orders itself after the
// work on it without blocking the host (queue_sync.h). With tracking off (a buffer pool without
// cross-queue safety), the queue is dropped on release, as in PyOpenCL's PooledBuffer.
#ifndef CLPOOL_POOL_OPENCL_QUEUE_BOUND_ALLOCATION_H_
#define CLPOOL_POOL_OPENCL_QUEUE_BOUND_ALLOCATION_H_

// Installed headers are used outside Bazel: pick OpenCL 3.0 unless the includer chose.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <cstdint>
#include <utility>

#include "pool/memory_pool.h"
#include "pool/opencl/cl_error.h"
#include "pool/opencl/cl_object.h"
#include "pool/opencl/queue_sync.h"

namespace clpool::opencl {

// Throws invalid_use unless `queue` is non-null, in-order and of `context`.
inline void check_bindable_queue(cl_command_queue queue, cl_context context, const char* who) {
  if (queue == nullptr) throw invalid_use(std::string(who) + ": null queue");
  if (queue_is_out_of_order(queue)) {
    throw invalid_use(std::string(who) +
                      ": the queue is out-of-order; a pooled block can only be bound to an "
                      "in-order queue, because release ordering relies on it");
  }
  if (queue_context(queue) != context) {
    throw invalid_use(std::string(who) + ": the queue belongs to another context than the pool's");
  }
}

template <block_allocator A>
class queue_bound_allocation {
 public:
  using allocation = typename memory_pool<A>::allocation;

  queue_bound_allocation() noexcept = default;

  // Takes over `block` (fresh from the pool) and binds it to `queue` (may be null: unbound, for
  // host use). With `track` on, first orders `queue` (or the host) after the block's previous
  // user's work. On a throw the block goes back to the pool with its ordering obligation intact.
  queue_bound_allocation(allocation block, cl_context context, bool track, cl_command_queue queue)
      : block_(std::move(block)), context_(context), track_(track) {
    if (!block_.has_block()) return;
    cl_command_queue& pending = block_.handle().pending_queue;
    // The same in-order queue (or host use of a block with no pending work, the only case
    // without tracking, which strips queues on release): nothing to order.
    if (pending == queue) return;
    if (!track_) release_pending();
    queue_ref next = queue_ref::retain(queue);
    if (track_) hand_over(pending, queue);
    pending = next.release_ownership();
  }

  queue_bound_allocation(queue_bound_allocation&&) noexcept = default;
  queue_bound_allocation& operator=(queue_bound_allocation&& other) noexcept {
    if (this != &other) {
      release();
      block_ = std::move(other.block_);
      context_ = other.context_;
      track_ = other.track_;
    }
    return *this;
  }
  ~queue_bound_allocation() { release(); }

  // Binds the block to in-order `queue`; work the block's current queue has enqueued happens
  // before any work later enqueued on `queue` (a marker/barrier pair when tracking; the host is
  // not blocked). Throws invalid_use for a null, out-of-order or foreign queue or a released
  // allocation, cl_error if the ordering commands fail (the binding is then unchanged).
  void bind_to_queue(cl_command_queue queue) {
    require_block("bind_to_queue");
    check_bindable_queue(queue, context_, "bind_to_queue");
    cl_command_queue& pending = block_.handle().pending_queue;
    if (pending == queue) return;
    queue_ref next = queue_ref::retain(queue);
    if (track_) {
      hand_over(pending, queue);
    } else {
      release_pending();
    }
    pending = next.release_ownership();
  }

  // Waits for the work enqueued so far on the bound queue (wait_for_queue) and unbinds. Does
  // nothing when unbound. Throws invalid_use on a released allocation, cl_error if the wait fails
  // (still bound then).
  void unbind_from_queue() {
    require_block("unbind_from_queue");
    cl_command_queue& pending = block_.handle().pending_queue;
    if (pending == nullptr) return;
    wait_for_queue(pending);
    release_pending();
  }

  // The queue the block is bound to, or nullptr.
  cl_command_queue queue() const noexcept {
    return block_.has_block() ? block_.handle().pending_queue : nullptr;
  }

  // Gives the block back to the pool. Work enqueued on the bound queue before this call will
  // complete before the block's next user (or its real free) starts. Does nothing when released.
  void release() noexcept {
    if (!block_.has_block()) return;
    if (!track_) release_pending();
    block_.release();
  }

  // Gives the block back to the device, never to the pool for another user: for a block that
  // something outside the pool still reaches (a sub-buffer made of it with clCreateSubBuffer
  // keeps its memory alive). The device frees it once that is gone and the work enqueued on it
  // has finished. Does nothing when released.
  void discard() noexcept {
    if (!block_.has_block()) return;
    if (!track_) release_pending();
    block_.discard();
  }

  // Binds to `queue` if it is not null (see bind_to_queue), then release()s: the block's next user
  // waits for work enqueued on `queue` before this call. Throws as bind_to_queue does, in which
  // case the allocation is still live.
  void enqueue_release(cl_command_queue queue = nullptr) {
    if (!block_.has_block()) return;
    if (queue != nullptr) bind_to_queue(queue);
    release();
  }

  // True while the allocation owns a block.
  bool has_block() const noexcept { return block_.has_block(); }
  explicit operator bool() const noexcept { return has_block(); }
  // Requested and rounded sizes; 0 when released.
  std::uint64_t size() const noexcept { return block_.size(); }
  std::uint64_t rounded_size() const noexcept { return block_.rounded_size(); }
  // The core pool's allocation id.
  std::uint64_t id() const noexcept { return block_.id(); }

 protected:
  const typename A::handle_type& handle() const noexcept { return block_.handle(); }

 private:
  void require_block(const char* who) const {
    if (!block_.has_block()) {
      throw invalid_use(std::string(who) + ": the allocation was released (or is empty)");
    }
  }
  void release_pending() noexcept {
    cl_command_queue& pending = block_.handle().pending_queue;
    if (pending != nullptr) clReleaseCommandQueue(std::exchange(pending, nullptr));
  }

  allocation block_;
  cl_context context_ = nullptr;
  bool track_ = true;
};

}  // namespace clpool::opencl

#endif  // CLPOOL_POOL_OPENCL_QUEUE_BOUND_ALLOCATION_H_
