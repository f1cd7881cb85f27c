// memory_pool<Allocator>: a binned pool of device blocks with PyOpenCL's semantics.
//
// Freed blocks are kept in bins keyed by the leading bits of their size (bins.h) and handed out
// again for requests of the same bin. On top of PyOpenCL's MemoryPool it adds a byte limit, an
// optional trim policy, reclaim callbacks, statistics, an event hook and thread safety.
//
//   memory_pool<my_allocator> pool(my_allocator{...});
//   auto a = pool.allocate(1 << 20);   // rounded to 1,114,111 bytes; a.handle() is the block
//   a.release();                       // or let `a` go out of scope: the block is held for reuse
//
// Out-of-memory: when the allocator says it has no room (allocator.h: it throws
// allocator_out_of_memory or, through try_allocate, returns false) or the limit leaves none, the
// pool frees held blocks and retries, then calls reclaim callbacks and retries, then throws
// out_of_memory with the figures (try_allocate() returns std::nullopt instead). Any other
// allocator exception propagates unchanged. A request that would fit once every held block is
// returned always succeeds.
//
// Thread safety: every member function may be called from many threads at once. Counters read at
// quiescence are exact. Allocator calls are serialised by the pool and never made under the lock
// that hits take, so a hit never waits for a slow allocator call.
#ifndef CLPOOL_POOL_MEMORY_POOL_H_
#define CLPOOL_POOL_MEMORY_POOL_H_

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pool/allocator.h"
#include "pool/bins.h"
#include "pool/errors.h"
#include "pool/internal/pool_state.h"
#include "pool/pool_types.h"
#include "pool/pooled_allocation.h"

namespace clpool {

template <block_allocator A>
class memory_pool {
 public:
  using allocator_type = A;
  using handle_type = typename A::handle_type;
  using allocation = pooled_allocation<A>;

  // Makes a pool over `allocator` (moved in; the pool owns it). Throws argument_error, and makes
  // nothing, if options.leading_bits is above max_leading_bits or the trim ratio is NaN or
  // infinite.
  explicit memory_pool(A allocator = A(), pool_options options = {})
      : state_(make_state(std::move(allocator), options)) {}

  memory_pool(const memory_pool&) = delete;
  memory_pool& operator=(const memory_pool&) = delete;

  // Frees every held block. Live allocations stay valid; each gives its block straight back to
  // the allocator when released, and the last one frees the pool's state.
  ~memory_pool() { state_->pool_destroyed(); }

  // Returns an allocation of at least `size` bytes (rounded up to its bin's size, except in the bin
  // that would round a request of up to the allocator's largest block above it: then exactly
  // `size`, and not kept at release; allocator.h). A zero-byte
  // request returns an allocation with no block and calls nothing. Throws out_of_memory when no
  // block can be had (see the file comment), argument_error when the pool's 64-bit byte accounting
  // would overflow, and passes on any other exception from the allocator. On every throw, the
  // pool's counters are as they were, apart from held blocks freed while trying to make room.
  [[gnu::always_inline]] allocation allocate(std::uint64_t size) { return state_->allocate(size); }

  // allocate() for callers to whom out-of-memory is an outcome, not an error: after the same
  // retries (free held blocks, reclaim callbacks), returns std::nullopt instead of throwing
  // out_of_memory, and fills *report, when given, with the figures out_of_memory would carry. It
  // counts in the statistics (ooms_raised) and reaches the observer just the same. A zero-byte
  // request returns an allocation with no block. Still throws argument_error, and passes on the
  // allocator's other exceptions, as allocate() does. Slower than allocate() on a hit (it takes
  // the general path). On out-of-memory it throws nothing at all when the allocator reports by
  // value (allocator.h); over a throwing allocator each attempt still costs that exception.
  [[nodiscard]] std::optional<allocation> try_allocate(std::uint64_t size,
                                                       oom_report* report = nullptr) {
    return state_->try_allocate(size, report);
  }

  // PyOpenCL's spelling (MemoryPool.__call__) and CuPy's (MemoryPool.malloc) of allocate().
  allocation operator()(std::uint64_t size) { return allocate(size); }
  allocation malloc(std::uint64_t size) { return allocate(size); }

  // Returns every held block to the allocator. Live allocations are untouched.
  void free_held() { state_->free_held(); }

  // CuPy's name for free_held().
  void free_all_blocks() { free_held(); }

  // From now on, blocks given back go straight to the allocator; also frees what is held now.
  void stop_holding() { state_->stop_holding(); }

  // False after stop_holding().
  bool is_holding() const { return state_->is_holding(); }

  // Managed bytes (active rounded + held) will never exceed `limit_bytes`; pass `unlimited` to
  // remove the limit. Frees held blocks, largest first, if managed bytes are above the new limit.
  // Throws argument_error, changing nothing, if live allocations alone already exceed it.
  void set_limit(std::uint64_t limit_bytes) { state_->set_limit(limit_bytes); }

  // The current limit, or `unlimited`.
  std::uint64_t limit() const { return state_->limit(); }

  // Replaces the trim policy (see pool_types.h) and applies it at once. Throws argument_error,
  // changing nothing, if the ratio is NaN or infinite.
  void set_trim_policy(const trim_policy& policy) { state_->set_trim_policy(policy); }
  trim_policy get_trim_policy() const { return state_->get_trim_policy(); }

  // Frees held blocks, largest first, until at most `target_held_bytes` are held. Returns the
  // bytes freed.
  std::uint64_t trim(std::uint64_t target_held_bytes) { return state_->trim(target_held_bytes); }

  // Registers a callback to run when a request fails even after freeing held memory (see
  // pool_types.h). Callbacks run in registration order. Throws argument_error for an empty one.
  reclaim_callback_id add_reclaim_callback(reclaim_callback callback) {
    return state_->add_reclaim_callback(std::move(callback));
  }

  // Unregisters a callback. Returns false if `id` is not registered.
  bool remove_reclaim_callback(reclaim_callback_id id) {
    return state_->remove_reclaim_callback(id);
  }

  // Installs (or, with nullptr, removes) the observer that receives every pool_event.
  void set_observer(std::shared_ptr<pool_observer> observer) {
    state_->set_observer(std::move(observer));
  }

  // A consistent snapshot of every counter.
  pool_counters counters() const { return state_->counters(); }

  // A consistent snapshot of the statistics.
  pool_statistics statistics() const { return state_->statistics(); }

  // The held blocks, bin by bin, smallest first.
  std::vector<held_bin_summary> held_bins() const { return state_->held_bins(); }

  // The same walk as held_bins() without building a vector: calls f(const held_bin_summary&) for
  // every non-empty bin, smallest first, and allocates nothing itself. Contract: f runs while the
  // pool's lock is held, so it must not call any member of this pool or release an allocation of
  // it (that would deadlock); it sees one consistent snapshot. If f throws, the walk stops, the
  // lock is released and the exception propagates; the pool is unchanged. For tests and checkers
  // that walk the bins often (fuzz/pool_ops_fuzzer.cc does after every step).
  template <class F>
  void for_each_held_bin(F&& f) const {
    state_->for_each_held_bin(std::forward<F>(f));
  }

  // The seeds' counters (PyOpenCL MemoryPool).
  std::uint64_t held_blocks() const { return counters().held_blocks; }
  std::uint64_t active_blocks() const { return counters().active_blocks; }
  std::uint64_t held_bytes() const { return counters().held_bytes; }
  std::uint64_t active_bytes() const { return counters().active_bytes; }
  std::uint64_t managed_bytes() const { return counters().managed_bytes; }

  // CuPy's names. CuPy counts blocks by their allocated size, so used_bytes() is the rounded size
  // of live blocks and used_bytes() + free_bytes() == total_bytes() at quiescence.
  std::uint64_t used_bytes() const { return counters().active_rounded_bytes; }
  std::uint64_t free_bytes() const { return counters().held_bytes; }
  std::uint64_t total_bytes() const { return counters().managed_bytes; }
  std::uint64_t n_free_blocks() const { return counters().held_blocks; }

  // The bin scheme's leading bits, fixed at construction.
  unsigned leading_bits() const { return state_->leading_bits(); }

  // The allocator the pool owns. Not synchronised with the pool's own allocator calls: use it to
  // read configuration, or when no other thread is using the pool.
  A& allocator() noexcept { return state_->allocator(); }

  // Walks every bin marked in use (held_blocks.h: a bin keeps its mark after its last block is
  // taken, until the search for the largest held block or free_held() clears it) and checks the
  // counters against them: O(marked bins plus one bitmap word per 64 bins up to the highest),
  // whatever the number of held blocks. For tests and asserts.
  bool state_is_valid() const { return state_->state_is_valid(); }

 private:
  static internal::pool_state<A>* make_state(A&& allocator, const pool_options& options) {
    if (!leading_bits_is_valid(options.leading_bits)) {
      throw argument_error("memory_pool: leading_bits " + std::to_string(options.leading_bits) +
                           " is out of range; it must be 0 to " + std::to_string(max_leading_bits) +
                           " (PyOpenCL's default is " + std::to_string(default_leading_bits) + ")");
    }
    if (!std::isfinite(options.trim.max_held_to_active_ratio)) {
      throw argument_error(
          "memory_pool: trim_policy.max_held_to_active_ratio must be finite "
          "(negative turns it off)");
    }
    return new internal::pool_state<A>(std::move(allocator), options);
  }

  internal::pool_state<A>* state_;
};

}  // namespace clpool

#endif  // CLPOOL_POOL_MEMORY_POOL_H_
