// The parts pool_state is built from, tested alone: the trim budget's fast proof never claims
// "within" when the exact budget is exceeded, and the retry ladder's schedule.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "pool/oom_ladder.h"
#include "pool/reclaim_registry.h"
#include "pool/trim_budget.h"

namespace clpool::detail {
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
  const trim_budget ratio(trim_policy{.max_held_bytes = unlimited, .max_held_to_active_ratio = 0.25});
  EXPECT_EQ(ratio.budget(4000), 1000u);
  EXPECT_EQ(ratio.excess(1200, 4000), 200u);
  EXPECT_EQ(ratio.excess(1000, 4000), 0u);
  const trim_budget both(trim_policy{.max_held_bytes = 500, .max_held_to_active_ratio = 0.25});
  EXPECT_EQ(both.budget(4000), 500u) << "the smaller bound";
}

TEST(TrimBudget, RefusesANonFiniteRatio) {
  EXPECT_THROW(trim_budget::validate({.max_held_bytes = unlimited,
                                      .max_held_to_active_ratio = std::numeric_limits<double>::quiet_NaN()}),
               argument_error);
  EXPECT_THROW(trim_budget::validate({.max_held_bytes = unlimited,
                                      .max_held_to_active_ratio = std::numeric_limits<double>::infinity()}),
               argument_error);
  EXPECT_NO_THROW(trim_budget::validate({.max_held_bytes = unlimited, .max_held_to_active_ratio = -3}));
}

// The fast proof is sound: whenever it says "within", the exact budget agrees.
RC_GTEST_PROP(TrimBudget, FastProofIsSound, (std::uint64_t held, std::uint64_t active, std::uint64_t cap)) {
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

}  // namespace
}  // namespace clpool::detail
