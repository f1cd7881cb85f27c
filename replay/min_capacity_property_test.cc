// find_min_capacity's arithmetic at the extremes: granules and needs anywhere in [1, 2^62].
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <vector>

#include "replay/min_capacity.h"

namespace clpool::replay {
namespace {

constexpr std::uint64_t top = std::uint64_t{1} << 62;

// Sizes in [lo, 2^62], half of them at or next to the edges where rounding goes wrong.
rc::Gen<std::uint64_t> size_in(std::uint64_t lo) {
  return rc::gen::oneOf(rc::gen::elementOf(std::vector<std::uint64_t>{
                            lo, lo + 1, top, top - 1, top / 2, top / 2 + 1, top / 3,
                            (top / 3) * 2 + 1, std::uint64_t{1} << 20}),
                        rc::gen::inRange<std::uint64_t>(lo, top + 1),
                        rc::gen::map(rc::gen::inRange(0, 63), [lo](int b) {
                          const std::uint64_t v = std::uint64_t{1} << b;
                          return v < lo ? lo : v > top ? top : v;
                        }));
}

std::uint64_t round_up(std::uint64_t n, std::uint64_t g) { return (n / g + (n % g != 0)) * g; }

// A trace that needs `need` bytes; its unbounded replay may report a smaller peak (as a pool's
// retry can make it), which makes the search double its upper bound.
RC_GTEST_PROP(MinCapacityProperty, ModelAnswerIsTheRoundedNeed, ()) {
  const std::uint64_t granule = *size_in(1).as("granule");
  const std::uint64_t need =
      *rc::gen::oneOf(rc::gen::just<std::uint64_t>(0), size_in(1)).as("need");
  const unsigned peak_shift = *rc::gen::inRange(0u, 4u).as("peak shift");
  std::uint64_t calls = 0;
  const auto run = [&](std::uint64_t cap) {
    ++calls;
    RC_ASSERT(cap % granule == 0);
    RC_ASSERT(cap <= unbounded_capacity(granule));
    replay_report r;
    if (cap < need) {
      r.oom = oom_point{};
    } else {
      r.peak_device_bytes = need >> peak_shift;
    }
    return r;
  };
  RC_ASSERT(unbounded_capacity(granule) >= top);
  RC_ASSERT(unbounded_capacity(granule) - top < granule);
  const min_capacity_result m = find_min_capacity(run, granule);
  RC_ASSERT(m.found);
  RC_ASSERT(m.capacity == round_up(need, granule));
  RC_ASSERT(m.replays == calls);
  RC_ASSERT(m.replays < 200u);
  if (m.capacity > 0) {
    RC_ASSERT(m.one_granule_below.has_value());
    RC_ASSERT(!m.one_granule_below->ok());
  }
}

// The real engine on the simulated device: one allocation of any size up to 2^62, no pool.
RC_GTEST_PROP(MinCapacityProperty, OneAllocationOnTheSimulatedDevice, ()) {
  const std::uint64_t granule = *size_in(1).as("granule");
  std::vector<trace::trace_event> events(1);
  events[0].size = *size_in(1).as("size");
  events[0].id = 1;
  const auto run = [&](std::uint64_t cap) {
    return replay_events(events, parse_config("nopool"), {cap, alloc_semantics::immediate});
  };
  const min_capacity_result m = find_min_capacity(run, granule);
  RC_ASSERT(m.found);
  RC_ASSERT(m.capacity == round_up(events[0].size, granule));
}

TEST(MinCapacityProperty, GranulesAbove2To62AreRefused) {
  for (std::uint64_t g : {top + 1, (std::uint64_t{16777215} << 40), ~std::uint64_t{0}}) {
    EXPECT_THROW(find_min_capacity([](std::uint64_t) { return replay_report{}; }, g), config_error);
    try {
      check_granule(g, "--granule");
      ADD_FAILURE() << g << " accepted";
    } catch (const config_error& e) {
      EXPECT_NE(std::string(e.what()).find("--granule: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("above 2^62"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(check_granule(top));
}

}  // namespace
}  // namespace clpool::replay
