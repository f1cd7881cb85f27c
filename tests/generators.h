// rapidcheck generators shared by the property tests.
#ifndef CLPOOL_TESTS_GENERATORS_H_
#define CLPOOL_TESTS_GENERATORS_H_

#include <rapidcheck.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>

#include "pool/bins.h"

namespace clpool::testgen {

// rapidcheck scales inRange() and arbitrary() by the test's size parameter, which starts at 0, so
// early cases would only see tiny values. Values here are pinned to full size: sequences still
// grow with the size parameter, but every value spans its whole range from the first case.
template <class T>
rc::Gen<T> full_range(rc::Gen<T> gen) {
  return rc::gen::resize(rc::kNominalSize, std::move(gen));
}

// A value uniform in [low, high), at full size.
template <class T>
rc::Gen<T> uniform(T low, T high) {
  return full_range(rc::gen::inRange<T>(low, high));
}

// Any 64-bit size, spread evenly over exponents so the top of the range is as likely as the
// bottom, with the edges (0, 1, powers of two and their neighbours, 2^32, 2^63, 2^64 - 1) boosted.
inline rc::Gen<std::uint64_t> any_size() {
  auto spread = rc::gen::mapcat(rc::gen::inRange<unsigned>(0, 64), [](unsigned exponent) {
    return rc::gen::map(rc::gen::arbitrary<std::uint64_t>(), [exponent](std::uint64_t bits) {
      const std::uint64_t top = std::uint64_t{1} << exponent;
      return top | (bits & (top - 1));
    });
  });
  auto edge = rc::gen::mapcat(rc::gen::inRange<unsigned>(0, 64), [](unsigned exponent) {
    return rc::gen::map(rc::gen::inRange<int>(-1, 2), [exponent](int delta) {
      return (std::uint64_t{1} << exponent) + static_cast<std::uint64_t>(delta);
    });
  });
  return full_range(rc::gen::weightedOneOf<std::uint64_t>(
      {{6, spread},
       {2, edge},
       {1,
        rc::gen::element<std::uint64_t>(0, 1, 2, 3, ~std::uint64_t{0}, ~std::uint64_t{0} - 1,
                                        std::uint64_t{1} << 32, (std::uint64_t{1} << 32) - 1)}}));
}

// A valid leading_bits value.
inline rc::Gen<unsigned> leading_bits() { return uniform<unsigned>(0, max_leading_bits + 1); }

// A request size log-uniform in [1, max] (every power of two below max equally likely, so small
// and large blocks mix and pools end up holding many bins), plus 0 now and then.
inline rc::Gen<std::uint64_t> request_size(std::uint64_t max) {
  if (max == 0) return rc::gen::just<std::uint64_t>(0);
  const unsigned width = static_cast<unsigned>(std::bit_width(max));
  auto sized = rc::gen::mapcat(rc::gen::inRange<unsigned>(0, width), [max](unsigned exponent) {
    return rc::gen::map(rc::gen::arbitrary<std::uint64_t>(), [exponent, max](std::uint64_t bits) {
      const std::uint64_t top = std::uint64_t{1} << exponent;
      return std::min(max, top | (bits & (top - 1)));
    });
  });
  return full_range(
      rc::gen::weightedOneOf<std::uint64_t>({{20, sized}, {1, rc::gen::just<std::uint64_t>(0)}}));
}

}  // namespace clpool::testgen

#endif  // CLPOOL_TESTS_GENERATORS_H_
