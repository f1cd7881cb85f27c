// pool_state's miss path: what the pool does when no held block serves a request. One attempt
// (a held block, else a new one within the limit, the allocator called outside the pool's lock),
// the retry ladder's steps after a failed one (oom_ladder.h), and the out-of-memory report when
// they run out. Apart from pool_state.h because it is the other half of the pool's work (the hit
// and release paths stay there, where their inlining is plain to see); none of it is on the hit
// path. Included only from pool_state.h, at its end.
#ifndef CLPOOL_POOL_INTERNAL_POOL_STATE_MISS_H_
#define CLPOOL_POOL_INTERNAL_POOL_STATE_MISS_H_

#include "pool/internal/pool_state.h"

namespace clpool::internal {

// The bytes of the block a miss makes: its bin's size, except in the one bin that would round a
// request the allocator allows (up to its largest block) above it (bins.h straddling_bin): there
// the request's own size, an "unpooled" block, freed at its release and never held
// (give_back_slow_locked). So no hit ever finds a block smaller than its bin's size, and the
// bin's list never gets the capacity try_push_no_alloc needs: both hot paths are unchanged. The
// bins above hold only larger requests, pooled as ever: a device that enforces the limit refuses
// them as it would a plain buffer, one that does not (NVIDIA's driver) makes them.
template <block_allocator A>
inline std::uint64_t pool_state<A>::block_bytes(std::uint64_t size, bin_id bin,
                                                std::uint64_t rounded) const noexcept {
  return bin == unpooled_bin_ ? size : rounded;
}

// One attempt: a held block of the bin, else a new block within the limit. Returns nothing and
// fills `why` when the limit or the allocator said no; other allocator errors propagate.
template <block_allocator A>
inline auto pool_state<A>::attempt(std::uint64_t size, bin_id bin, std::uint64_t rounded,
                                   failure& why) -> std::optional<allocation> {
  {
    std::lock_guard<detail::biased_lock> guard(lock_);
    handle_type handle;
    if (held_.try_pop(bin, handle)) return activate_hit_locked(handle, size, rounded, bin);
    const std::uint64_t in_use = ledger_.in_use_bytes();
    if (rounded > unlimited - in_use) {
      // Cannot fit even with nothing held: no retry can help.
      throw argument_error("allocate(" + std::to_string(size) + "): a block of " +
                           std::to_string(rounded) + " bytes on top of " + std::to_string(in_use) +
                           " bytes in live blocks overflows 64-bit accounting");
    }
    // Room under the limit (pool_ledger::room). Held bytes that stand in the way are freed
    // like any other shortfall, with no limit too: the 64-bit range acts as one.
    const std::uint64_t room = ledger_.room();
    if (rounded > room) {
      why = failure{oom_cause::limit, 0, {}, rounded - room};
      return std::nullopt;
    }
    ledger_.reserve(rounded);  // counts against the limit while the allocator works
  }
  handle_type handle;
  allocator_refusal refusal;
  bool made = false;
  try {
    std::lock_guard<std::mutex> allocator_guard(allocator_mutex_);
    made = call_allocator(rounded, handle, refusal);
  } catch (...) {
    std::lock_guard<detail::biased_lock> guard(lock_);
    ledger_.unreserve(rounded);
    throw;
  }
  std::lock_guard<detail::biased_lock> guard(lock_);
  ledger_.unreserve(rounded);
  if (!made) {
    ledger_.count_allocator_failure();
    notify_locked(pool_event_kind::allocator_failed, 0, rounded, rounded);
    const bool limited = refusal.limit_bytes != unlimited;
    why = failure{limited ? oom_cause::limit : oom_cause::allocator, refusal.status,
                  std::move(refusal.message), rounded, refusal.limit_bytes};
    return std::nullopt;
  }
  ledger_.count_allocator_allocation();
  notify_locked(pool_event_kind::allocator_allocate, 0, rounded, rounded);
  return activate_locked(handle, size, rounded, bin, pool_event_kind::miss,
                         ledger_.miss(size, rounded));
}

// The miss path with out-of-memory handling: after a failed attempt the pool takes the next
// step of the retry ladder (oom_ladder.h) and retries, and throws out_of_memory when the steps
// run out.
template <block_allocator A>
auto pool_state<A>::allocate_slow(std::uint64_t size, bin_id bin, std::uint64_t rounded)
    -> allocation {
  rounded = block_bytes(size, bin, rounded);
  failure why;
  if (auto got = allocate_with_retries(size, bin, rounded, why)) return std::move(*got);
  oom_report report;
  record_out_of_memory(size, rounded, why, &report);
  throw out_of_memory(std::move(report));
}

// allocate() reporting out-of-memory by value (pool_state.h).
template <block_allocator A>
auto pool_state<A>::try_allocate(std::uint64_t size, oom_report* report)
    -> std::optional<allocation> {
  if (size == 0) return allocation{};
  const auto [bin, bin_size, exponent] = locate(size, leading_bits_);
  const std::uint64_t rounded = block_bytes(size, bin, bin_size);
  failure why;
  if (auto got = allocate_with_retries(size, bin, rounded, why)) return got;
  record_out_of_memory(size, rounded, why, report);
  return std::nullopt;
}

// allocate_slow()'s attempts and retries; returns nothing, with the last refusal in `why`, when
// the steps run out.
template <block_allocator A>
inline auto pool_state<A>::allocate_with_retries(std::uint64_t size, bin_id bin,
                                                 std::uint64_t rounded, failure& why)
    -> std::optional<allocation> {
  std::vector<std::shared_ptr<const reclaim_callback>> callbacks;
  bool callbacks_loaded = false;
  unsigned step = 0;
  for (;;) {
    if (auto got = attempt(size, bin, rounded, why)) return got;
    // Take the next step that can change anything; steps with nothing to free are skipped.
    for (;; ++step) {
      const oom_step next = oom_ladder_step(step);
      if (next.kind == oom_step::free_shortfall) {
        if (free_largest_held(why.deficit, /*is_trim=*/false) != 0) break;
      } else if (next.kind == oom_step::free_all) {
        if (free_largest_held(unlimited, /*is_trim=*/false) != 0) break;
      } else {
        if (!callbacks_loaded) {
          std::lock_guard<detail::biased_lock> guard(lock_);
          reclaim_.copy_to(callbacks);
          callbacks_loaded = true;
        }
        const std::size_t index = next.callback;
        if (index >= callbacks.size()) return std::nullopt;
        {
          std::lock_guard<detail::biased_lock> guard(lock_);
          ledger_.count_reclaim_call();
          notify_locked(pool_event_kind::reclaim, 0, size, rounded);
        }
        (*callbacks[index])(rounded);
        break;
      }
    }
    ++step;
    std::lock_guard<detail::biased_lock> guard(lock_);
    ledger_.count_oom_retry();
    notify_locked(pool_event_kind::oom_retry, 0, size, rounded);
  }
}

// Counts and announces a request that failed for good, and fills *report (if given) with the
// figures as they are now.
template <block_allocator A>
inline void pool_state<A>::record_out_of_memory(std::uint64_t size, std::uint64_t rounded,
                                                failure& why, oom_report* report) {
  std::lock_guard<detail::biased_lock> guard(lock_);
  ledger_.count_oom_raised();
  notify_locked(pool_event_kind::out_of_memory, 0, size, rounded);
  if (report == nullptr) return;
  report->requested_bytes = size;
  report->rounded_bytes = rounded;
  report->active_bytes = ledger_.active_bytes();
  report->active_rounded_bytes = ledger_.active_rounded_bytes();
  report->held_bytes = ledger_.held_bytes();
  report->managed_bytes = ledger_.managed_bytes();
  report->limit_bytes = why.limit != unlimited ? why.limit : ledger_.limit();
  report->cause = why.cause;
  report->allocator_status = why.status;
  report->allocator_message = std::move(why.message);
}

// The allocator call of one attempt: true with a block in `handle`, false with `refusal` filled
// when the allocator has no room, by whichever of the two ways it says so (allocator.h).
// A try_allocate that throws allocator_out_of_memory after all (say, through a helper that
// throws) still means "no room": the pool retries rather than passing it on.
template <block_allocator A>
inline bool pool_state<A>::call_allocator(std::uint64_t rounded, handle_type& handle,
                                          allocator_refusal& refusal) {
  try {
    if constexpr (allocator_reports_oom_by_value<A>) {
      return allocator_.try_allocate(rounded, handle, refusal);
    } else {
      handle = allocator_.allocate(rounded);
      return true;
    }
  } catch (const allocator_out_of_memory& e) {
    refusal.status = e.status();
    refusal.message = e.what();
    return false;
  }
}

}  // namespace clpool::internal

#endif  // CLPOOL_POOL_INTERNAL_POOL_STATE_MISS_H_
