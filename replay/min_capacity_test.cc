#include "replay/min_capacity.h"

#include <random>

#include <gtest/gtest.h>

namespace clpool::replay {
namespace {

using trace::trace_action;
using trace::trace_event;

std::vector<trace_event> workload(unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<trace_event> events;
  std::vector<std::uint64_t> live;
  std::uint64_t id = 1;
  for (std::uint64_t i = 0; i < 4000; ++i) {
    trace_event e;
    e.seq = i;
    if (live.empty() || rng() % 100 < 55) {
      e.action = trace_action::alloc;
      e.id = id;
      e.size = rng() % (3 << 20) + 1;
      live.push_back(id++);
    } else {
      e.action = trace_action::free;
      const std::size_t k = rng() % live.size();
      e.id = live[k];
      live[k] = live.back();
      live.pop_back();
    }
    events.push_back(e);
  }
  return events;
}

TEST(MinCapacity, BisectionReplaysIsTheWorstCase) {
  EXPECT_EQ(bisection_replays(0), 0u);
  EXPECT_EQ(bisection_replays(1), 1u);
  EXPECT_EQ(bisection_replays(2), 2u);
  EXPECT_EQ(bisection_replays(3), 2u);
  EXPECT_EQ(bisection_replays(4), 3u);
  EXPECT_EQ(bisection_replays(1023), 10u);
  EXPECT_EQ(bisection_replays(1024), 11u);
}

// The estimate of replays left, given before each replay: unknown (0) before the first, then,
// once the upper bound held at the first try, never below the replays actually left.
TEST(MinCapacity, ReplaysLeftEstimateBoundsWhatIsLeft) {
  for (unsigned seed = 1; seed <= 3; ++seed) {
    const auto events = workload(seed);
    for (const std::uint64_t granule :
         {std::uint64_t{1} << 20, std::uint64_t{4096}, std::uint64_t{1}}) {
      std::vector<std::uint64_t> estimates;
      const min_capacity_result m = find_min_capacity(
          [&](std::uint64_t capacity) {
            return replay_events(events, parse_config("nopool"),
                                 {capacity, alloc_semantics::immediate});
          },
          granule, 0, [&](std::uint64_t left) { estimates.push_back(left); });
      ASSERT_TRUE(m.found);
      ASSERT_EQ(estimates.size(), m.replays);
      EXPECT_EQ(estimates[0], 0u) << "nothing is known before the unbounded replay";
      for (std::size_t i = 1; i < estimates.size(); ++i) {
        EXPECT_GE(estimates[i], m.replays - i) << "replay " << i << ", granule " << granule;
        EXPECT_LE(estimates[i], m.replays - i + 2) << "replay " << i << ", granule " << granule;
      }
    }
  }
}

TEST(MinCapacity, ExactToTheGranule) {
  for (unsigned seed = 1; seed <= 3; ++seed) {
    const auto events = workload(seed);
    for (const char* config : {"pool:lb=4", "pool:lb=0", "nopool", "pool:lb=2,trim-ratio=0.5"}) {
      for (auto sem : {alloc_semantics::immediate, alloc_semantics::deferred}) {
        const replay_config c = parse_config(config);
        const std::uint64_t granule = 1 << 20;
        const auto run = [&](std::uint64_t capacity) {
          return replay_events(events, c, {capacity, sem});
        };
        const min_capacity_result m = find_min_capacity(run, granule);
        ASSERT_TRUE(m.found) << config;
        EXPECT_EQ(m.capacity % granule, 0u);
        EXPECT_TRUE(run(m.capacity).ok()) << config << " at " << m.capacity;
        ASSERT_GT(m.capacity, 0u);
        EXPECT_FALSE(run(m.capacity - granule).ok()) << config << " at " << m.capacity - granule;
        ASSERT_TRUE(m.one_granule_below);
        EXPECT_FALSE(m.one_granule_below->ok());
        EXPECT_LT(m.replays, 40u);
      }
    }
  }
}

TEST(MinCapacity, SmallGranule) {
  const auto events = workload(9);
  const auto run = [&](std::uint64_t capacity) {
    return replay_events(events, parse_config("pool:lb=4"), {capacity, alloc_semantics::immediate});
  };
  const min_capacity_result m = find_min_capacity(run, 1);
  ASSERT_TRUE(m.found);
  EXPECT_TRUE(run(m.capacity).ok());
  EXPECT_FALSE(run(m.capacity - 1).ok());
}

TEST(MinCapacity, EmptyTraceNeedsNothing) {
  const auto run = [&](std::uint64_t capacity) {
    return replay_events({}, parse_config("pool"), {capacity, alloc_semantics::immediate});
  };
  const min_capacity_result m = find_min_capacity(run, 1 << 20);
  ASSERT_TRUE(m.found);
  EXPECT_EQ(m.capacity, 0u);
}

TEST(MinCapacity, LimitMakesItImpossible) {
  std::vector<trace_event> events(1);
  events[0].size = 2 << 20;
  const auto run = [&](std::uint64_t capacity) {
    return replay_events(events, parse_config("pool:limit=1MiB"),
                         {capacity, alloc_semantics::immediate});
  };
  const min_capacity_result m = find_min_capacity(run, 1 << 20);
  EXPECT_FALSE(m.found);
  EXPECT_NE(m.why_not.find("unbounded"), std::string::npos) << m.why_not;
}

TEST(MinCapacity, ZeroGranuleIsRejected) {
  EXPECT_THROW(find_min_capacity([](std::uint64_t) { return replay_report{}; }, 0), config_error);
}

}  // namespace
}  // namespace clpool::replay
