// A block handed out by a memory_pool: move-only, and it gives its block back to the pool when it
// is destroyed or release()d.
#ifndef CLPOOL_POOL_POOLED_ALLOCATION_H_
#define CLPOOL_POOL_POOLED_ALLOCATION_H_

#include <cstdint>
#include <utility>

#include "pool/allocator.h"
#include "pool/bins.h"

namespace clpool {

namespace internal {
template <block_allocator A>
class pool_state;
}  // namespace internal

// Owns one block of a pool. An allocation may outlive the memory_pool object that made it: the
// pool's state lives until its last allocation is gone, and a block released after the pool was
// destroyed goes straight back to the allocator.
//
// A default-constructed or moved-from allocation, or the result of a zero-byte request, has no
// block: has_block() is false, size() is 0, and release() does nothing.
template <block_allocator A>
class pooled_allocation {
 public:
  using handle_type = typename A::handle_type;

  pooled_allocation() noexcept = default;

  pooled_allocation(pooled_allocation&& other) noexcept
      : state_(std::exchange(other.state_, nullptr)),
        handle_(std::exchange(other.handle_, handle_type{})),
        size_(std::exchange(other.size_, 0)),
        rounded_size_(std::exchange(other.rounded_size_, 0)),
        bin_(std::exchange(other.bin_, 0)),
        id_(std::exchange(other.id_, 0)) {}

  // Releases this allocation's block (if any), then takes over `other`'s.
  pooled_allocation& operator=(pooled_allocation&& other) noexcept {
    if (this != &other) {
      release();
      state_ = std::exchange(other.state_, nullptr);
      handle_ = std::exchange(other.handle_, handle_type{});
      size_ = std::exchange(other.size_, 0);
      rounded_size_ = std::exchange(other.rounded_size_, 0);
      bin_ = std::exchange(other.bin_, 0);
      id_ = std::exchange(other.id_, 0);
    }
    return *this;
  }

  pooled_allocation(const pooled_allocation&) = delete;
  pooled_allocation& operator=(const pooled_allocation&) = delete;

  ~pooled_allocation() { release(); }

  // Gives the block back to its pool (or to the allocator, if the pool no longer holds).
  // Afterwards has_block() is false, and size(), rounded_size() and id() are 0. A second call
  // does nothing: a block is never freed twice.
  void release() noexcept {
    if (state_ == nullptr) return;
    internal::pool_state<A>* state = std::exchange(state_, nullptr);
    state->give_back(handle_, size_, rounded_size_, bin_, id_);
    forget_block();
  }

  // Gives the block straight back to the allocator, never to be kept for another request: for
  // a block something outside the pool may still use (an OpenCL sub-buffer keeps its parent's
  // memory). Afterwards as after release(); a second call, or release(), does nothing.
  void discard() noexcept {
    if (state_ == nullptr) return;
    internal::pool_state<A>* state = std::exchange(state_, nullptr);
    state->give_back_unkept(handle_, size_, rounded_size_, bin_, id_);
    forget_block();
  }

  // True while this object owns a block.
  bool has_block() const noexcept { return state_ != nullptr; }
  explicit operator bool() const noexcept { return has_block(); }

  // The allocator's handle for the block. Mutable so that backends can record per-block state
  // (the last queue an SVM block was used on, say) that travels with the block into the pool.
  handle_type& handle() noexcept { return handle_; }
  const handle_type& handle() const noexcept { return handle_; }

  // The size that was requested.
  std::uint64_t size() const noexcept { return size_; }

  // The block's real size: the request rounded up to its bin's size (or the request's own, in the
  // bin that would round a request up to the allocator's largest block above it: memory_pool.h).
  std::uint64_t rounded_size() const noexcept { return rounded_size_; }

  // This allocation's id, unique within its pool and starting at 1; 0 when there is no block.
  std::uint64_t id() const noexcept { return id_; }

 private:
  friend class internal::pool_state<A>;

  // The block is the pool's again: nothing of it stays here (a size without a block would
  // describe memory this allocation no longer has).
  void forget_block() noexcept {
    handle_ = handle_type{};
    size_ = rounded_size_ = id_ = 0;
  }

  pooled_allocation(internal::pool_state<A>* state, const handle_type& handle, std::uint64_t size,
                    std::uint64_t rounded_size, bin_id bin, std::uint64_t id) noexcept
      : state_(state),
        handle_(handle),
        size_(size),
        rounded_size_(rounded_size),
        bin_(bin),
        id_(id) {}

  internal::pool_state<A>* state_ = nullptr;
  handle_type handle_{};
  std::uint64_t size_ = 0;
  std::uint64_t rounded_size_ = 0;
  bin_id bin_ = 0;  // kept so the release path need not recompute it
  std::uint64_t id_ = 0;
};

}  // namespace clpool

#endif  // CLPOOL_POOL_POOLED_ALLOCATION_H_
