#include "pool/internal/held_blocks.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "pool/bins.h"

namespace clpool::internal {
namespace {

using blocks = held_blocks<std::uint64_t>;
using bin_and_count = std::pair<bin_id, std::uint64_t>;

std::vector<bin_and_count> bins_of(const blocks& b) {
  std::vector<bin_and_count> out;
  b.for_each_bin([&](bin_id bin, std::uint64_t count) { out.emplace_back(bin, count); });
  return out;
}

TEST(HeldBlocks, PopReturnsWhatWasPushedLastInFirstOut) {
  blocks b(4);
  const bin_id bin = bin_number(4096, 4);
  std::uint64_t out = 0;
  EXPECT_FALSE(b.try_pop(bin, out));
  b.push(bin, 1);
  b.push(bin, 2);
  ASSERT_TRUE(b.try_pop(bin, out));
  EXPECT_EQ(out, 2u);
  ASSERT_TRUE(b.try_pop(bin, out));
  EXPECT_EQ(out, 1u);
  EXPECT_FALSE(b.try_pop(bin, out));
  EXPECT_TRUE(b.is_valid());
}

TEST(HeldBlocks, PushWithoutAllocationNeedsAnExistingListWithSpareCapacity) {
  blocks b(4);
  const bin_id bin = bin_number(1000, 4);
  EXPECT_FALSE(b.try_push_no_alloc(bin, 7));  // no row yet
  b.push(bin, 7);
  std::uint64_t out = 0;
  ASSERT_TRUE(b.try_pop(bin, out));
  EXPECT_TRUE(b.try_push_no_alloc(bin, 8));  // capacity left by the pop
  // A neighbouring bin in the same row has a list, but no capacity yet.
  EXPECT_FALSE(b.try_push_no_alloc(bin + 1, 9));
  ASSERT_TRUE(b.try_pop(bin, out));
  EXPECT_EQ(out, 8u);
  EXPECT_FALSE(b.try_pop(bin + 1, out));
}

TEST(HeldBlocks, LargestNonEmptyBinSkipsBinsEmptiedByPops) {
  blocks b(4);
  const bin_id small = bin_number(100, 4), middle = bin_number(1 << 20, 4),
               large = bin_number(std::uint64_t{1} << 40, 4);
  EXPECT_EQ(b.largest_nonempty_bin(), std::nullopt);
  b.push(small, 1);
  b.push(middle, 2);
  b.push(large, 3);
  EXPECT_EQ(b.largest_nonempty_bin(), large);
  std::uint64_t out = 0;
  ASSERT_TRUE(b.try_pop(large, out));  // leaves large's bit set
  EXPECT_EQ(b.largest_nonempty_bin(), middle);
  ASSERT_TRUE(b.try_pop(middle, out));
  ASSERT_TRUE(b.try_pop(small, out));
  EXPECT_EQ(b.largest_nonempty_bin(), std::nullopt);
  EXPECT_TRUE(b.is_valid());
}

TEST(HeldBlocks, WalksVisitOnlyNonEmptyBinsSmallestFirst) {
  blocks b(2);
  const bin_id a = bin_number(5, 2), c = bin_number(std::uint64_t{1} << 63, 2),
               m = bin_number(3000, 2);
  b.push(c, 30);
  b.push(a, 10);
  b.push(m, 20);
  b.push(m, 21);
  std::uint64_t out = 0;
  ASSERT_TRUE(b.try_pop(a, out));  // a is empty now, but still marked
  EXPECT_EQ(bins_of(b), (std::vector<bin_and_count>{{m, 2}, {c, 1}}));
  std::vector<std::pair<bin_id, std::uint64_t>> seen;
  b.for_each([&](bin_id bin, std::uint64_t h) { seen.emplace_back(bin, h); });
  EXPECT_EQ(seen, (std::vector<std::pair<bin_id, std::uint64_t>>{{m, 20}, {m, 21}, {c, 30}}));
  std::vector<std::uint64_t> drained;
  b.drain([&](bin_id, std::uint64_t h) { drained.push_back(h); });
  EXPECT_EQ(drained, (std::vector<std::uint64_t>{20, 21, 30}));
  EXPECT_TRUE(bins_of(b).empty());
  EXPECT_EQ(b.largest_nonempty_bin(), std::nullopt);
  EXPECT_TRUE(b.is_valid());
}

TEST(HeldBlocks, EveryLeadingBitsReachesTheTopBin) {
  for (unsigned lb = 0; lb <= max_leading_bits; ++lb) {
    blocks b(lb);
    const bin_id top = bin_number(~std::uint64_t{0}, lb);
    const bin_id bottom = bin_number(1, lb);
    b.push(top, 1);
    b.push(bottom, 2);
    EXPECT_EQ(b.largest_nonempty_bin(), top) << "leading_bits " << lb;
    EXPECT_EQ(bins_of(b), (std::vector<bin_and_count>{{bottom, 1}, {top, 1}}))
        << "leading_bits " << lb;
    EXPECT_TRUE(b.is_valid());
  }
}

// The census counts blocks and bytes bin by bin, and sees popped (empty but marked) bins as zero.
TEST(HeldBlocks, CensusCountsBlocksAndBytesPerBin) {
  blocks b(4);
  EXPECT_EQ(b.take_census().blocks, 0u);
  const bin_id small = bin_number(100, 4);
  const bin_id large = bin_number(std::uint64_t{1} << 40, 4);
  b.push(small, 1);
  b.push(small, 2);
  b.push(large, 3);
  auto c = b.take_census();
  EXPECT_TRUE(c.valid);
  EXPECT_EQ(c.blocks, 3u);
  EXPECT_EQ(c.bytes, 2 * alloc_size(small, 4) + alloc_size(large, 4));
  std::uint64_t out = 0;
  ASSERT_TRUE(b.try_pop(large, out));  // its bit stays set; the census must count it as empty
  c = b.take_census();
  EXPECT_TRUE(c.valid);
  EXPECT_EQ(c.blocks, 2u);
  EXPECT_EQ(c.bytes, 2 * alloc_size(small, 4));
}

}  // namespace
}  // namespace clpool::internal
