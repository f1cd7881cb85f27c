// shared_limit and limited_allocator<A>: one byte limit that several pools draw on.
//
// A memory_pool's own limit (set_limit) bounds that pool. CuPy keeps one limit per device across
// the per-stream arenas of its pool; clpool's Python arenas are separate pools (one per queue),
// so the limit lives here, in the allocators they share: a block is made only while the blocks
// made through every limited_allocator on the same shared_limit stay within it. A refusal is
// out-of-memory, so each pool frees what it holds and retries, as for a full device.
//
//   auto limit = std::make_shared<shared_limit>(512 << 20);
//   memory_pool<limited_allocator<my_allocator>> a({my_allocator(...), limit});
//   memory_pool<limited_allocator<my_allocator>> b({my_allocator(...), limit});
#ifndef CLPOOL_POOL_SHARED_LIMIT_H_
#define CLPOOL_POOL_SHARED_LIMIT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "pool/allocator.h"
#include "pool/pool_types.h"

namespace clpool {

// Thread-safe. Bytes are the allocators' block sizes (the pools' rounded sizes).
class shared_limit {
 public:
  explicit shared_limit(std::uint64_t limit_bytes = unlimited) noexcept : limit_(limit_bytes) {}

  // Takes `bytes` if the total stays within the limit. Lowering the limit below what is in use
  // refuses new blocks until enough are returned; it frees nothing itself.
  bool try_take(std::uint64_t bytes) noexcept {
    std::uint64_t used = used_.load(std::memory_order_relaxed);
    for (;;) {
      const std::uint64_t limit = limit_.load(std::memory_order_relaxed);
      if (bytes > limit || used > limit - bytes) return false;
      if (used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed)) return true;
    }
  }
  void give_back(std::uint64_t bytes) noexcept {
    used_.fetch_sub(bytes, std::memory_order_relaxed);
  }

  void set_limit(std::uint64_t limit_bytes) noexcept {
    limit_.store(limit_bytes, std::memory_order_relaxed);
  }
  std::uint64_t limit() const noexcept { return limit_.load(std::memory_order_relaxed); }
  std::uint64_t used() const noexcept { return used_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> limit_;
  std::atomic<std::uint64_t> used_{0};
};

// The status a limited_allocator refuses with: out-of-memory to the pool (allocator_refusal).
inline constexpr int shared_limit_status = -4;  // CL_MEM_OBJECT_ALLOCATION_FAILURE's value

template <block_allocator A>
class limited_allocator {
 public:
  using handle_type = typename A::handle_type;

  // A null `limit` means no limit.
  limited_allocator(A inner, std::shared_ptr<shared_limit> limit)
      : inner_(std::move(inner)), limit_(std::move(limit)) {}

  bool try_allocate(std::uint64_t bytes, handle_type& out, allocator_refusal& refusal) {
    if (limit_ && !limit_->try_take(bytes)) {
      refusal.status = shared_limit_status;
      refusal.limit_bytes = limit_->limit();
      refusal.message = "a block of " + std::to_string(bytes) +
                        " bytes would take the pools "
                        "sharing the limit past it: " +
                        std::to_string(limit_->used()) + " bytes in use";
      return false;
    }
    bool made = false;
    try {
      if constexpr (allocator_reports_oom_by_value<A>) {
        made = inner_.try_allocate(bytes, out, refusal);
      } else {
        try {
          out = inner_.allocate(bytes);
          made = true;
        } catch (const allocator_out_of_memory& e) {
          refusal.status = e.status();
          refusal.message = e.what();
        }
      }
    } catch (...) {
      if (limit_) limit_->give_back(bytes);
      throw;
    }
    if (!made && limit_) limit_->give_back(bytes);
    return made;
  }
  handle_type allocate(std::uint64_t bytes) { return allocate_or_throw(*this, bytes); }
  void deallocate(handle_type block, std::uint64_t bytes) noexcept {
    inner_.deallocate(block, bytes);
    if (limit_) limit_->give_back(bytes);
  }

  std::uint64_t largest_block() const noexcept { return largest_block_of(inner_); }

  A& inner() noexcept { return inner_; }
  const A& inner() const noexcept { return inner_; }
  const std::shared_ptr<shared_limit>& limit() const noexcept { return limit_; }
  // Forwarded for the OpenCL pools (buffer_pool, svm_pool read the allocator's context).
  auto context() const noexcept requires requires(const A& a) { a.context(); }
  { return inner_.context(); }

 private:
  A inner_;
  std::shared_ptr<shared_limit> limit_;
};

}  // namespace clpool

#endif  // CLPOOL_POOL_SHARED_LIMIT_H_
