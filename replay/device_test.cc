#include "replay/device.h"

#include <gtest/gtest.h>

namespace clpool::replay {
namespace {

TEST(SimulatedDevice, ImmediateFailsAtAllocate) {
  simulated_device d(100, alloc_semantics::immediate);
  const auto a = d.allocate(60);
  EXPECT_EQ(d.used_bytes(), 60u);
  EXPECT_TRUE(d.first_use(a));
  EXPECT_THROW(d.allocate(41), allocator_out_of_memory);
  EXPECT_EQ(d.failed_allocations(), 1u);
  const auto b = d.allocate(40);
  EXPECT_EQ(d.used_bytes(), 100u);
  d.deallocate(a, 60);
  d.deallocate(b, 40);
  EXPECT_EQ(d.used_bytes(), 0u);
  EXPECT_EQ(d.peak_used_bytes(), 100u);
}

TEST(SimulatedDevice, DeferredFailsAtFirstUse) {
  simulated_device d(100, alloc_semantics::deferred);
  const auto a = d.allocate(60);
  const auto b = d.allocate(60);  // succeeds: nothing is committed yet
  EXPECT_EQ(d.used_bytes(), 0u);
  EXPECT_TRUE(d.first_use(a));
  EXPECT_TRUE(d.first_use(a)) << "a second use commits nothing more";
  EXPECT_EQ(d.used_bytes(), 60u);
  EXPECT_FALSE(d.first_use(b));
  d.deallocate(a, 60);
  EXPECT_TRUE(d.first_use(b));
  d.deallocate(b, 60);
  EXPECT_EQ(d.used_bytes(), 0u);
}

TEST(SimulatedDevice, SlotsAreReusedAndHandlesNonZero) {
  simulated_device d(1000, alloc_semantics::immediate);
  const auto a = d.allocate(1);
  d.deallocate(a, 1);
  const auto b = d.allocate(1);
  EXPECT_NE(b, 0u);
  EXPECT_EQ(a & 0xffffffffu, b & 0xffffffffu)
      << "slots are recycled, so memory tracks live blocks only";
  EXPECT_NE(a, b) << "the slot's generation tells the handles apart";
}

TEST(Semantics, Names) {
  EXPECT_EQ(parse_semantics("deferred"), alloc_semantics::deferred);
  EXPECT_EQ(to_string(alloc_semantics::immediate), "immediate");
  EXPECT_FALSE(parse_semantics("lazy"));
  EXPECT_EQ(parse_semantics("host_oom"), alloc_semantics::host_oom);
  EXPECT_EQ(to_string(alloc_semantics::host_oom), "host_oom");
}

TEST(SimulatedDevice, HostOomFailsAtAllocationLikeImmediate) {
  simulated_device d(100, alloc_semantics::host_oom);
  EXPECT_FALSE(d.defers_allocation());
  const std::uint64_t h = d.allocate(60);
  EXPECT_EQ(d.used_bytes(), 60u);
  EXPECT_THROW(d.allocate(50), allocator_out_of_memory);
  d.deallocate(h, 60);
  EXPECT_EQ(d.used_bytes(), 0u);
}

}  // namespace
}  // namespace clpool::replay
