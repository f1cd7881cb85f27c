// The fake device's bookkeeping, which every pool test and fuzzer trusts to catch bad frees.
#include "pool/testing/fake_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

namespace clpool::testing {
namespace {

TEST(FakeDevice, RefusesByValueOrByExceptionWithTheSameStatus) {
  fake_device dev(100);
  std::uint64_t handle = 0;
  allocator_refusal refusal;
  EXPECT_FALSE(dev.try_allocate(101, handle, refusal));
  EXPECT_EQ(refusal.status, fake_oom_status);
  EXPECT_EQ(refusal.message, "fake_device: 101 bytes requested, 100 free");
  EXPECT_EQ(handle, 0u);  // untouched
  try {
    dev.allocate(101);
    FAIL() << "expected allocator_out_of_memory";
  } catch (const allocator_out_of_memory& e) {
    EXPECT_EQ(e.status(), fake_oom_status);
    EXPECT_STREQ(e.what(), "fake_device: 101 bytes requested, 100 free");
  }
  EXPECT_EQ(dev.oom_failures(), 2u);
  EXPECT_EQ(dev.outstanding_blocks(), 0u);
  ASSERT_TRUE(dev.try_allocate(100, handle, refusal));
  EXPECT_TRUE(dev.is_outstanding(handle));
  EXPECT_EQ(dev.outstanding_bytes(), 100u);
}

TEST(FakeDevice, ArmedFailuresThrowFromBothForms) {
  fake_device dev;
  dev.fail_next_allocations(2);
  std::uint64_t handle = 0;
  allocator_refusal refusal;
  EXPECT_THROW(dev.try_allocate(8, handle, refusal), fake_device_error);
  EXPECT_THROW(dev.allocate(8), fake_device_error);
  EXPECT_NE(dev.allocate(8), 0u);
}

TEST(FakeDevice, ReusedSlotsKeepHandlesUniqueAndStaleHandlesUnknown) {
  fake_device dev;
  std::set<std::uint64_t> seen;
  std::vector<std::uint64_t> freed;
  for (int round = 0; round < 100; ++round) {
    const std::uint64_t a = dev.allocate(10);
    const std::uint64_t b = dev.allocate(20);
    EXPECT_TRUE(seen.insert(a).second) << "handle repeated: " << a;
    EXPECT_TRUE(seen.insert(b).second) << "handle repeated: " << b;
    dev.deallocate(a, 10);
    dev.deallocate(b, 20);
    freed.push_back(a);
    freed.push_back(b);
  }
  EXPECT_EQ(dev.outstanding_blocks(), 0u);
  EXPECT_EQ(dev.outstanding_bytes(), 0u);
  EXPECT_EQ(dev.error_count(), 0u);
  // A block that reuses a freed one's slot does not make the old handle valid again.
  const std::uint64_t live = dev.allocate(30);
  for (std::uint64_t h : freed) EXPECT_FALSE(dev.is_outstanding(h));
  EXPECT_TRUE(dev.is_outstanding(live));
  EXPECT_FALSE(dev.is_outstanding(0));
  EXPECT_FALSE(dev.is_outstanding(live + 1000));
}

TEST(FakeDevice, BadFreesAreRecordedNotApplied) {
  fake_device dev;
  const std::uint64_t a = dev.allocate(64);
  dev.deallocate(a, 64);
  const std::uint64_t b = dev.allocate(32);  // reuses a's slot
  dev.deallocate(a, 64);                     // double free of a: must not free b
  EXPECT_TRUE(dev.is_outstanding(b));
  EXPECT_EQ(dev.outstanding_bytes(), 32u);
  dev.deallocate(12345, 1);  // never allocated
  dev.deallocate(b, 31);     // wrong size: recorded, the block is still freed
  EXPECT_EQ(dev.outstanding_bytes(), 0u);
  ASSERT_EQ(dev.error_count(), 3u);
  const std::vector<std::string> errors = dev.errors();
  EXPECT_NE(errors[0].find("already freed"), std::string::npos) << errors[0];
  EXPECT_NE(errors[2].find("freed with size 31, allocated with 32"), std::string::npos)
      << errors[2];
}

}  // namespace
}  // namespace clpool::testing
