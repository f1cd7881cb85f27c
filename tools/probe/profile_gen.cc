#include "tools/probe/profile_gen.h"

namespace clpool::probe::testing {

namespace {
std::uint64_t pick(std::mt19937_64& rng, std::uint64_t lo, std::uint64_t hi) {  // inclusive
  return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
}

// Everything but svm_oom_at, drawn first so that a seed gives the shapes it always gave.
device_model::device_profile random_shape(std::mt19937_64& rng, bool observable) {
  using device_model::refusal_point;
  device_model::device_profile p;
  p.name = "random";
  p.oom_at = static_cast<refusal_point>(pick(rng, 0, 2));
  static constexpr std::int32_t statuses[] = {-4, -5, -6};
  p.oom_status = statuses[pick(rng, 0, 2)];
  p.headroom = 4096 * pick(rng, 0, 16384);
  p.max_alloc_enforced = pick(rng, 0, 1) == 1;
  if (pick(rng, 0, 7) == 0) return p;  // exact bytes: page 1, no packing
  const unsigned log_page = static_cast<unsigned>(pick(rng, 12, 22));
  p.page = std::uint64_t{1} << log_page;
  if (pick(rng, 0, 2) == 0) return p;  // no packing
  // A page holds at most 65536 granules (device_model::max_granules_per_page).
  const unsigned log_granule = static_cast<unsigned>(
      pick(rng, log_page > 16 ? log_page - 16 : 0, observable ? log_page - 1 : log_page));
  p.pack_granule = std::uint64_t{1} << log_granule;
  const std::uint64_t low = std::max(p.pack_granule, p.page / 256);
  if (observable && pick(rng, 0, 3) == 0) {
    p.pack_limit = p.page;
  } else {
    const std::uint64_t high = observable ? p.page - p.pack_granule - 1 : p.page;
    p.pack_limit = low <= high ? pick(rng, low, high) : p.page;
  }
  return p;
}

}  // namespace

device_model::device_profile random_profile(std::mt19937_64& rng, bool observable) {
  device_model::device_profile p = random_shape(rng, observable);
  // first_use only where buffers are not refused at creation (validate_profile).
  if (p.oom_at != device_model::refusal_point::creation && pick(rng, 0, 1) == 1)
    p.svm_oom_at = device_model::refusal_point::first_use;
  device_model::validate_profile(p, "random_profile");
  return p;
}

std::uint64_t capacity_for(const device_model::device_profile& p, std::mt19937_64& rng,
                           std::uint64_t extra) {
  // At least 8 pages: the probe needs a fill buffer of two pages or more.
  const std::uint64_t page = p.page == 1 ? 4096 : p.page;
  return pick(rng, 8, 63) * page + p.headroom + extra;
}

}  // namespace clpool::probe::testing
