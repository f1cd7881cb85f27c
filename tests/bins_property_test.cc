// Properties of the bin scheme over the whole 64-bit range and every allowed leading_bits.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>

#include "pool/bins.h"
#include "tests/generators.h"

namespace clpool {
namespace {

RC_GTEST_PROP(BinProperties, RoundingNeverShrinks, ()) {
  const unsigned lb = *testgen::leading_bits();
  const std::uint64_t s = *testgen::any_size();
  RC_ASSERT(alloc_size(bin_number(s, lb), lb) >= s);
}

RC_GTEST_PROP(BinProperties, AllocSizeMapsBackToItsBin, ()) {
  const unsigned lb = *testgen::leading_bits();
  const bin_id b = bin_number(*testgen::any_size(), lb);
  RC_ASSERT(b < bin_count(lb));
  RC_ASSERT(bin_number(alloc_size(b, lb), lb) == b);
  RC_ASSERT(bin_is_valid(b, lb));
}

RC_GTEST_PROP(BinProperties, BothFunctionsAreMonotone, ()) {
  const unsigned lb = *testgen::leading_bits();
  std::uint64_t a = *testgen::any_size();
  std::uint64_t b = *testgen::any_size();
  if (a > b) std::swap(a, b);
  RC_ASSERT(bin_number(a, lb) <= bin_number(b, lb));
  RC_ASSERT(rounded_size(a, lb) <= rounded_size(b, lb));
  const bin_id ba = bin_number(a, lb);
  const bin_id bb = bin_number(b, lb);
  if (ba < bb) RC_ASSERT(alloc_size(ba, lb) < alloc_size(bb, lb));
}

RC_GTEST_PROP(BinProperties, RelativeWasteIsBelowTwoToMinusLeadingBits, ()) {
  const unsigned lb = *testgen::leading_bits();
  const std::uint64_t s = *testgen::any_size();
  RC_PRE(s > 0);
  const std::uint64_t waste = rounded_size(s, lb) - s;
  // waste / s < 2^-lb  <=>  waste * 2^lb < s, computed in 128 bits.
  RC_ASSERT((static_cast<unsigned __int128>(waste) << lb) < s);
}

RC_GTEST_PROP(BinProperties, LocateAgreesWithBinNumberAndAllocSize, ()) {
  const unsigned lb = *testgen::leading_bits();
  const std::uint64_t s = *testgen::any_size();
  RC_PRE(s > 0);
  const bin_and_size located = locate(s, lb);
  RC_ASSERT(located.bin == bin_number(s, lb));
  RC_ASSERT(located.rounded == alloc_size(bin_number(s, lb), lb));
  RC_ASSERT(located.exponent == bin_number(s, lb) >> lb);
}

RC_GTEST_PROP(BinProperties, SmallSizesAreExact, ()) {
  const unsigned lb = *testgen::leading_bits();
  const std::uint64_t s = *testgen::uniform<std::uint64_t>(1, std::uint64_t{2} << lb);
  RC_ASSERT(rounded_size(s, lb) == s);
}

RC_GTEST_PROP(BinProperties, SameBinMeansSameRoundedSize, ()) {
  const unsigned lb = *testgen::leading_bits();
  const std::uint64_t a = *testgen::any_size();
  const std::uint64_t b = *testgen::any_size();
  RC_ASSERT((bin_number(a, lb) == bin_number(b, lb)) ==
            (a == 0 || b == 0 ? bin_number(a, lb) == bin_number(b, lb)
                              : rounded_size(a, lb) == rounded_size(b, lb)));
}

}  // namespace
}  // namespace clpool
