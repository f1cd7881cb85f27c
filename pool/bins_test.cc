#include "pool/bins.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace clpool {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

TEST(Bins, MatchesPyOpenClFigures) {
  // PyOpenCL 2022.3 on POCL rounds a 1 MiB request to 1,114,111 bytes (leading_bits 4).
  EXPECT_EQ(rounded_size(1 << 20, 4), 1'114'111u);
  EXPECT_EQ(bin_number(1 << 20, 4), (20u << 4) | 0u);
  // 1000 = 0b11111'01000: exponent 9, next four bits 1111, five dropped bits.
  EXPECT_EQ(bin_number(1000, 4), (9u << 4) | 0b1111u);
  EXPECT_EQ(rounded_size(1000, 4), 1023u);
  // 1100 = 0b10001'001100: exponent 10, next four bits 0001, six dropped bits.
  EXPECT_EQ(bin_number(1100, 4), (10u << 4) | 0b0001u);
  EXPECT_EQ(rounded_size(1100, 4), 0b10001'111111u);
}

TEST(Bins, SmallSizesAreExact) {
  for (unsigned lb = 0; lb <= max_leading_bits; ++lb) {
    for (std::uint64_t s = 1; s < (std::uint64_t{1} << (lb + 1)); ++s) {
      ASSERT_EQ(rounded_size(s, lb), s) << "size " << s << " leading_bits " << lb;
    }
  }
}

TEST(Bins, ZeroSharesBinWithOne) {
  EXPECT_EQ(bin_number(0, 4), bin_number(1, 4));
  EXPECT_EQ(rounded_size(0, 4), 0u);
}

TEST(Bins, NoOverflowAtTheTopOfTheRange) {
  for (unsigned lb = 0; lb <= max_leading_bits; ++lb) {
    EXPECT_EQ(rounded_size(kMax, lb), kMax);
    EXPECT_LT(bin_number(kMax, lb), bin_count(lb));
    // Just above 2^32, where 32-bit arithmetic would wrap.
    const std::uint64_t above = (std::uint64_t{1} << 32) + 1;
    EXPECT_GE(rounded_size(above, lb), above);
    EXPECT_GT(rounded_size(above, lb), std::uint64_t{1} << 32);
    const std::uint64_t top = std::uint64_t{1} << 63;
    EXPECT_GE(rounded_size(top, lb), top);
  }
}

TEST(Bins, LeadingBitsValidity) {
  EXPECT_TRUE(leading_bits_is_valid(0));
  EXPECT_TRUE(leading_bits_is_valid(default_leading_bits));
  EXPECT_TRUE(leading_bits_is_valid(max_leading_bits));
  EXPECT_FALSE(leading_bits_is_valid(max_leading_bits + 1));
  EXPECT_FALSE(leading_bits_is_valid(64));
}

TEST(Bins, BinValidity) {
  // Below exponent leading_bits, low mantissa bits are always zero: bin (1 << 4) | 1 is size 2
  // with mantissa 0001, which no size produces.
  EXPECT_TRUE(bin_is_valid(bin_number(2, 4), 4));
  EXPECT_FALSE(bin_is_valid((1u << 4) | 1u, 4));
  EXPECT_FALSE(bin_is_valid(bin_count(4), 4));
  EXPECT_FALSE(bin_is_valid(0, max_leading_bits + 1));
}

TEST(Bins, ConstexprUsable) {
  constexpr std::uint64_t r = rounded_size(4096 + 1, 4);
  static_assert(r == 4096 + 255);
  EXPECT_EQ(r, 4351u);
}

}  // namespace
}  // namespace clpool
