// The parts pool_state is built from, tested alone: the trim budget's fast proof never claims
// "within" when the exact budget is exceeded, the retry ladder's schedule, the reclaim registry,
// the ledger's counters and statistics, and the observer hook (which must not compute counters
// when nobody listens).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "pool/internal/event_hooks.h"
#include "pool/internal/oom_ladder.h"
#include "pool/internal/pool_ledger.h"
#include "pool/internal/reclaim_registry.h"
#include "pool/internal/trim_budget.h"

namespace clpool::internal {
namespace {

TEST(TrimBudget, NoPolicyNoExcess) {
  const trim_budget none;
  EXPECT_FALSE(none.enabled());
  EXPECT_EQ(none.excess(std::uint64_t{1} << 40, 0), 0u);
  EXPECT_TRUE(none.within_fast(std::uint64_t{1} << 40, 0));
}

TEST(TrimBudget, CapAndRatio) {
  const trim_budget cap(trim_policy{.max_held_bytes = 1000, .max_held_to_active_ratio = -1});
  EXPECT_EQ(cap.excess(1500, 0), 500u);
  EXPECT_EQ(cap.excess(1000, 0), 0u);
  const trim_budget ratio(
      trim_policy{.max_held_bytes = unlimited, .max_held_to_active_ratio = 0.25});
  EXPECT_EQ(ratio.budget(4000), 1000u);
  EXPECT_EQ(ratio.excess(1200, 4000), 200u);
  EXPECT_EQ(ratio.excess(1000, 4000), 0u);
  const trim_budget both(trim_policy{.max_held_bytes = 500, .max_held_to_active_ratio = 0.25});
  EXPECT_EQ(both.budget(4000), 500u) << "the smaller bound";
}

TEST(TrimBudget, RefusesANonFiniteRatio) {
  EXPECT_THROW(
      trim_budget::validate({.max_held_bytes = unlimited,
                             .max_held_to_active_ratio = std::numeric_limits<double>::quiet_NaN()}),
      argument_error);
  EXPECT_THROW(
      trim_budget::validate({.max_held_bytes = unlimited,
                             .max_held_to_active_ratio = std::numeric_limits<double>::infinity()}),
      argument_error);
  EXPECT_NO_THROW(
      trim_budget::validate({.max_held_bytes = unlimited, .max_held_to_active_ratio = -3}));
}

// The fast proof is sound: whenever it says "within", the exact budget agrees.
RC_GTEST_PROP(TrimBudget, FastProofIsSound,
              (std::uint64_t held, std::uint64_t active, std::uint64_t cap)) {
  const double ratio = *rc::gen::element(0.0, 0.001, 0.25, 0.5, 1.0, 1.5, 3.0, 1e6, 1e12);
  const trim_budget b(trim_policy{.max_held_bytes = cap, .max_held_to_active_ratio = ratio});
  if (b.within_fast(held, active)) RC_ASSERT(held <= b.budget(active));
  RC_ASSERT((b.excess(held, active) == 0) == (held <= b.budget(active)));
}

TEST(OomLadder, FreeTheShortfallThenEverythingThenEachCallbackFollowedByEverything) {
  EXPECT_EQ(oom_ladder_step(0).kind, oom_step::free_shortfall);
  EXPECT_EQ(oom_ladder_step(1).kind, oom_step::free_all);
  for (unsigned k = 0; k < 5; ++k) {
    EXPECT_EQ(oom_ladder_step(2 * k + 2).kind, oom_step::reclaim);
    EXPECT_EQ(oom_ladder_step(2 * k + 2).callback, k);
    EXPECT_EQ(oom_ladder_step(2 * k + 3).kind, oom_step::free_all);
  }
}

TEST(ReclaimRegistry, OrderIdsAndRemoval) {
  reclaim_registry r;
  std::vector<int> calls;
  const auto a = r.add(reclaim_registry::wrap([&](std::uint64_t) { calls.push_back(1); }));
  const auto b = r.add(reclaim_registry::wrap([&](std::uint64_t) { calls.push_back(2); }));
  const auto c = r.add(reclaim_registry::wrap([&](std::uint64_t) { calls.push_back(3); }));
  EXPECT_NE(a, b);
  EXPECT_TRUE(r.remove(b));
  EXPECT_FALSE(r.remove(b)) << "already removed";
  std::vector<reclaim_registry::shared_callback> copy;
  r.copy_to(copy);
  for (const auto& f : copy) (*f)(0);
  EXPECT_EQ(calls, (std::vector<int>{1, 3})) << "registration order, without the removed one";
  EXPECT_TRUE(r.remove(c));
  EXPECT_THROW(reclaim_registry::wrap(reclaim_callback{}), argument_error);
}

TEST(PoolLedger, MissHitReleaseAndFreeKeepTheCountersConsistent) {
  pool_ledger l;
  EXPECT_TRUE(l.is_consistent(0, 0, /*holding=*/true));
  EXPECT_EQ(l.miss(100, 128), 1u) << "ids start at 1";
  EXPECT_EQ(l.miss(30, 32), 2u);
  pool_counters c = l.counters();
  EXPECT_EQ(c.active_blocks, 2u);
  EXPECT_EQ(c.active_bytes, 130u);
  EXPECT_EQ(c.active_rounded_bytes, 160u);
  EXPECT_EQ(c.managed_bytes, 160u);
  EXPECT_EQ(c.held_blocks, 0u);
  l.end_active(100);
  l.hold(128);
  EXPECT_TRUE(l.is_consistent(1, 128, true));
  EXPECT_FALSE(l.is_consistent(1, 128, /*holding=*/false)) << "held blocks while not holding";
  EXPECT_FALSE(l.is_consistent(0, 128, true)) << "census disagrees";
  EXPECT_FALSE(l.all_held());
  EXPECT_EQ(l.hit(90, 128), 3u);
  c = l.counters();
  EXPECT_EQ(c.held_blocks, 0u);
  EXPECT_EQ(c.active_bytes, 120u);
  EXPECT_EQ(c.managed_bytes, 160u) << "a hit moves a block, it makes none";
  l.end_active(30);
  l.drop(32);  // the block goes back to the allocator
  l.end_active(90);
  l.hold(128);
  l.free_held(128, /*is_trim=*/true);
  EXPECT_TRUE(l.all_held());
  EXPECT_TRUE(l.is_consistent(0, 0, true));
  c = l.counters();
  EXPECT_EQ(c.managed_bytes, 0u);
  EXPECT_EQ(c.active_bytes, 0u);
  const pool_statistics s = l.statistics();
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.hits, 1u) << "ids taken less misses";
  EXPECT_EQ(s.peak_active_bytes, 130u);
  EXPECT_EQ(s.peak_managed_bytes, 160u);
  EXPECT_EQ(s.allocator_frees, 2u) << "one dropped, one freed from held";
  EXPECT_EQ(s.blocks_trimmed, 1u);
  EXPECT_EQ(s.bytes_trimmed, 128u);
}

TEST(PoolLedger, LimitRoomAndReservations) {
  pool_ledger l(1000);
  EXPECT_EQ(l.room(), 1000u);
  l.reserve(256);
  EXPECT_EQ(l.room(), 744u) << "a block being allocated counts against the limit";
  EXPECT_EQ(l.in_use_bytes(), 256u);
  EXPECT_EQ(l.statistics().peak_managed_bytes, 0u) << "a reservation is not yet a block";
  l.unreserve(256);
  l.miss(600, 768);
  EXPECT_EQ(l.room(), 232u);
  l.end_active(600);
  l.hold(768);
  EXPECT_EQ(l.in_use_bytes(), 0u) << "held bytes may be freed, so a limit may go below them";
  l.set_limit(500);
  EXPECT_EQ(l.room(), 0u) << "managed above a lowered limit: no room, not a wrapped-around one";
  EXPECT_FALSE(l.is_consistent(1, 768, true)) << "managed above the limit until held is freed";
  l.free_held(768, /*is_trim=*/false);
  EXPECT_EQ(l.room(), 500u);
  EXPECT_EQ(l.statistics().blocks_trimmed, 0u);
  EXPECT_EQ(pool_ledger().room(), unlimited) << "no limit: the 64-bit range";
}

TEST(PoolLedger, StatisticsCounters) {
  pool_ledger l;
  l.count_allocator_allocation();
  l.count_allocator_failure();
  l.count_allocator_failure();
  l.count_reclaim_call();
  l.count_oom_retry();
  l.count_oom_raised();
  const pool_statistics s = l.statistics();
  EXPECT_EQ(s.allocator_allocations, 1u);
  EXPECT_EQ(s.allocator_failures, 2u);
  EXPECT_EQ(s.reclaim_calls, 1u);
  EXPECT_EQ(s.oom_retries, 1u);
  EXPECT_EQ(s.ooms_raised, 1u);
  EXPECT_EQ(s.hits + s.misses, 0u);
}

// Any sequence of misses, hits, releases and frees leaves the counters consistent with a
// census kept beside them, and hits + misses equal to the ids handed out.
RC_GTEST_PROP(PoolLedger, RandomSequencesStayConsistent, ()) {
  pool_ledger l;
  std::vector<std::uint64_t> held, active_rounded, active_size;
  std::uint64_t held_bytes = 0, ids = 0;
  const auto steps = *rc::gen::inRange(0, 200);
  for (int i = 0; i < steps; ++i) {
    const int op = *rc::gen::inRange(0, 4);
    if (op == 0 || (op == 1 && held.empty())) {
      const std::uint64_t rounded = *rc::gen::inRange<std::uint64_t>(1, 1 << 20);
      const std::uint64_t size = *rc::gen::inRange<std::uint64_t>(1, rounded + 1);
      RC_ASSERT(l.miss(size, rounded) == ++ids);
      active_rounded.push_back(rounded);
      active_size.push_back(size);
    } else if (op == 1) {
      const std::uint64_t rounded = held.back();
      held.pop_back();
      held_bytes -= rounded;
      RC_ASSERT(l.hit(rounded, rounded) == ++ids);
      active_rounded.push_back(rounded);
      active_size.push_back(rounded);
    } else if (op == 2 && !active_rounded.empty()) {
      l.end_active(active_size.back());
      l.hold(active_rounded.back());
      held.push_back(active_rounded.back());
      held_bytes += active_rounded.back();
      active_rounded.pop_back();
      active_size.pop_back();
    } else if (op == 3 && !held.empty()) {
      l.free_held(held.back(), *rc::gen::arbitrary<bool>());
      held_bytes -= held.back();
      held.pop_back();
    }
    RC_ASSERT(l.is_consistent(held.size(), held_bytes, true));
    RC_ASSERT(l.counters().active_blocks == active_rounded.size());
  }
  const pool_statistics s = l.statistics();
  RC_ASSERT(s.hits + s.misses == ids);
}

struct recording_observer final : pool_observer {
  std::vector<pool_event> events;
  void on_event(const pool_event& event) noexcept override { events.push_back(event); }
};

// Stands in for the pool's ledger: counts how often the counters are read.
struct counting_source {
  mutable int reads = 0;
  pool_counters value;
  pool_counters counters() const noexcept {
    ++reads;
    return value;
  }
};

TEST(EventHooks, NoObserverComputesNoCounters) {
  event_hooks hooks;
  EXPECT_FALSE(hooks.active());
  counting_source source;
  hooks.notify(pool_event_kind::hit, 1, 8, 8, source);
  EXPECT_EQ(source.reads, 0) << "the hit path must not pay for counters nobody reads";
}

TEST(EventHooks, DeliversEventsAndHandsThePreviousObserverBack) {
  event_hooks hooks;
  auto first = std::make_shared<recording_observer>();
  std::shared_ptr<pool_observer> in = first;
  hooks.swap(in);
  EXPECT_EQ(in, nullptr) << "there was no previous observer";
  EXPECT_TRUE(hooks.active());
  counting_source source;
  source.value.active_bytes = 100;
  hooks.notify(pool_event_kind::miss, 7, 100, 128, source);
  EXPECT_EQ(source.reads, 1);
  ASSERT_EQ(first->events.size(), 1u);
  EXPECT_EQ(first->events[0].kind, pool_event_kind::miss);
  EXPECT_EQ(first->events[0].allocation_id, 7u);
  EXPECT_EQ(first->events[0].bytes, 100u);
  EXPECT_EQ(first->events[0].rounded_bytes, 128u);
  EXPECT_EQ(first->events[0].counters.active_bytes, 100u);
  std::shared_ptr<pool_observer> none;
  hooks.swap(none);
  EXPECT_EQ(none, first) << "the caller gets the old observer, to destroy outside its lock";
  EXPECT_FALSE(hooks.active());
  hooks.notify(pool_event_kind::release, 7, 100, 128, source);
  EXPECT_EQ(first->events.size(), 1u) << "a removed observer hears nothing";
  EXPECT_EQ(source.reads, 1);
}

}  // namespace
}  // namespace clpool::internal
