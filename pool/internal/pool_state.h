// The state behind a memory_pool: bins, counters, statistics and the allocator, shared by the pool
// object and every allocation it handed out, and deleted when the last of them is gone. This file
// is the locking and the order of work; the parts it carries out under its lock each live in a
// header of their own: the counters and statistics (pool_ledger.h), the observer (event_hooks.h),
// the trim arithmetic (trim_budget.h), the retry ladder (oom_ladder.h) and the reclaim callbacks
// (reclaim_registry.h).
//
// Locking: `lock_` (a biased_lock: no atomic read-modify-write while one thread uses the pool)
// guards everything but the allocator, and is held only for short
// bookkeeping. `allocator_mutex_` serialises calls into the allocator, which may be slow, so that
// no allocator call ever happens under `lock_` and hits never wait for a miss.
#ifndef CLPOOL_POOL_INTERNAL_POOL_STATE_H_
#define CLPOOL_POOL_INTERNAL_POOL_STATE_H_

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pool/allocator.h"
#include "pool/bins.h"
#include "pool/errors.h"
#include "pool/internal/event_hooks.h"
#include "pool/internal/held_blocks.h"
#include "pool/internal/invariant.h"
#include "pool/internal/oom_ladder.h"
#include "pool/internal/pool_ledger.h"
#include "pool/internal/reclaim_registry.h"
#include "pool/internal/trim_budget.h"
#include "pool/pool_types.h"
#include "pool/pooled_allocation.h"
#include "sync/biased_lock.h"
#include "sync/spin_lock.h"

namespace clpool::internal {

template <block_allocator A>
class pool_state {
 public:
  using handle_type = typename A::handle_type;
  using allocation = pooled_allocation<A>;

  // Precondition: options were validated by the caller (memory_pool's constructor).
  pool_state(A&& allocator, const pool_options& options)
      : allocator_(std::move(allocator)),
        leading_bits_(options.leading_bits),
        held_(options.leading_bits),
        ledger_(options.limit_bytes),
        trim_(options.trim),
        unpooled_bin_(straddling_bin(largest_block_of(allocator_), options.leading_bits)) {}

  pool_state(const pool_state&) = delete;
  pool_state& operator=(const pool_state&) = delete;

  unsigned leading_bits() const noexcept { return leading_bits_; }

  // Fast path: a held block of the right bin, under the lock's uncontended fast path. A lock
  // that needs more than a store and two loads is allocate_contended()'s; a miss is
  // allocate_slow()'s.
  [[gnu::always_inline]] allocation allocate(std::uint64_t size) {
    if (size == 0) return allocation{};  // defined as "no block"; no allocator call
    const auto [bin, rounded, exponent] = locate(size, leading_bits_);
    if (!lock_.try_lock_fast()) [[unlikely]]
      return allocate_contended(size, bin, rounded);
    handle_type handle;
    if (held_.try_pop(bin, exponent, handle)) [[likely]] {
      allocation hit = activate_hit_locked(handle, size, rounded, bin);
      lock_.unlock_owner();
      return hit;
    }
    lock_.unlock_owner();
    return allocate_slow(size, bin, rounded);
  }

  // allocate() when the lock is not this thread's for a store and two loads: the same hit under
  // the full lock, else the slow path.
  [[gnu::noinline]] allocation allocate_contended(std::uint64_t size, bin_id bin,
                                                  std::uint64_t rounded) {
    {
      std::lock_guard<detail::biased_lock> guard(lock_);
      handle_type handle;
      if (held_.try_pop(bin, handle)) return activate_hit_locked(handle, size, rounded, bin);
    }
    return allocate_slow(size, bin, rounded);
  }

  // allocate() reporting out-of-memory by value: the same attempts and retries, then, instead of
  // throwing out_of_memory, counts and announces it as allocate() does, fills *report (if given)
  // and returns nothing. Hits take the general path (attempt()), not allocate()'s inlined one.
  std::optional<allocation> try_allocate(std::uint64_t size, oom_report* report);

  // Called by pooled_allocation::release: keeps the block, or frees it when not holding, then
  // applies the trim policy. Deletes the state if this was its last reference.
  //
  // Out of line on purpose: inlined into every release site (destructors, move assignments) it
  // made mixed workloads ~20 % slower (measured A/B), while the call costs the hit path little.
  [[gnu::noinline]] void give_back(const handle_type& handle, std::uint64_t size,
                                   std::uint64_t rounded, bin_id bin, std::uint64_t id) noexcept {
    // Everything but the uncontended lock is a tail call, so this path needs no stack frame.
    if (!lock_.try_lock_fast()) [[unlikely]]
      return give_back_contended(handle, size, rounded, bin, id);
    give_back_locked</*kOwner=*/true>(handle, size, rounded, bin, id);
  }

  // give_back when the lock is not this thread's for the taking without a call.
  [[gnu::noinline]] void give_back_contended(const handle_type& handle, std::uint64_t size,
                                             std::uint64_t rounded, bin_id bin,
                                             std::uint64_t id) noexcept {
    lock_.lock();
    give_back_locked</*kOwner=*/false>(handle, size, rounded, bin, id);
  }

  // Precondition: lock_ is held (through try_lock_fast() when kOwner); this releases it.
  template <bool kOwner>
  [[gnu::always_inline]] void give_back_locked(const handle_type& handle, std::uint64_t size,
                                               std::uint64_t rounded, bin_id bin,
                                               std::uint64_t id) noexcept {
    // Fast path: holding, no observer, and the free list has room. The pool object is alive
    // while holding, so this is never the last reference.
    if (plain_release_ && held_.try_push_no_alloc(bin, handle)) [[likely]] {
      CLPOOL_ASSERT(ledger_.active_blocks() > 0 && ledger_.active_bytes() >= size &&
                    ledger_.active_rounded_bytes() >= rounded);
      // The block moves from active to held: the totals (blocks, block bytes) stay.
      ledger_.end_active(size);
      ledger_.hold(rounded);
      CLPOOL_EXPENSIVE_ASSERT(state_is_valid_locked());
      if (!trim_.enabled() || trim_.within_fast(ledger_.held_bytes(), ledger_.active_bytes()))
          [[likely]] {
        if constexpr (kOwner) {
          lock_.unlock_owner();
        } else {
          lock_.unlock();
        }
        return;
      }
      return trim_after_release_locked();
    }
    return give_back_slow_locked(handle, size, rounded, bin, id);
  }

  // The release fast path's trim check, with a trim policy set. Precondition: lock_ is held;
  // this releases it.
  [[gnu::noinline]] void trim_after_release_locked() noexcept {
    const std::uint64_t trim_bytes = trim_excess_locked();
    if (trim_bytes != 0) ++extra_refs_;  // keeps the state alive while trimming outside the lock
    lock_.unlock();
    if (trim_bytes != 0) {
      free_largest_held(trim_bytes, /*is_trim=*/true);
      release_extra_ref();
    }
  }

  // pooled_allocation::discard: the block goes back to the allocator, never kept.
  void give_back_unkept(const handle_type& handle, std::uint64_t size, std::uint64_t rounded,
                        bin_id bin, std::uint64_t id) noexcept {
    lock_.lock();
    give_back_slow_locked(handle, size, rounded, bin, id, /*may_keep=*/false);
  }

  // Everything else a release may have to do: grow a free list, free the block when not holding
  // (or not `may_keep`), notify the observer, apply the trim policy, and delete the state after
  // its last reference. Precondition: lock_ is held; this releases it.
  [[gnu::noinline]] void give_back_slow_locked(const handle_type& handle, std::uint64_t size,
                                               std::uint64_t rounded, bin_id bin, std::uint64_t id,
                                               bool may_keep = true) noexcept {
    bool free_now = false;
    bool more_work = false;
    bool last = false;
    std::uint64_t trim_bytes = 0;
    {
      std::lock_guard<detail::biased_lock> guard(lock_, std::adopt_lock);
      CLPOOL_ASSERT(ledger_.active_blocks() > 0 && ledger_.active_bytes() >= size &&
                    ledger_.active_rounded_bytes() >= rounded);
      ledger_.end_active(size);
      free_now = !may_keep || !holding_ || bin == unpooled_bin_;  // unpooled: block_bytes()
      if (!free_now) {
        try {
          held_.push(bin, handle);
          ledger_.hold(rounded);
        } catch (...) {
          free_now = true;  // a free list could not grow: hand the block back instead of losing it
        }
      }
      // The event carries the counters after the release, so a freed block is out of them first.
      if (free_now) ledger_.drop(rounded);
      notify_locked(pool_event_kind::release, id, size, rounded);
      if (free_now) {
        notify_locked(pool_event_kind::allocator_free, 0, rounded, rounded);
      } else {
        trim_bytes = trim_excess_locked();
      }
      CLPOOL_EXPENSIVE_ASSERT(state_is_valid_locked());
      // The block's reference covers the work left to do outside the lock, if there is any.
      more_work = free_now || trim_bytes != 0;
      if (more_work) {
        ++extra_refs_;  // keeps the state alive for the work outside the lock
      } else {
        last = no_refs_locked();
      }
    }
    if (more_work) {
      if (free_now) deallocate_block(handle, rounded);
      if (trim_bytes != 0) free_largest_held(trim_bytes, /*is_trim=*/true);
      release_extra_ref();
    } else if (last) {
      delete this;
    }
  }

  // The pool object is going away: stop holding, free what is held, drop its reference.
  void pool_destroyed() noexcept {
    {
      std::lock_guard<detail::biased_lock> guard(lock_);
      holding_ = false;
      update_plain_release_locked();
    }
    free_largest_held(unlimited, /*is_trim=*/false);
    release_extra_ref();  // the pool object's reference
  }

  void free_held() {
    free_largest_held(unlimited, /*is_trim=*/false);
    std::lock_guard<detail::biased_lock> guard(lock_);
    notify_locked(pool_event_kind::free_held, 0, 0, 0);
  }

  void stop_holding() {
    {
      std::lock_guard<detail::biased_lock> guard(lock_);
      holding_ = false;
      update_plain_release_locked();
      notify_locked(pool_event_kind::stop_holding, 0, 0, 0);
    }
    free_largest_held(unlimited, /*is_trim=*/false);
  }

  bool is_holding() const {
    std::lock_guard<detail::biased_lock> guard(lock_);
    return holding_;
  }

  void set_limit(std::uint64_t limit) {
    std::uint64_t excess = 0;
    {
      std::lock_guard<detail::biased_lock> guard(lock_);
      const std::uint64_t in_use = ledger_.in_use_bytes();
      if (limit < in_use) {
        throw argument_error("set_limit(" + std::to_string(limit) +
                             "): below the rounded bytes of live allocations (" +
                             std::to_string(in_use) + "); the limit is unchanged at " +
                             limit_text(ledger_.limit()));
      }
      ledger_.set_limit(limit);
      const std::uint64_t managed = ledger_.managed_bytes();
      if (managed > limit) excess = managed - limit;
      notify_locked(pool_event_kind::limit_changed, 0, limit, 0);
    }
    if (excess != 0) free_largest_held(excess, /*is_trim=*/false);
  }

  std::uint64_t limit() const {
    std::lock_guard<detail::biased_lock> guard(lock_);
    return ledger_.limit();
  }

  void set_trim_policy(const trim_policy& policy) {
    trim_budget::validate(policy);
    std::uint64_t excess = 0;
    {
      std::lock_guard<detail::biased_lock> guard(lock_);
      trim_.set(policy);
      update_plain_release_locked();
      excess = trim_excess_locked();
    }
    if (excess != 0) free_largest_held(excess, /*is_trim=*/true);
  }

  trim_policy get_trim_policy() const {
    std::lock_guard<detail::biased_lock> guard(lock_);
    return trim_.policy();
  }

  std::uint64_t trim(std::uint64_t target_held_bytes) {
    std::uint64_t excess = 0;
    {
      std::lock_guard<detail::biased_lock> guard(lock_);
      const std::uint64_t held = ledger_.held_bytes();
      if (held > target_held_bytes) excess = held - target_held_bytes;
    }
    return excess == 0 ? 0 : free_largest_held(excess, /*is_trim=*/true);
  }

  pool_counters counters() const {
    std::lock_guard<detail::biased_lock> guard(lock_);
    return ledger_.counters();
  }

  pool_statistics statistics() const {
    std::lock_guard<detail::biased_lock> guard(lock_);
    return ledger_.statistics();
  }

  std::vector<held_bin_summary> held_bins() const {
    std::vector<held_bin_summary> out;
    for_each_held_bin([&](const held_bin_summary& bin) { out.push_back(bin); });
    return out;
  }

  // See memory_pool::for_each_held_bin: f runs under the lock and must not call into the pool.
  template <class F>
  void for_each_held_bin(F&& f) const {
    std::lock_guard<detail::biased_lock> guard(lock_);
    held_.for_each_bin([&](bin_id bin, std::uint64_t blocks) {
      f(held_bin_summary{bin, alloc_size(bin, leading_bits_), blocks});
    });
  }

  reclaim_callback_id add_reclaim_callback(reclaim_callback callback) {
    auto shared = reclaim_registry::wrap(std::move(callback));
    std::lock_guard<detail::biased_lock> guard(lock_);
    return reclaim_.add(std::move(shared));
  }

  bool remove_reclaim_callback(reclaim_callback_id id) {
    std::lock_guard<detail::biased_lock> guard(lock_);
    return reclaim_.remove(id);
  }

  void set_observer(std::shared_ptr<pool_observer> observer) {
    {
      std::lock_guard<detail::biased_lock> guard(lock_);
      hooks_.swap(observer);
      update_plain_release_locked();
    }
    // The previous observer (now in `observer`) is destroyed here, outside the lock.
  }

  // Direct access for callers that configure or inspect their allocator. Not synchronised with
  // the pool's own allocator calls.
  A& allocator() noexcept { return allocator_; }

  // Walks the bins and checks every counter against them. O(bins in use), not O(held blocks).
  bool state_is_valid() const {
    std::lock_guard<detail::biased_lock> guard(lock_);
    return state_is_valid_locked();
  }

 private:
  struct freed_block {
    handle_type handle{};
    std::uint64_t bytes = 0;
  };

  // What went wrong on the last attempt of a request.
  struct failure {
    oom_cause cause = oom_cause::allocator;
    int status = 0;
    std::string message;
    std::uint64_t deficit = 0;  // bytes that would have had to be free for the attempt to work
    std::uint64_t limit =
        unlimited;  // a limit the allocator enforces (shared_limit), if it refused
  };

  static std::string limit_text(std::uint64_t limit) {
    return limit == unlimited ? std::string("unlimited") : std::to_string(limit) + " bytes";
  }

  void update_plain_release_locked() noexcept { plain_release_ = holding_ && !hooks_.active(); }

  bool no_refs_locked() const noexcept { return ledger_.all_held() && extra_refs_ == 0; }

  // Drops one of extra_refs_ (taken for work done outside the lock, or the pool object's own) and
  // deletes the state if that was its last reference. The caller must not touch *this afterwards.
  void release_extra_ref() noexcept {
    bool last = false;
    {
      std::lock_guard<detail::biased_lock> guard(lock_);
      --extra_refs_;
      last = no_refs_locked();
    }
    if (last) delete this;
  }

  // Held bytes above the trim policy's budget (trim_budget.h), or 0.
  std::uint64_t trim_excess_locked() const noexcept {
    return trim_.excess(ledger_.held_bytes(), ledger_.active_bytes());
  }

  // The counters are read only when an observer listens (event_hooks.h), so this costs a pointer
  // test on the hit path. Inline always: left to itself g++ calls it there, pointer test and all.
  [[gnu::always_inline]] void notify_locked(pool_event_kind kind, std::uint64_t id,
                                            std::uint64_t bytes,
                                            std::uint64_t rounded) const noexcept {
    hooks_.notify(kind, id, bytes, rounded, ledger_);
  }

  // A block just taken from the held lists becomes a live allocation. Caller holds lock_.
  [[gnu::always_inline]] allocation activate_hit_locked(const handle_type& handle,
                                                        std::uint64_t size, std::uint64_t rounded,
                                                        bin_id bin) noexcept {
    return activate_locked(handle, size, rounded, bin, pool_event_kind::hit,
                           ledger_.hit(size, rounded));  // hits are ids less misses (pool_ledger.h)
  }

  // Announces a block that has just become live allocation `id`. Caller holds lock_ and has
  // entered it in the ledger (hit or miss).
  [[gnu::always_inline]] allocation activate_locked(const handle_type& handle, std::uint64_t size,
                                                    std::uint64_t rounded, bin_id bin,
                                                    pool_event_kind kind,
                                                    std::uint64_t id) noexcept {
    notify_locked(kind, id, size, rounded);
    CLPOOL_EXPENSIVE_ASSERT(state_is_valid_locked());
    return allocation(this, handle, size, rounded, bin, id);
  }

  // The miss path and out-of-memory handling, defined in pool_state_miss.h.
  std::optional<allocation> attempt(std::uint64_t size, bin_id bin, std::uint64_t rounded,
                                    failure& why);
  [[gnu::noinline]] allocation allocate_slow(std::uint64_t size, bin_id bin, std::uint64_t rounded);
  std::uint64_t block_bytes(std::uint64_t size, bin_id bin, std::uint64_t rounded) const noexcept;
  std::optional<allocation> allocate_with_retries(std::uint64_t size, bin_id bin,
                                                  std::uint64_t rounded, failure& why);
  void record_out_of_memory(std::uint64_t size, std::uint64_t rounded, failure& why,
                            oom_report* report);
  bool call_allocator(std::uint64_t rounded, handle_type& handle, allocator_refusal& refusal);

  // Frees held blocks, largest first, until at least `target` bytes are freed or none are held.
  // Allocator calls happen outside lock_, a batch at a time. Returns the bytes freed.
  std::uint64_t free_largest_held(std::uint64_t target, bool is_trim) noexcept {
    std::uint64_t freed = 0;
    std::array<freed_block, 64> batch;
    while (freed < target) {
      std::size_t n = 0;
      {
        std::lock_guard<detail::biased_lock> guard(lock_);
        while (n < batch.size() && freed < target) {
          const std::optional<bin_id> bin = held_.largest_nonempty_bin();
          if (!bin) break;
          const std::uint64_t bytes = alloc_size(*bin, leading_bits_);
          held_.try_pop(*bin, batch[n].handle);
          batch[n].bytes = bytes;
          ++n;
          ledger_.free_held(bytes, is_trim);
          freed += bytes;
          notify_locked(pool_event_kind::allocator_free, 0, bytes, bytes);
          if (is_trim) notify_locked(pool_event_kind::trim, 0, bytes, bytes);
        }
        CLPOOL_EXPENSIVE_ASSERT(state_is_valid_locked());
      }
      if (n == 0) break;
      for (std::size_t i = 0; i < n; ++i) deallocate_block(batch[i].handle, batch[i].bytes);
    }
    return freed;
  }

  void deallocate_block(const handle_type& handle, std::uint64_t bytes) noexcept {
    std::lock_guard<std::mutex> allocator_guard(allocator_mutex_);
    allocator_.deallocate(handle, bytes);
  }

  bool state_is_valid_locked() const {
    // One walk of the bins in use, however many blocks they hold.
    const auto census = held_.take_census();
    return census.valid && ledger_.is_consistent(census.blocks, census.bytes, holding_);
  }

  mutable detail::biased_lock lock_;
  std::mutex allocator_mutex_;
  A allocator_;
  const unsigned leading_bits_;
  held_blocks<handle_type> held_;

  // A member, not a base or a pointer: its inline methods compile into the hit and release paths
  // as the plain adds they are, at fixed offsets from `this`.
  pool_ledger ledger_;
  trim_budget trim_;
  bool holding_ = true;
  // holding_ && no observer: a release needs only bookkeeping, a push and the trim check.
  bool plain_release_ = true;
  const bin_id unpooled_bin_;  // the bin straddling the allocator's largest block (block_bytes)

  // References beyond the live allocations (counted by ledger_.active_blocks()): the pool
  // object's, and one per release that works outside the lock. The last one out deletes the state.
  std::uint64_t extra_refs_ = 1;
  event_hooks hooks_;
  reclaim_registry reclaim_;
};

}  // namespace clpool::internal

// The miss path's definitions: a header of their own, included here because they are members of
// this class template (every user of pool_state needs them).
#include "pool/internal/pool_state_miss.h"  // IWYU pragma: export

#endif  // CLPOOL_POOL_INTERNAL_POOL_STATE_H_
