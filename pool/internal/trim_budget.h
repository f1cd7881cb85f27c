// The trim policy's arithmetic, apart from the pool's locking and bookkeeping: how many held bytes
// a policy allows for a given number of active bytes, and a cheap proof, for the release path,
// that held bytes are within it. pool_state keeps one and asks it after every release.
#ifndef CLPOOL_POOL_INTERNAL_TRIM_BUDGET_H_
#define CLPOOL_POOL_INTERNAL_TRIM_BUDGET_H_

#include <cmath>
#include <cstdint>

#include "pool/errors.h"
#include "pool/pool_types.h"

namespace clpool::internal {

class trim_budget {
 public:
  trim_budget() noexcept = default;
  explicit trim_budget(const trim_policy& policy) noexcept { set(policy); }

  // Throws argument_error for a ratio that is not a finite number.
  static void validate(const trim_policy& policy) {
    if (std::isnan(policy.max_held_to_active_ratio) ||
        std::isinf(policy.max_held_to_active_ratio)) {
      throw argument_error(
          "trim_policy: max_held_to_active_ratio must be a finite number "
          "(negative turns the ratio bound off)");
    }
  }

  // Precondition: validate(policy) passed.
  void set(const trim_policy& policy) noexcept {
    policy_ = policy;
    enabled_ = policy.enabled();
    ratio_fixed_ = ratio_lower_bound_fixed(policy.max_held_to_active_ratio);
  }

  const trim_policy& policy() const noexcept { return policy_; }
  bool enabled() const noexcept { return enabled_; }

  // The held bytes the policy allows with `active` bytes live: the smaller of the cap and
  // ratio * active (exactly, in long double).
  std::uint64_t budget(std::uint64_t active) const noexcept {
    std::uint64_t budget = policy_.max_held_bytes;
    if (policy_.max_held_to_active_ratio >= 0.0) {
      const long double by_ratio =
          static_cast<long double>(policy_.max_held_to_active_ratio) * active;
      if (by_ratio < static_cast<long double>(budget))
        budget = static_cast<std::uint64_t>(by_ratio);
    }
    return budget;
  }

  // True when `held` is surely within the budget; false when it may not be. Most releases stay
  // within budget, and this proves it with one integer multiply instead of the exact long double
  // product (~40 instructions of x87 code): held at most a lower bound of ratio * active is at
  // most floor(ratio * active), however the exact product rounds (every integer up to 2^64 is a
  // long double).
  bool within_fast(std::uint64_t held, std::uint64_t active) const noexcept {
    return held <= policy_.max_held_bytes &&
           (ratio_fixed_ == ratio_off || held <= ratio_lower_bound_bytes(active));
  }

  // Held bytes above the budget, or 0 when there is no policy or no excess.
  std::uint64_t excess(std::uint64_t held, std::uint64_t active) const noexcept {
    if (!enabled_ || within_fast(held, active)) return 0;
    const std::uint64_t b = budget(active);
    return held > b ? held - b : 0;
  }

 private:
  // The ratio bound off (a negative ratio): ratio_fixed_'s marker.
  static constexpr std::uint64_t ratio_off = ~std::uint64_t{0};

  // floor(ratio * 2^32), saturated below ratio_off, or ratio_off when the bound is off. Never
  // above ratio * 2^32, so ratio_lower_bound_bytes() never overestimates the budget.
  static std::uint64_t ratio_lower_bound_fixed(double ratio) noexcept {
    if (!(ratio >= 0.0)) return ratio_off;
    const double scaled = std::floor(std::ldexp(ratio, 32));
    if (scaled >= 18446744073709549568.0) return ratio_off - 1;  // the largest double below 2^64
    return static_cast<std::uint64_t>(scaled);
  }

  // A lower bound of ratio * active (to within 2^-32 * active): (active * ratio_fixed_) >> 32.
  std::uint64_t ratio_lower_bound_bytes(std::uint64_t active) const noexcept {
    const unsigned __int128 product = static_cast<unsigned __int128>(active) * ratio_fixed_ >> 32;
    return product > ~std::uint64_t{0} ? ~std::uint64_t{0} : static_cast<std::uint64_t>(product);
  }

  trim_policy policy_;
  bool enabled_ = false;                   // policy_.enabled(), cached for the release path
  std::uint64_t ratio_fixed_ = ratio_off;  // ratio_lower_bound_fixed(policy_'s ratio)
};

}  // namespace clpool::internal

#endif  // CLPOOL_POOL_INTERNAL_TRIM_BUDGET_H_
