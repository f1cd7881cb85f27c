// The one simulated device: blocks committed now or at first commit, handles that tell a freed
// block from its slot's next one, and the ledger's figures through both.
#include "device_model/simulated_device.h"

#include <gtest/gtest.h>

namespace clpool::device_model {
namespace {

TEST(SimulatedDevice, CommitsNowOrAtFirstCommit) {
  simulated_device d({}, 100);
  const std::uint64_t now = d.allocate(60, /*commit=*/true);
  ASSERT_NE(now, 0u);
  EXPECT_EQ(d.memory().committed(), 60u);
  EXPECT_EQ(d.allocate(41, true), 0u) << "does not fit: refused, nothing changed";
  EXPECT_EQ(d.live_blocks(), 1u);
  const std::uint64_t later = d.allocate(60, /*commit=*/false);
  ASSERT_NE(later, 0u);
  EXPECT_EQ(d.memory().committed(), 60u);
  EXPECT_FALSE(d.commit(later));
  EXPECT_TRUE(d.commit(now)) << "committed already";
  EXPECT_TRUE(d.release(now));
  EXPECT_TRUE(d.commit(later));
  EXPECT_EQ(d.memory().committed(), 60u);
  EXPECT_TRUE(d.release(later));
  EXPECT_EQ(d.memory().committed(), 0u);
  EXPECT_EQ(d.memory().peak_committed(), 60u);
  EXPECT_EQ(d.live_blocks(), 0u);
}

TEST(SimulatedDevice, AReleasedHandleStaysReleasedAfterItsSlotIsReused) {
  simulated_device d({}, 1000);
  const std::uint64_t a = d.allocate(10, true);
  EXPECT_EQ(d.live_bytes(a), 10u);
  EXPECT_TRUE(d.release(a));
  EXPECT_FALSE(d.live_bytes(a));
  const std::uint64_t b = d.allocate(20, true);
  EXPECT_EQ(a & 0xffffffffu, b & 0xffffffffu) << "the slot is reused";
  EXPECT_NE(a, b);
  EXPECT_FALSE(d.release(a)) << "a double free is refused, not applied to the new block";
  EXPECT_FALSE(d.release(0));
  EXPECT_FALSE(d.release(12345));
  EXPECT_EQ(d.memory().committed(), 20u);
  EXPECT_TRUE(d.release(b));
}

TEST(SimulatedDevice, AnUncommittedBlockReleasesNothing) {
  simulated_device d(load_profile("nvidia"), 64 << 20);
  const std::uint64_t h = d.allocate(1 << 20, false);
  EXPECT_EQ(d.memory().committed(), 0u);
  EXPECT_TRUE(d.release(h));
  EXPECT_EQ(d.memory().committed(), 0u);
  EXPECT_EQ(d.memory().requested(), 0u);
}

}  // namespace
}  // namespace clpool::device_model
