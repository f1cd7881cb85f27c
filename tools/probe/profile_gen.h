// Seeded generators of valid device profiles and of capacities that suit them, for the probe's
// tests (the model-level property test and the round trip through mockcl).
#ifndef CLPOOL_TOOLS_PROBE_PROFILE_GEN_H_
#define CLPOOL_TOOLS_PROBE_PROFILE_GEN_H_

#include <cstdint>
#include <random>

#include "device_model/profile.h"

namespace clpool::probe::testing {

// A valid profile: page 1 B (exact) or a power of two 4 KiB..4 MiB, headroom a multiple of
// 4 KiB up to 64 MiB, any oom_at, svm_oom_at first_use or not (where oom_at allows), oom_status
// -4/-5/-6, max_alloc enforced or not, and packing none or a granule (a power of two dividing the
// page) with a pack limit of at least page/256 (a probe fills a page with buffers near the pack
// limit; a tiny limit would need thousands). With `observable`, only profiles a probe can tell
// apart (measure.h's observable() leaves them as they are): a granule below the page, and a pack
// limit below page - granule or the page.
device_model::device_profile random_profile(std::mt19937_64& rng, bool observable);

// A capacity whose usable memory is `pages` (8..63) whole pages, plus `extra` bytes that no
// page can use (0 for a capacity at which the headroom is observable exactly).
std::uint64_t capacity_for(const device_model::device_profile& p, std::mt19937_64& rng,
                           std::uint64_t extra);

}  // namespace clpool::probe::testing

#endif  // CLPOOL_TOOLS_PROBE_PROFILE_GEN_H_
