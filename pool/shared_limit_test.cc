// shared_limit / limited_allocator: pools drawing on one limit, over both forms of the seam.
#include "pool/shared_limit.h"

#include <gtest/gtest.h>

#include <memory>

#include "pool/memory_pool.h"
#include "pool/testing/fake_allocator.h"

namespace clpool {
namespace {

using testing::fake_allocator;
using testing::fake_device_error;
using testing::throwing_fake_allocator;

constexpr std::uint64_t kBlock = 4351;  // bin sizes at leading_bits 4: no rounding
constexpr std::uint64_t kBig = 8703;

template <class A>
class SharedLimitTest : public ::testing::Test {};
using Allocators = ::testing::Types<fake_allocator, throwing_fake_allocator>;
TYPED_TEST_SUITE(SharedLimitTest, Allocators);

TYPED_TEST(SharedLimitTest, TwoPoolsShareOneLimit) {
  auto limit = std::make_shared<shared_limit>(3 * kBlock);
  TypeParam device_a, device_b;
  memory_pool<limited_allocator<TypeParam>> a(limited_allocator<TypeParam>(device_a, limit));
  memory_pool<limited_allocator<TypeParam>> b(limited_allocator<TypeParam>(device_b, limit));
  auto a1 = a.allocate(kBlock);
  auto a2 = a.allocate(kBlock);
  auto b1 = b.allocate(kBlock);
  EXPECT_EQ(limit->used(), 3 * kBlock);
  try {
    b.allocate(kBlock);
    ADD_FAILURE() << "the fourth block fits no limit";
  } catch (const out_of_memory& e) {
    // Named as the limit it is, not as the device refusing.
    EXPECT_EQ(e.report().cause, oom_cause::limit);
    EXPECT_EQ(e.report().limit_bytes, 3 * kBlock);
    EXPECT_EQ(e.report().allocator_status, shared_limit_status);
    EXPECT_NE(e.report().allocator_message.find("13053 bytes in use"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("because the shared limit of 13053 bytes was reached"),
              std::string::npos)
        << e.what();
  }
  a2.release();  // held by a: still counted
  EXPECT_EQ(limit->used(), 3 * kBlock);
  EXPECT_THROW(b.allocate(kBlock), out_of_memory);
  a.free_held();  // gone from the device: b may have it
  EXPECT_EQ(limit->used(), 2 * kBlock);
  auto b2 = b.allocate(kBlock);
  EXPECT_EQ(limit->used(), 3 * kBlock);
  EXPECT_EQ(device_a.device->outstanding_bytes() + device_b.device->outstanding_bytes(),
            3 * kBlock);
}

TYPED_TEST(SharedLimitTest, ReclaimCallbackMayFreeAnotherPoolsBlocks) {
  // What clpool's Python arenas do: a pool that hits the shared limit frees its siblings' held
  // blocks through a reclaim callback, then retries.
  auto limit = std::make_shared<shared_limit>(kBlock + kBig);
  TypeParam device;
  memory_pool<limited_allocator<TypeParam>> a(limited_allocator<TypeParam>(device, limit));
  memory_pool<limited_allocator<TypeParam>> b(limited_allocator<TypeParam>(device, limit));
  a.allocate(kBlock).release();
  a.allocate(kBig).release();  // a holds the whole limit, in two bins
  EXPECT_EQ(a.held_blocks(), 2u);
  b.add_reclaim_callback([&](std::uint64_t) { a.free_held(); });
  auto got = b.allocate(kBlock);
  EXPECT_TRUE(got.has_block());
  EXPECT_EQ(a.held_blocks(), 0u);
  EXPECT_EQ(b.statistics().reclaim_calls, 1u);
}

TYPED_TEST(SharedLimitTest, LoweringAndRaisingTheLimit) {
  auto limit = std::make_shared<shared_limit>();
  TypeParam device;
  memory_pool<limited_allocator<TypeParam>> a(limited_allocator<TypeParam>(device, limit));
  auto x = a.allocate(kBlock);
  auto y = a.allocate(kBlock);
  limit->set_limit(kBlock);  // below what is in use: nothing is freed, nothing new is made
  EXPECT_EQ(limit->used(), 2 * kBlock);
  EXPECT_THROW(a.allocate(kBlock), out_of_memory);
  x.release();
  y.release();
  a.free_held();
  EXPECT_EQ(limit->used(), 0u);
  auto z = a.allocate(kBlock);
  EXPECT_THROW(a.allocate(kBlock), out_of_memory);
  limit->set_limit(unlimited);
  auto w = a.allocate(kBlock);
  EXPECT_EQ(limit->used(), 2 * kBlock);
}

TYPED_TEST(SharedLimitTest, TheInnerAllocatorsRefusalsAndErrorsGiveTheBytesBack) {
  auto limit = std::make_shared<shared_limit>(1 << 20);
  TypeParam device;
  device.device = std::make_shared<testing::fake_device>(kBlock);  // a one-block device
  memory_pool<limited_allocator<TypeParam>> a(limited_allocator<TypeParam>(device, limit));
  auto x = a.allocate(kBlock);
  EXPECT_THROW(a.allocate(kBlock), out_of_memory);  // the device, not the limit, refused
  EXPECT_EQ(limit->used(), kBlock);
  x.release();
  a.free_held();
  device.device->fail_next_allocations(1);
  EXPECT_THROW(a.allocate(kBlock), fake_device_error);
  EXPECT_EQ(limit->used(), 0u);
}

TEST(SharedLimit, NoLimitObjectMeansNoLimit) {
  fake_allocator device;
  memory_pool<limited_allocator<fake_allocator>> a(limited_allocator<fake_allocator>(device, {}));
  auto x = a.allocate(1 << 30);
  EXPECT_TRUE(x.has_block());
}

TEST(SharedLimit, OverflowIsRefusedNotWrapped) {
  shared_limit limit(unlimited);
  EXPECT_TRUE(limit.try_take(unlimited - 10));
  EXPECT_FALSE(limit.try_take(11));
  EXPECT_TRUE(limit.try_take(10));
  EXPECT_FALSE(limit.try_take(1));
}

}  // namespace
}  // namespace clpool
