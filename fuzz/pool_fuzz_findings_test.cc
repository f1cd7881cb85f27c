// Pool bugs found by the fuzzers, as minimal tests that keep them fixed.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "pool/bins.h"
#include "pool/errors.h"
#include "pool/memory_pool.h"
#include "pool/testing/fake_allocator.h"

namespace clpool {
namespace {

using testing::fake_allocator;
using testing::fake_device;

// Found by pool_ops_fuzzer; input kept as fuzz/regressions/pool_ops/overflow_with_held.
// memory_pool.h promises "A request that would fit once every held block is returned always
// succeeds"; the pool's single attempt (then pool_state::try_allocate, now attempt()) used to
// check `rounded > unlimited - managed` (managed includes HELD bytes) and throw argument_error
// before freeing any held block.
TEST(PoolFuzzFindings, RequestThatFitsOnceHeldIsFreedSucceedsEvenIfHeldPlusRequestOverflows) {
  auto device = std::make_shared<fake_device>();             // unlimited capacity
  memory_pool<fake_allocator> pool(fake_allocator{device});  // leading_bits 4, no limit
  const std::uint64_t first = std::uint64_t{1} << 63;        // rounds to 2^63 + 2^59 - 1
  pool.allocate(first).release();                            // now held
  ASSERT_EQ(pool.held_bytes(), rounded_size(first, default_leading_bits));
  const std::uint64_t second = (std::uint64_t{1} << 63) + (std::uint64_t{1} << 60);  // another bin
  ASSERT_NE(rounded_size(second, default_leading_bits), rounded_size(first, default_leading_bits));
  // Fits on its own (nothing is active), but held + request overflow 64 bits.
  ASSERT_GT(rounded_size(second, default_leading_bits), unlimited - pool.held_bytes());
  try {
    auto a = pool.allocate(second);
    EXPECT_EQ(a.size(), second);
    EXPECT_EQ(pool.held_bytes(), 0u);  // the held block had to go
  } catch (const pool_error& e) {
    ADD_FAILURE() << "allocate(" << second << ") threw: " << e.what();
  }
  EXPECT_TRUE(device->errors().empty());
}

}  // namespace
}  // namespace clpool
