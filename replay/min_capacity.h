// find_min_capacity: the smallest device capacity, in whole granules, at which a trace replays
// with no out-of-memory.
//
// Bisection over k in [0, K] for capacity = k * granule. K comes from a replay on an unbounded
// device (its peak device bytes, rounded up; doubled while it still fails). The answer is exact in
// the sense the tests check: the replay at the result was run and succeeded, and the replay one
// granule below was run and failed. (Success need not be monotone in capacity for every pool
// configuration; bisection still returns such an adjacent pair.)
#ifndef CLPOOL_REPLAY_MIN_CAPACITY_H_
#define CLPOOL_REPLAY_MIN_CAPACITY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "replay/replay.h"

namespace clpool::replay {

// The largest granule: 2^62, the largest size a trace may name. A larger granule would make every
// candidate capacity above anything a trace can ask for, so the search would say nothing.
inline constexpr std::uint64_t max_granule = trace::max_event_size;

// Throws config_error naming `what` unless 0 < granule <= max_granule.
void check_granule(std::uint64_t granule, const std::string& what = "granule");

// The capacity used for "unbounded": 2^62, the largest size a trace may name, rounded UP to a
// whole number of granules (so that a trace needing exactly 2^62 is found whatever the granule;
// below 2^63, as granule <= 2^62).
std::uint64_t unbounded_capacity(std::uint64_t granule);

// `run(capacity)` replays the whole trace on a device of that capacity; every capacity it is given
// is a multiple of `granule` no larger than unbounded_capacity(granule). Throws config_error
// unless check_granule() accepts `granule`. Not found when the trace fails even on an unbounded
// device (the pool's limit, say). `largest`, when not 0, bounds the search for a device that
// cannot be made larger (a real one, with that much free): capacities stay at or below it,
// rounded down to a granule, and "unbounded" means that.
//
// `before_replay`, when set, is called before each replay with an estimate of the replays left,
// counting that one, for a progress display: 0 while unknown (before the unbounded replay has
// given the peak); otherwise the bisection's worst case, assuming the first bound tried holds.
// Once the bisection has begun it is a true upper bound.
min_capacity_result find_min_capacity(const std::function<replay_report(std::uint64_t)>& run,
                                      std::uint64_t granule, std::uint64_t largest = 0,
                                      const std::function<void(std::uint64_t)>& before_replay = {});

// The most bisection replays needed to find the boundary in a span of `span` untested points
// (ceil(log2(span + 1))): each replay halves it.
std::uint64_t bisection_replays(std::uint64_t span);

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_MIN_CAPACITY_H_
