// A short demonstration of the pool on a simulated 256 MiB device: reuse, the retry after freeing
// held memory, reclaim callbacks, and the out-of-memory report when nothing helps.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "pool/memory_pool.h"
#include "pool/testing/fake_allocator.h"

namespace {

using clpool::memory_pool;
using clpool::testing::fake_allocator;
using clpool::testing::fake_device;
using pool_t = memory_pool<fake_allocator>;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

void print_counters(const char* when, const pool_t& pool, const fake_device& device) {
  const clpool::pool_counters c = pool.counters();
  std::printf(
      "  %-34s active %4llu blocks %7.1f MiB | held %3llu blocks %7.1f MiB | "
      "managed %6.1f MiB | device %6.1f MiB\n",
      when, static_cast<unsigned long long>(c.active_blocks), c.active_bytes / double(kMiB),
      static_cast<unsigned long long>(c.held_blocks), c.held_bytes / double(kMiB),
      c.managed_bytes / double(kMiB), device.outstanding_bytes() / double(kMiB));
}

}  // namespace

int main() {
  auto device = std::make_shared<fake_device>(256 * kMiB);
  pool_t pool(fake_allocator{device});
  std::printf("clpool demo: a memory_pool over a simulated 256 MiB device (leading_bits %u)\n\n",
              pool.leading_bits());

  std::printf("1. Reuse: 1000 rounds of allocate/free of 64 x 1 MiB temporaries\n");
  for (int round = 0; round < 1000; ++round) {
    std::vector<pool_t::allocation> temporaries;
    for (int i = 0; i < 64; ++i) temporaries.push_back(pool.allocate(kMiB));
  }
  const clpool::pool_statistics s = pool.statistics();
  std::printf("  %llu requests, %llu device allocations, hit rate %.2f%%\n",
              static_cast<unsigned long long>(s.hits + s.misses),
              static_cast<unsigned long long>(s.allocator_allocations),
              100.0 * s.hits / double(s.hits + s.misses));
  std::printf("  a 1 MiB request is rounded to %llu bytes\n",
              static_cast<unsigned long long>(clpool::rounded_size(kMiB, pool.leading_bits())));
  print_counters("after the rounds:", pool, *device);

  std::printf("\n2. Out-of-memory rescued by freeing held memory\n");
  auto big = pool.allocate(200 * kMiB);  // needs the 64+ MiB the pool holds in 1 MiB blocks
  print_counters("after a 200 MiB request:", pool, *device);
  std::printf("  retries after freeing held memory: %llu\n",
              static_cast<unsigned long long>(pool.statistics().oom_retries));

  std::printf("\n3. Out-of-memory rescued by a reclaim callback\n");
  std::vector<pool_t::allocation> cache;
  for (int i = 0; i < 4; ++i) cache.push_back(pool.allocate(8 * kMiB));
  pool.add_reclaim_callback([&](std::uint64_t needed) {
    std::printf("  reclaim callback: %.1f MiB needed, dropping a cache of %zu blocks\n",
                needed / double(kMiB), cache.size());
    cache.clear();
  });
  auto more = pool.allocate(40 * kMiB);
  print_counters("after a 40 MiB request:", pool, *device);

  std::printf("\n4. Out-of-memory nothing can rescue\n");
  try {
    auto too_big = pool.allocate(100 * kMiB);
  } catch (const clpool::out_of_memory& e) {
    std::printf("  clpool::out_of_memory: %s\n", e.what());
  }
  return 0;
}
