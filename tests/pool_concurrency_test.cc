// Many threads allocating, releasing (also each other's blocks), freeing held memory and changing
// limits at once. At quiescence every counter must be exact and nothing may leak. Run under
// --config=tsan as well (the README's test command does).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "pool/memory_pool.h"
#include "pool/testing/fake_allocator.h"

namespace clpool {
namespace {

using testing::fake_allocator;
using testing::fake_device;
using pool_t = memory_pool<fake_allocator>;

TEST(PoolConcurrency, HammerKeepsCountersExact) {
  constexpr int kThreads = 6;
  constexpr int kOpsPerThread = 4000;
  auto device = std::make_shared<fake_device>(std::uint64_t{64} << 20);
  auto pool = std::make_unique<pool_t>(fake_allocator{device});
  pool->set_trim_policy(trim_policy{.max_held_bytes = 16 << 20});

  // A shared bin of allocations, so blocks are released by threads other than their allocator.
  std::mutex shared_mutex;
  std::vector<pool_t::allocation> shared;
  std::atomic<std::uint64_t> ooms{0};

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(1234 + t);
      std::vector<pool_t::allocation> mine;
      for (int i = 0; i < kOpsPerThread; ++i) {
        const unsigned op = rng() % 100;
        if (op < 50) {
          const std::uint64_t size = 1 + (rng() % (std::uint64_t{1} << (rng() % 20)));
          try {
            mine.push_back(pool->allocate(size));
          } catch (const out_of_memory&) {
            ooms.fetch_add(1, std::memory_order_relaxed);
          }
        } else if (op < 85) {
          if (!mine.empty()) {
            const std::size_t pick = rng() % mine.size();
            mine[pick] = std::move(mine.back());
            mine.pop_back();
          }
        } else if (op < 95) {
          std::lock_guard<std::mutex> guard(shared_mutex);
          if (!mine.empty() && (rng() & 1)) {
            shared.push_back(std::move(mine.back()));
            mine.pop_back();
          } else if (!shared.empty()) {
            mine.push_back(std::move(shared.back()));
            shared.pop_back();
          }
        } else if (op < 97) {
          pool->free_held();
        } else if (op < 99) {
          pool->trim(rng() % (std::uint64_t{8} << 20));
        } else {
          (void)pool->counters();
          (void)pool->statistics();
        }
      }
    });
  }
  for (auto& th : threads) th.join();

  // Quiescent: counters are exact.
  pool_counters c = pool->counters();
  std::uint64_t active_bytes = 0;
  std::uint64_t active_blocks = 0;
  std::uint64_t active_rounded = 0;
  for (const auto& a : shared) {
    active_bytes += a.size();
    active_rounded += a.rounded_size();
    ++active_blocks;
  }
  EXPECT_EQ(c.active_blocks, active_blocks);
  EXPECT_EQ(c.active_bytes, active_bytes);
  EXPECT_EQ(c.active_rounded_bytes, active_rounded);
  EXPECT_EQ(c.managed_bytes, device->outstanding_bytes());
  EXPECT_TRUE(pool->state_is_valid());
  const pool_statistics s = pool->statistics();
  EXPECT_EQ(s.ooms_raised, ooms.load());
  EXPECT_EQ(s.allocator_allocations - s.allocator_frees, device->outstanding_blocks());

  // Release the survivors after the pool is gone: the state must outlive it, then vanish.
  pool.reset();
  shared.clear();
  EXPECT_EQ(device->outstanding_bytes(), 0u);
  EXPECT_TRUE(device->errors().empty());
}

TEST(PoolConcurrency, HitPathFromManyThreadsReusesBlocks) {
  auto device = std::make_shared<fake_device>();
  pool_t pool(fake_allocator{device});
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        auto a = pool.allocate(4096);
        ASSERT_TRUE(a.has_block());
      }
    });
  }
  for (auto& th : threads) th.join();
  // At most one block per thread was ever needed at once.
  EXPECT_LE(device->allocate_calls(), static_cast<std::uint64_t>(kThreads));
  EXPECT_EQ(pool.statistics().hits + pool.statistics().misses, 20000u * kThreads);
  EXPECT_EQ(pool.held_blocks(), device->outstanding_blocks());
}

}  // namespace
}  // namespace clpool
