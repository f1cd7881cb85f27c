// The pool's counters and cumulative statistics (memory_pool::counters(), statistics()) and the
// limit they are checked against: the arithmetic alone, apart from the pool's locking, bins and
// allocator calls. pool_state keeps one under its lock and tells it what happened to a block; the
// ledger keeps the totals consistent, so that the rules (what a hit, a miss, a release or a free
// changes; what counts against the limit) live in one place and can be tested without a pool.
//
// Every method is inline and trivial on purpose: the hit and release paths call them with the
// pool's lock held and must compile to the same few adds and subtracts as before (no call).
#ifndef CLPOOL_POOL_INTERNAL_POOL_LEDGER_H_
#define CLPOOL_POOL_INTERNAL_POOL_LEDGER_H_

#include <cstdint>

#include "pool/pool_types.h"

namespace clpool::internal {

class pool_ledger {
 public:
  explicit pool_ledger(std::uint64_t limit = unlimited) noexcept : limit_(limit) {}

  // --- What happened to a block (the caller holds the pool's lock) ---

  // A held block of `rounded` bytes serves a request of `size`. Returns the allocation's id.
  [[gnu::always_inline]] std::uint64_t hit(std::uint64_t size, std::uint64_t rounded) noexcept {
    --held_blocks_;
    held_bytes_ -= rounded;
    return activate(size);
  }

  // A new block from the allocator serves a request of `size`. Returns the allocation's id.
  std::uint64_t miss(std::uint64_t size, std::uint64_t rounded) noexcept {
    ++stats_.misses;
    ++blocks_;
    block_bytes_ += rounded;
    // Managed bytes grow only on a miss. Counted once the block exists, so a request that fails
    // never shows in the peak.
    const std::uint64_t managed = managed_bytes();
    if (managed > stats_.peak_managed_bytes) stats_.peak_managed_bytes = managed;
    return activate(size);
  }

  // A live allocation of `size` ends; its block is kept (then hold()) or freed (then drop()).
  // Two steps because the pool learns only afterwards whether a free list could take the block.
  [[gnu::always_inline]] void end_active(std::uint64_t size) noexcept { active_bytes_ -= size; }

  // The block of an ended allocation joins the held blocks. The totals (blocks, block bytes) stay.
  [[gnu::always_inline]] void hold(std::uint64_t rounded) noexcept {
    ++held_blocks_;
    held_bytes_ += rounded;
  }

  // The block of an ended allocation goes back to the allocator.
  void drop(std::uint64_t rounded) noexcept {
    --blocks_;
    block_bytes_ -= rounded;
    ++stats_.allocator_frees;
  }

  // A held block goes back to the allocator, by the trim policy or trim() when `is_trim`.
  void free_held(std::uint64_t rounded, bool is_trim) noexcept {
    --held_blocks_;
    held_bytes_ -= rounded;
    --blocks_;
    block_bytes_ -= rounded;
    ++stats_.allocator_frees;
    if (is_trim) {
      ++stats_.blocks_trimmed;
      stats_.bytes_trimmed += rounded;
    }
  }

  // A block of `rounded` bytes is being allocated outside the lock: it counts against the limit
  // until unreserve(), so that two misses at once cannot both pass the limit check.
  void reserve(std::uint64_t rounded) noexcept { reserved_bytes_ += rounded; }
  void unreserve(std::uint64_t rounded) noexcept { reserved_bytes_ -= rounded; }

  // --- Events that change only the statistics ---
  void count_allocator_allocation() noexcept { ++stats_.allocator_allocations; }
  void count_allocator_failure() noexcept { ++stats_.allocator_failures; }
  void count_reclaim_call() noexcept { ++stats_.reclaim_calls; }
  void count_oom_retry() noexcept { ++stats_.oom_retries; }
  void count_oom_raised() noexcept { ++stats_.ooms_raised; }

  // --- The limit ---
  std::uint64_t limit() const noexcept { return limit_; }
  // Precondition: limit >= in_use_bytes() (set_limit refuses less before calling this).
  void set_limit(std::uint64_t limit) noexcept { limit_ = limit; }
  // Bytes a new block may still take under the limit. The 64-bit range acts as the limit when
  // there is none. 0 when managed bytes exceed a limit just lowered, until held blocks are freed.
  std::uint64_t room() const noexcept {
    const std::uint64_t managed = managed_bytes();
    return managed < limit_ ? limit_ - managed : 0;
  }

  // --- Figures ---
  std::uint64_t held_blocks() const noexcept { return held_blocks_; }
  std::uint64_t held_bytes() const noexcept { return held_bytes_; }
  std::uint64_t active_bytes() const noexcept { return active_bytes_; }
  // Live blocks and their rounded bytes: all blocks minus the held ones. Derived, so that a hit or
  // a release (which only moves a block between active and held) updates two counters fewer.
  std::uint64_t active_blocks() const noexcept { return blocks_ - held_blocks_; }
  std::uint64_t active_rounded_bytes() const noexcept { return block_bytes_ - held_bytes_; }
  // What no limit may go below: live blocks and blocks being allocated.
  std::uint64_t in_use_bytes() const noexcept { return active_rounded_bytes() + reserved_bytes_; }
  std::uint64_t managed_bytes() const noexcept { return block_bytes_ + reserved_bytes_; }
  // True when every block is held: with no other reference, the pool state can go.
  bool all_held() const noexcept { return blocks_ == held_blocks_; }

  // Inline always: read in place on every observed event (event_hooks.h).
  [[gnu::always_inline]] pool_counters counters() const noexcept {
    return pool_counters{held_blocks_,           active_blocks(), held_bytes_, active_bytes_,
                         active_rounded_bytes(), managed_bytes(), limit_};
  }

  pool_statistics statistics() const noexcept {
    pool_statistics out = stats_;
    // Every successful allocation is a hit or a miss and takes the next id, so the hit path need
    // not count hits.
    out.hits = next_allocation_id_ - stats_.misses;
    return out;
  }

  // The counters agree with each other and with a census of the held lists (`census_blocks`,
  // `census_bytes`); nothing is held unless `holding`.
  bool is_consistent(std::uint64_t census_blocks, std::uint64_t census_bytes,
                     bool holding) const noexcept {
    return census_blocks == held_blocks_ && census_bytes == held_bytes_ &&
           blocks_ >= held_blocks_ && block_bytes_ >= held_bytes_ &&
           active_rounded_bytes() >= active_bytes_ &&
           (active_blocks() != 0 || (active_bytes_ == 0 && active_rounded_bytes() == 0)) &&
           managed_bytes() <= limit_ && (holding || held_blocks_ == 0);
  }

 private:
  [[gnu::always_inline]] std::uint64_t activate(std::uint64_t size) noexcept {
    active_bytes_ += size;
    if (active_bytes_ > stats_.peak_active_bytes) stats_.peak_active_bytes = active_bytes_;
    return ++next_allocation_id_;
  }

  // The counters a hit or a release updates (held_blocks_, held_bytes_, active_bytes_) are never
  // adjacent on purpose: side by side, g++ updates two of them as one SSE vector, which takes
  // five or more instructions where two suffice (callgrind: +4 to +6 per allocate/release pair).
  std::uint64_t held_blocks_ = 0;
  std::uint64_t blocks_ = 0;  // every block the pool manages: active and held
  std::uint64_t held_bytes_ = 0;
  std::uint64_t block_bytes_ = 0;     // their rounded bytes
  std::uint64_t active_bytes_ = 0;    // requested bytes of the active blocks
  std::uint64_t reserved_bytes_ = 0;  // blocks being allocated right now, outside the lock
  std::uint64_t limit_ = unlimited;
  std::uint64_t next_allocation_id_ = 0;
  pool_statistics stats_;
};

}  // namespace clpool::internal

#endif  // CLPOOL_POOL_INTERNAL_POOL_LEDGER_H_
