// A pool over an allocator that knows its largest block (a device's CL_DEVICE_MAX_MEM_ALLOC_SIZE,
// pool/allocator.h): no request up to it is rounded above it. A request in the one bin that would
// do so gets a block of exactly its size, which is not kept; every other request is pooled as
// before.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "pool/memory_pool.h"
#include "pool/testing/fake_allocator.h"

namespace clpool {
namespace {

using testing::fake_allocator;
using testing::fake_device;

// 1 MiB + 32 KiB: with leading_bits 4 its bin, [1 MiB, 1 MiB + 64 KiB), rounds to 1,114,111
// bytes, above it; so every request of that bin is made at its own size and not kept.
constexpr std::uint64_t largest = (std::uint64_t{1} << 20) + (std::uint64_t{1} << 15);

struct capped_allocator : fake_allocator {
  std::uint64_t largest_block() const noexcept { return largest; }
};
static_assert(allocator_knows_largest_block<capped_allocator>);
static_assert(!allocator_knows_largest_block<fake_allocator>);

using pool = memory_pool<capped_allocator>;

struct counting_observer : pool_observer {
  void on_event(const pool_event&) noexcept override { ++events; }
  std::uint64_t events = 0;
};

capped_allocator on(const std::shared_ptr<fake_device>& dev) {
  capped_allocator a;
  a.device = dev;
  return a;
}

TEST(LargestBlock, ARequestThatWouldRoundAboveItGetsItsOwnSizeAndIsNotKept) {
  auto dev = std::make_shared<fake_device>();
  pool p(on(dev));
  for (const std::uint64_t size : {largest, largest - 1000, std::uint64_t{1} << 20, largest + 1}) {
    auto a = p.allocate(size);
    EXPECT_EQ(a.rounded_size(), size);
    EXPECT_EQ(dev->outstanding_bytes(), size);
    a.release();
    EXPECT_EQ(p.held_blocks(), 0u) << size;
    EXPECT_EQ(p.managed_bytes(), 0u);
    EXPECT_EQ(dev->outstanding_bytes(), 0u);
  }
  // Each was a miss, and the device saw each freed with the size it made.
  EXPECT_EQ(p.statistics().misses, 4u);
  EXPECT_EQ(p.statistics().hits, 0u);
  EXPECT_EQ(dev->allocate_calls(), 4u);
  EXPECT_EQ(dev->deallocate_calls(), 4u);
  EXPECT_TRUE(dev->errors().empty()) << dev->errors().front();
}

// The bins above hold only requests larger than the largest block: pooled as before (a device
// that enforces the limit refuses them as it would a plain buffer; NVIDIA's driver makes them).
TEST(LargestBlock, RequestsInTheBinsAboveArePooledAsBefore) {
  auto dev = std::make_shared<fake_device>();
  pool p(on(dev));
  const std::uint64_t above = (std::uint64_t{1} << 20) + (std::uint64_t{1} << 16);  // next bin
  auto a = p.allocate(above);
  EXPECT_EQ(a.rounded_size(), rounded_size(above, 4));
  a.release();
  EXPECT_EQ(p.held_blocks(), 1u);
  auto b = p.allocate(above + 10);
  EXPECT_EQ(p.statistics().hits, 1u);
  b.release();
  // The straddling bin below still never holds a block.
  p.allocate(largest).release();
  EXPECT_EQ(p.held_blocks(), 1u);
  EXPECT_TRUE(dev->errors().empty()) << dev->errors().front();
}

TEST(LargestBlock, RequestsWhoseBinFitsArePooledAsBefore) {
  auto dev = std::make_shared<fake_device>();
  pool p(on(dev));
  // The bin below 1 MiB's: its size is 2^20 - 1, within the largest block.
  const std::uint64_t below = (std::uint64_t{1} << 20) - (std::uint64_t{1} << 15);
  auto a = p.allocate(below);
  EXPECT_EQ(a.rounded_size(), (std::uint64_t{1} << 20) - 1);
  a.release();
  EXPECT_EQ(p.held_blocks(), 1u);
  auto b = p.allocate(below + 1);
  EXPECT_EQ(p.statistics().hits, 1u);
  EXPECT_EQ(dev->allocate_calls(), 1u);
}

// The unpooled block shares its bin with nothing held, so the hit path never hands one to a larger
// request; a pool that is not holding, and one with an observer, free it too.
TEST(LargestBlock, NoHeldBlockEverServesAnUnpooledRequest) {
  auto dev = std::make_shared<fake_device>();
  pool p(on(dev));
  p.allocate(largest - 1000).release();
  auto a = p.allocate(largest);
  EXPECT_EQ(a.rounded_size(), largest);
  EXPECT_EQ(dev->allocate_calls(), 2u);
  a.release();
  p.set_observer(std::make_shared<counting_observer>());
  p.allocate(largest).release();
  p.stop_holding();
  p.allocate(largest).release();
  EXPECT_EQ(p.held_blocks(), 0u);
  EXPECT_EQ(dev->outstanding_bytes(), 0u);
  EXPECT_TRUE(dev->errors().empty()) << dev->errors().front();
}

TEST(LargestBlock, OutOfMemoryFreesHeldBlocksAndReportsTheExactSize) {
  auto dev = std::make_shared<fake_device>(largest + 4096);
  pool p(on(dev));
  p.allocate(4096).release();  // held
  // Fits only once the held block is freed.
  auto a = p.allocate(largest);
  EXPECT_EQ(p.held_blocks(), 0u);
  EXPECT_EQ(p.statistics().oom_retries, 1u);
  try {
    (void)p.allocate(largest - 10);
    FAIL() << "expected out_of_memory";
  } catch (const out_of_memory& e) {
    EXPECT_EQ(e.report().requested_bytes, largest - 10);
    EXPECT_EQ(e.report().rounded_bytes, largest - 10);
  }
  oom_report report;
  EXPECT_FALSE(p.try_allocate(largest - 20, &report).has_value());
  EXPECT_EQ(report.rounded_bytes, largest - 20);
  a.release();
  const auto b = p.try_allocate(largest - 20);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->rounded_size(), largest - 20);
}

// Threads mixing pooled and unpooled requests across the boundary: every block is freed with the
// size it was made with, and what is held is pooled blocks only.
TEST(LargestBlock, ThreadsMixingBothKindsLoseNothing) {
  auto dev = std::make_shared<fake_device>();
  {
    pool p(on(dev));
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&p, t] {
        for (int i = 0; i < 2000; ++i) {
          const std::uint64_t size = largest - 64 * ((i * 7 + t) % 1200);
          auto a = p.allocate(size);
          auto b = p.allocate(size / 3);
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(dev->outstanding_bytes(), p.held_bytes());
    for (const held_bin_summary& bin : p.held_bins()) EXPECT_LE(bin.block_bytes, largest);
  }
  EXPECT_EQ(dev->outstanding_bytes(), 0u);
  EXPECT_TRUE(dev->errors().empty()) << dev->errors().front();
}

}  // namespace
}  // namespace clpool
