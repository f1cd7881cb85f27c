#include "replay/min_capacity.h"

#include <algorithm>

#include "common/byte_size.h"

namespace clpool::replay {

// One bound: the largest device any tool accepts is the largest size a trace can name.
static_assert(trace::max_event_size == common::max_device_bytes);

void check_granule(std::uint64_t granule, const std::string& what) {
  if (granule == 0) throw config_error(what + ": must be positive");
  if (granule > max_granule) {
    throw config_error(what + ": " + format_bytes_exact(granule) +
                       " is above 2^62 bytes (4 EiB), the largest size a trace can name, so "
                       "--min-capacity would have nothing to search");
  }
}

std::uint64_t unbounded_capacity(std::uint64_t granule) {
  const std::uint64_t top = trace::max_event_size;
  // top + granule - 1 <= 2^63 - 1: no overflow for granule <= 2^62.
  return (top / granule + (top % granule != 0 ? 1 : 0)) * granule;
}

std::uint64_t bisection_replays(std::uint64_t span) {
  std::uint64_t n = 0;
  while (span > 0) {
    span /= 2;  // a replay at the middle leaves at most the larger half, floor(span / 2)
    ++n;
  }
  return n;
}

min_capacity_result find_min_capacity(const std::function<replay_report(std::uint64_t)>& run,
                                      std::uint64_t granule, std::uint64_t largest,
                                      const std::function<void(std::uint64_t)>& before_replay) {
  check_granule(granule);
  min_capacity_result result;
  result.granule = granule;
  const std::uint64_t top_k =
      largest != 0 ? std::min(largest / granule, unbounded_capacity(granule) / granule)
                   : unbounded_capacity(granule) / granule;
  if (largest != 0 && top_k == 0) {
    result.why_not =
        "the device has less than one granule free (" + std::to_string(largest) + " bytes)";
    return result;
  }
  const auto attempt = [&](std::uint64_t k, std::uint64_t replays_left) {
    if (before_replay) before_replay(replays_left);
    ++result.replays;
    return run(k * granule);
  };

  replay_report unbounded = attempt(top_k, 0);
  if (!unbounded.ok() && unbounded.oom->refused_for_size()) {
    result.why_not = "a request is above the device's maximum allocation (event " +
                     std::to_string(unbounded.oom->event_index) + "), which no capacity changes";
    return result;
  }
  if (!unbounded.ok()) {
    result.why_not =
        (largest != 0 ? "it runs out of memory even with all of the device's " +
                            std::to_string(largest) + " bytes free ("
                      : std::string("it runs out of memory even on an unbounded device (")) +
        std::string(to_string(unbounded.oom->site)) + " at event " +
        std::to_string(unbounded.oom->event_index) + ")";
    return result;
  }
  // Upper bound: the unbounded replay's peak, rounded up to a granule; doubled while it fails
  // (a retry can make a capacity-bounded run differ from the unbounded one).
  std::uint64_t hi =
      unbounded.peak_device_bytes / granule + (unbounded.peak_device_bytes % granule != 0 ? 1 : 0);
  std::optional<replay_report> hi_report;
  for (;;) {
    if (hi >= top_k) {
      hi = top_k;
      hi_report = std::move(unbounded);
      break;
    }
    // This one, then a bisection below it (points 0 .. hi - 1 untested).
    replay_report r = attempt(hi, 1 + bisection_replays(hi));
    if (r.ok()) {
      hi_report = std::move(r);
      break;
    }
    hi = hi == 0 ? 1 : hi * 2;
  }
  // Invariant: hi succeeded; `low` (once known) failed; low < hi.
  std::optional<replay_report> lo_report;
  if (hi > 0) {
    // Capacity 0 is the natural lower end; it is tested like any other point.
    std::uint64_t low = 0;
    bool low_known = false;
    while (!low_known || hi - low > 1) {
      const std::uint64_t mid = low_known ? low + (hi - low) / 2 : hi / 2;
      // Untested points between the bounds: low + 1 .. hi - 1, or 0 .. hi - 1 before a failure.
      replay_report r = attempt(mid, bisection_replays(low_known ? hi - low - 1 : hi));
      if (r.ok()) {
        hi = mid;
        hi_report = std::move(r);
        if (hi == 0) break;
      } else {
        low = mid;
        low_known = true;
        lo_report = std::move(r);
      }
    }
  }
  result.found = true;
  result.capacity = hi * granule;
  result.at_result = std::move(hi_report);
  if (hi > 0) result.one_granule_below = std::move(lo_report);
  return result;
}

}  // namespace clpool::replay
