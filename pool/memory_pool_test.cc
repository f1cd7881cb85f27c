#include "pool/memory_pool.h"

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pool/testing/fake_allocator.h"

namespace clpool {
namespace {

using testing::fake_allocator;
using testing::fake_device;
using testing::fake_device_error;
using pool = memory_pool<fake_allocator>;

std::shared_ptr<fake_device> device(std::uint64_t capacity = unlimited) {
  return std::make_shared<fake_device>(capacity);
}

TEST(MemoryPool, AllocateReturnsRoundedBlockAndReusesIt) {
  auto dev = device();
  pool p(fake_allocator{dev});
  auto a = p.allocate(1 << 20);
  ASSERT_TRUE(a.has_block());
  EXPECT_EQ(a.size(), 1u << 20);
  EXPECT_EQ(a.rounded_size(), 1'114'111u);
  EXPECT_TRUE(dev->is_outstanding(a.handle()));
  const auto handle = a.handle();
  a.release();
  EXPECT_FALSE(a.has_block());
  EXPECT_EQ(p.held_blocks(), 1u);
  EXPECT_EQ(p.held_bytes(), 1'114'111u);
  // Same bin, different request size: the same block comes back, no allocator call.
  auto b = p.allocate((1 << 20) + 1000);
  EXPECT_EQ(b.handle(), handle);
  EXPECT_EQ(dev->allocate_calls(), 1u);
  EXPECT_EQ(p.statistics().hits, 1u);
  EXPECT_EQ(p.statistics().misses, 1u);
}

TEST(MemoryPool, CountersFollowTheSeeds) {
  auto dev = device();
  pool p(fake_allocator{dev});
  auto a = p.allocate(100);
  auto b = p.allocate(1000);
  EXPECT_EQ(p.active_blocks(), 2u);
  EXPECT_EQ(p.active_bytes(), 1100u);  // requested sizes
  EXPECT_EQ(p.managed_bytes(), rounded_size(100, 4) + rounded_size(1000, 4));
  b.release();
  EXPECT_EQ(p.held_blocks(), 1u);
  EXPECT_EQ(p.held_bytes(), rounded_size(1000, 4));
  EXPECT_EQ(p.active_bytes(), 100u);
  EXPECT_EQ(p.managed_bytes(), dev->outstanding_bytes());
  // CuPy's aliases.
  EXPECT_EQ(p.used_bytes(), rounded_size(100, 4));
  EXPECT_EQ(p.free_bytes(), p.held_bytes());
  EXPECT_EQ(p.total_bytes(), p.used_bytes() + p.free_bytes());
  EXPECT_EQ(p.n_free_blocks(), 1u);
  p.free_all_blocks();
  EXPECT_EQ(p.held_blocks(), 0u);
  EXPECT_EQ(dev->outstanding_bytes(), rounded_size(100, 4));
  EXPECT_TRUE(p.state_is_valid());
}

TEST(MemoryPool, ZeroSizeRequestsHaveNoBlockAndCallNothing) {
  auto dev = device();
  pool p(fake_allocator{dev});
  auto a = p.allocate(0);
  EXPECT_FALSE(a.has_block());
  EXPECT_FALSE(static_cast<bool>(a));
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.id(), 0u);
  a.release();
  EXPECT_EQ(dev->allocate_calls(), 0u);
  EXPECT_EQ(p.active_blocks(), 0u);
  EXPECT_EQ(p.statistics().hits + p.statistics().misses, 0u);
}

TEST(MemoryPool, SecondReleaseIsANoOp) {
  auto dev = device();
  pool p(fake_allocator{dev});
  auto a = p.allocate(64);
  a.release();
  // Nothing of the block stays: no size without a block (the docs say 0).
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.rounded_size(), 0u);
  EXPECT_EQ(a.id(), 0u);
  a.release();
  EXPECT_EQ(p.held_blocks(), 1u);
  EXPECT_EQ(p.active_blocks(), 0u);
  p.free_held();
  EXPECT_TRUE(dev->errors().empty());
  EXPECT_EQ(dev->deallocate_calls(), 1u);
}

// discard(): the block goes to the allocator, never to the pool's holding (a block something
// outside the pool may still use), with the counters and the observer as for a release that
// frees; then nothing: a second discard or a release. It also serves after the pool is gone.
TEST(MemoryPool, DiscardGivesTheBlockToTheAllocatorNotThePool) {
  auto dev = device();
  std::optional<pool> p(std::in_place, fake_allocator{dev});
  auto kept = p->allocate(1000);
  auto a = p->allocate(1000);
  const auto handle = a.handle();
  a.discard();
  EXPECT_FALSE(a.has_block());
  EXPECT_EQ(a.size() + a.rounded_size() + a.id(), 0u);
  EXPECT_FALSE(dev->is_outstanding(handle));
  EXPECT_EQ(p->held_blocks(), 0u);
  EXPECT_EQ(p->active_blocks(), 1u);
  EXPECT_EQ(p->managed_bytes(), kept.rounded_size());
  a.discard();
  a.release();
  EXPECT_EQ(dev->deallocate_calls(), 1u);
  // The next request of the bin gets a new block, not the discarded one.
  auto b = p->allocate(1000);
  EXPECT_EQ(dev->allocate_calls(), 3u);
  b.release();
  EXPECT_EQ(p->held_blocks(), 1u) << "release keeps as before";
  p.reset();
  kept.discard();  // the last allocation: freed, then the state
  EXPECT_EQ(dev->outstanding_blocks(), 0u);
  EXPECT_TRUE(dev->errors().empty());
}

TEST(MemoryPool, MoveTransfersOwnership) {
  auto dev = device();
  pool p(fake_allocator{dev});
  auto a = p.allocate(64);
  const auto id = a.id();
  pool::allocation b = std::move(a);
  EXPECT_FALSE(a.has_block());  // NOLINT(bugprone-use-after-move): moved-from state is defined
  EXPECT_EQ(b.id(), id);
  pool::allocation c = p.allocate(128);
  c = std::move(b);  // releases c's old block
  EXPECT_EQ(p.active_blocks(), 1u);
  EXPECT_EQ(p.held_blocks(), 1u);
  EXPECT_EQ(c.id(), id);
}

TEST(MemoryPool, AllocationsOutliveThePool) {
  auto dev = device();
  std::optional<pool> p(std::in_place, fake_allocator{dev});
  auto a = p->allocate(1000);
  auto b = p->allocate(2000);
  b.release();  // held
  p.reset();    // the held block is freed; `a` keeps the state alive
  EXPECT_EQ(dev->outstanding_blocks(), 1u);
  EXPECT_TRUE(dev->is_outstanding(a.handle()));
  a.release();  // straight back to the allocator, then the state is freed
  EXPECT_EQ(dev->outstanding_bytes(), 0u);
  EXPECT_TRUE(dev->errors().empty());
}

TEST(MemoryPool, StopHoldingFreesHeldAndStopsKeeping) {
  auto dev = device();
  pool p(fake_allocator{dev});
  auto a = p.allocate(100);
  auto b = p.allocate(200);
  a.release();
  p.stop_holding();
  EXPECT_FALSE(p.is_holding());
  EXPECT_EQ(p.held_blocks(), 0u);
  b.release();
  EXPECT_EQ(p.held_blocks(), 0u);
  EXPECT_EQ(dev->outstanding_bytes(), 0u);
}

// A visitor that throws stops the walk; the exception reaches the caller, the lock is released
// and the pool is unchanged and usable (the contract in memory_pool.h).
TEST(MemoryPool, ForEachHeldBinVisitorThatThrowsLeavesThePoolUnchanged) {
  auto dev = device();
  pool p(fake_allocator{dev});
  std::vector<pool::allocation> live;
  for (std::uint64_t size : {100u, 5000u, 1u << 20}) live.push_back(p.allocate(size));
  live.clear();
  const pool_counters before = p.counters();
  int visited = 0;
  EXPECT_THROW(p.for_each_held_bin([&](const held_bin_summary&) {
    ++visited;
    throw std::runtime_error("visitor gives up");
  }),
               std::runtime_error);
  EXPECT_EQ(visited, 1);
  const pool_counters after = p.counters();  // would deadlock if the lock were still held
  EXPECT_EQ(after.held_blocks, before.held_blocks);
  EXPECT_EQ(after.held_bytes, before.held_bytes);
  EXPECT_EQ(p.held_bins().size(), 3u);
  auto again = p.allocate(100);  // a hit: the pool still works
  EXPECT_EQ(p.statistics().hits, 1u);
  EXPECT_TRUE(p.state_is_valid());
}

TEST(MemoryPool, ForEachHeldBinVisitsWhatHeldBinsReturns) {
  auto dev = device();
  pool p(fake_allocator{dev}, pool_options{.leading_bits = 2});
  int calls = 0;
  p.for_each_held_bin([&](const held_bin_summary&) { ++calls; });
  EXPECT_EQ(calls, 0);  // nothing held yet
  std::vector<pool::allocation> live;
  for (std::uint64_t size : {100u, 100u, 100u, 5000u, 7u, 1u << 20})
    live.push_back(p.allocate(size));
  live.clear();  // every block goes back to its bin
  std::vector<held_bin_summary> visited;
  p.for_each_held_bin([&](const held_bin_summary& b) { visited.push_back(b); });
  const std::vector<held_bin_summary> bins = p.held_bins();
  ASSERT_EQ(visited.size(), bins.size());
  ASSERT_EQ(visited.size(), 4u);  // 7, 100 (three blocks), 5000, 1 MiB: smallest first
  for (std::size_t i = 0; i < bins.size(); ++i) {
    EXPECT_EQ(visited[i].bin, bins[i].bin);
    EXPECT_EQ(visited[i].block_bytes, bins[i].block_bytes);
    EXPECT_EQ(visited[i].blocks, bins[i].blocks);
    if (i > 0) {
      EXPECT_LT(visited[i - 1].bin, visited[i].bin);
    }
  }
  EXPECT_EQ(visited[1].blocks, 3u);
  // A throwing visitor stops the walk, releases the lock and leaves the pool usable.
  EXPECT_THROW(p.for_each_held_bin([](const held_bin_summary&) { throw std::runtime_error("x"); }),
               std::runtime_error);
  auto again = p.allocate(100);  // takes the lock again: a hit
  EXPECT_EQ(p.statistics().hits, 1u);
  EXPECT_EQ(p.held_blocks(), 5u);
}

TEST(MemoryPool, InvalidLeadingBitsIsRejected) {
  try {
    pool p(fake_allocator{}, pool_options{.leading_bits = max_leading_bits + 1});
    FAIL() << "expected argument_error";
  } catch (const argument_error& e) {
    EXPECT_NE(std::string(e.what()).find("leading_bits 13 is out of range"), std::string::npos)
        << e.what();
  }
}

TEST(MemoryPool, EveryLeadingBitsValueWorks) {
  for (unsigned lb = 0; lb <= max_leading_bits; ++lb) {
    auto dev = device();
    pool p(fake_allocator{dev}, pool_options{.leading_bits = lb});
    auto a = p.allocate(12345);
    EXPECT_EQ(a.rounded_size(), rounded_size(12345, lb));
    EXPECT_EQ(p.leading_bits(), lb);
  }
}

TEST(MemoryPool, LimitCapsManagedBytesAndFreesHeldFirst) {
  auto dev = device();
  pool p(fake_allocator{dev}, pool_options{.limit_bytes = 10'000});
  auto a = p.allocate(4000);
  auto b = p.allocate(4000);
  b.release();  // 4000-ish held
  // Needs the held block's room: the pool frees it, then allocates.
  auto c = p.allocate(5000);
  EXPECT_EQ(p.held_blocks(), 0u);
  EXPECT_LE(p.managed_bytes(), 10'000u);
  EXPECT_EQ(p.statistics().oom_retries, 1u);
  try {
    auto d = p.allocate(2000);
    FAIL() << "expected out_of_memory";
  } catch (const out_of_memory& e) {
    EXPECT_EQ(e.report().cause, oom_cause::limit);
    EXPECT_EQ(e.report().requested_bytes, 2000u);
    EXPECT_EQ(e.report().rounded_bytes, rounded_size(2000, 4));
    EXPECT_EQ(e.report().limit_bytes, 10'000u);
    EXPECT_EQ(e.report().managed_bytes, p.managed_bytes());
    EXPECT_EQ(e.report().active_bytes, 9000u);
  }
  EXPECT_EQ(p.statistics().ooms_raised, 1u);
  EXPECT_TRUE(p.state_is_valid());
}

TEST(MemoryPool, LimitBelowActiveIsRejectedAndChangesNothing) {
  auto dev = device();
  pool p(fake_allocator{dev}, pool_options{.limit_bytes = 100'000});
  auto a = p.allocate(5000);
  auto b = p.allocate(3000);
  b.release();
  const auto before = p.counters();
  EXPECT_THROW(p.set_limit(4000), argument_error);
  const auto after = p.counters();
  EXPECT_EQ(after.limit_bytes, 100'000u);
  EXPECT_EQ(after.held_blocks, before.held_blocks);
  EXPECT_EQ(after.managed_bytes, before.managed_bytes);
  // A limit between active and managed frees held blocks.
  p.set_limit(rounded_size(5000, 4));
  EXPECT_EQ(p.held_blocks(), 0u);
  EXPECT_EQ(p.limit(), rounded_size(5000, 4));
}

TEST(MemoryPool, OutOfMemoryRetriesAfterFreeingHeld) {
  auto dev = device(10'000);
  pool p(fake_allocator{dev});
  auto a = p.allocate(3000);
  auto b = p.allocate(3000);
  b.release();
  auto c = p.allocate(3500);
  a.release();
  // Device: c (~3.5k) + held a (~3k). A 6000-byte request fits only after a is freed.
  auto d = p.allocate(6000);
  EXPECT_TRUE(d.has_block());
  EXPECT_EQ(p.held_blocks(), 0u);
  EXPECT_GE(p.statistics().oom_retries, 1u);
  EXPECT_EQ(p.managed_bytes(), dev->outstanding_bytes());
}

TEST(MemoryPool, PeakManagedCountsOnlyBlocksThatExist) {
  auto dev = device(100);
  pool p(fake_allocator{dev});
  auto a = p.allocate(60);
  EXPECT_THROW(p.allocate(50), out_of_memory);
  EXPECT_EQ(p.statistics().peak_managed_bytes, dev->peak_bytes());
  EXPECT_EQ(p.statistics().peak_managed_bytes, rounded_size(60, 4));
}

TEST(MemoryPool, OutOfMemoryCarriesTheAllocatorError) {
  auto dev = device(10'000);
  pool p(fake_allocator{dev});
  auto a = p.allocate(6000);
  try {
    auto b = p.allocate(6000);
    FAIL() << "expected out_of_memory";
  } catch (const out_of_memory& e) {
    const oom_report& r = e.report();
    EXPECT_EQ(r.cause, oom_cause::allocator);
    EXPECT_EQ(r.allocator_status, testing::fake_oom_status);
    EXPECT_NE(r.allocator_message.find("bytes requested"), std::string::npos);
    EXPECT_EQ(r.requested_bytes, 6000u);
    EXPECT_EQ(r.rounded_bytes, rounded_size(6000, 4));
    EXPECT_EQ(r.active_bytes, 6000u);
    EXPECT_EQ(r.held_bytes, 0u);
    EXPECT_EQ(r.limit_bytes, unlimited);
    EXPECT_NE(std::string(e.what()).find("request of 6000 bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(p.active_blocks(), 1u);
  EXPECT_EQ(p.managed_bytes(), dev->outstanding_bytes());
}

TEST(MemoryPool, ReclaimCallbacksRunInOrderAndCanRescue) {
  auto dev = device(10'000);
  pool p(fake_allocator{dev});
  std::optional<pool::allocation> cache = p.allocate(7000);
  std::vector<std::string> calls;
  p.add_reclaim_callback(
      [&](std::uint64_t needed) { calls.push_back("first:" + std::to_string(needed)); });
  p.add_reclaim_callback([&](std::uint64_t) {
    calls.push_back("second");
    cache.reset();  // like a garbage collector dropping a cached array
  });
  p.add_reclaim_callback([&](std::uint64_t) { calls.push_back("third"); });
  auto b = p.allocate(6000);
  EXPECT_TRUE(b.has_block());
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], "first:" + std::to_string(rounded_size(6000, 4)));
  EXPECT_EQ(calls[1], "second");
  EXPECT_EQ(p.statistics().reclaim_calls, 2u);
}

TEST(MemoryPool, ReclaimCallbackRemovalAndEmptyCallback) {
  pool p(fake_allocator{device(100)});
  int calls = 0;
  const auto id = p.add_reclaim_callback([&](std::uint64_t) { ++calls; });
  EXPECT_TRUE(p.remove_reclaim_callback(id));
  EXPECT_FALSE(p.remove_reclaim_callback(id));
  EXPECT_THROW(p.allocate(1000), out_of_memory);
  EXPECT_EQ(calls, 0);
  EXPECT_THROW(p.add_reclaim_callback(reclaim_callback{}), argument_error);
}

TEST(MemoryPool, OtherAllocatorErrorsPropagateUnchanged) {
  auto dev = device();
  pool p(fake_allocator{dev});
  auto a = p.allocate(100);
  a.release();
  dev->fail_next_allocations(1);
  EXPECT_THROW(p.allocate(5000), fake_device_error);
  // No retry: the held block is still there, and nothing is counted as active.
  EXPECT_EQ(p.held_blocks(), 1u);
  EXPECT_EQ(p.active_blocks(), 0u);
  EXPECT_EQ(p.managed_bytes(), dev->outstanding_bytes());
  EXPECT_EQ(p.statistics().oom_retries, 0u);
  auto b = p.allocate(5000);  // works again
  EXPECT_TRUE(b.has_block());
}

TEST(MemoryPool, AccountingOverflowIsRejected) {
  auto dev = device();
  pool p(fake_allocator{dev});
  auto huge = p.allocate(std::uint64_t{1} << 63);
  EXPECT_EQ(huge.rounded_size(), rounded_size(std::uint64_t{1} << 63, 4));
  const auto before = p.counters();
  try {
    p.allocate(std::uint64_t{1} << 63);
    FAIL() << "expected argument_error";
  } catch (const argument_error& e) {
    EXPECT_NE(std::string(e.what()).find("live blocks overflows 64-bit accounting"),
              std::string::npos)
        << e.what();
  }
  const auto after = p.counters();
  EXPECT_EQ(after.managed_bytes, before.managed_bytes);
  EXPECT_EQ(after.active_blocks, 1u);
}

// Found by pool_ops_fuzzer: held + request overflowing 64 bits must free held blocks, not refuse.
TEST(MemoryPool, HeldBytesThatWouldOverflowAreFreedNotRefused) {
  auto dev = device();
  pool p(fake_allocator{dev});
  const std::uint64_t first = std::uint64_t{1} << 63;
  p.allocate(first).release();
  const std::uint64_t second = (std::uint64_t{1} << 63) + (std::uint64_t{1} << 60);
  ASSERT_GT(rounded_size(second, 4), unlimited - p.held_bytes());
  auto a = p.allocate(second);
  EXPECT_EQ(a.size(), second);
  EXPECT_EQ(p.held_bytes(), 0u);
  EXPECT_EQ(p.managed_bytes(), dev->outstanding_bytes());
}

TEST(MemoryPool, TrimPolicyBoundsHeldBytes) {
  auto dev = device();
  pool p(fake_allocator{dev}, pool_options{.trim = trim_policy{.max_held_bytes = 10'000}});
  std::vector<pool::allocation> blocks;
  for (int i = 0; i < 10; ++i) blocks.push_back(p.allocate(3000));
  blocks.clear();
  EXPECT_LE(p.held_bytes(), 10'000u);
  EXPECT_EQ(p.statistics().blocks_trimmed, 10u - p.held_blocks());
  EXPECT_EQ(p.managed_bytes(), dev->outstanding_bytes());
}

TEST(MemoryPool, TrimPolicyRatio) {
  auto dev = device();
  pool p(fake_allocator{dev});
  p.set_trim_policy(trim_policy{.max_held_to_active_ratio = 0.5});
  auto keep = p.allocate(10'000);
  std::vector<pool::allocation> blocks;
  for (int i = 0; i < 10; ++i) blocks.push_back(p.allocate(1000));
  blocks.clear();
  EXPECT_LE(p.held_bytes(), 5'000u);
  keep.release();
  EXPECT_EQ(p.held_bytes(), 0u);
  EXPECT_THROW(p.set_trim_policy(trim_policy{.max_held_to_active_ratio =
                                                 std::numeric_limits<double>::quiet_NaN()}),
               argument_error);
  EXPECT_EQ(p.get_trim_policy().max_held_to_active_ratio, 0.5);
}

// The trim check proves "within budget" with a fixed-point lower bound of ratio * active before
// the exact rule (held <= floor(ratio * active), the product in long double). At the boundary
// the exact rule must decide, both when a policy is set and on the release path.
TEST(MemoryPool, TrimRatioBoundaryIsExact) {
  struct boundary_case {
    double ratio;
    std::uint64_t active;  // requested bytes kept live
    std::uint64_t held;    // blocks of 15 bytes (exact with leading_bits 4) held before
  };
  for (const boundary_case c :
       {boundary_case{1.0, 30, 2}, boundary_case{1.0, 29, 2}, boundary_case{0.5, 30, 1},
        boundary_case{1.0 / 3.0, 45, 1}, boundary_case{1e-9, 15'000'000'000, 1},
        boundary_case{1e9, 1, 64}, boundary_case{0.0, 1, 1}}) {
    SCOPED_TRACE("ratio " + std::to_string(c.ratio) + " active " + std::to_string(c.active));
    auto dev = device();
    pool p(fake_allocator{dev});
    auto keep = p.allocate(c.active);
    std::vector<pool::allocation> blocks;
    for (std::uint64_t i = 0; i < c.held; ++i) blocks.push_back(p.allocate(15));
    blocks.clear();
    ASSERT_EQ(p.held_bytes(), 15 * c.held);
    const std::uint64_t budget =
        static_cast<std::uint64_t>(static_cast<long double>(c.ratio) * c.active);
    std::uint64_t expect_held = 15 * c.held;
    while (expect_held > budget) expect_held -= 15;
    p.set_trim_policy(trim_policy{.max_held_to_active_ratio = c.ratio});
    EXPECT_EQ(p.held_bytes(), expect_held);
    EXPECT_EQ(p.statistics().blocks_trimmed, (15 * c.held - expect_held) / 15);
    // The release path: take a held block and give it back; held returns to the same figure
    // with the same active bytes, so nothing more is trimmed.
    if (expect_held != 0) {
      const std::uint64_t trimmed = p.statistics().blocks_trimmed;
      p.allocate(15).release();
      EXPECT_EQ(p.held_bytes(), expect_held);
      EXPECT_EQ(p.statistics().blocks_trimmed, trimmed);
    }
  }
}

TEST(MemoryPool, ExplicitTrimFreesLargestFirst) {
  auto dev = device();
  pool p(fake_allocator{dev});
  {
    auto a = p.allocate(100);
    auto b = p.allocate(100'000);
    auto c = p.allocate(1000);
  }
  EXPECT_EQ(p.held_blocks(), 3u);
  const std::uint64_t freed = p.trim(5000);
  EXPECT_EQ(freed, rounded_size(100'000, 4));
  EXPECT_EQ(p.held_blocks(), 2u);
  EXPECT_EQ(p.trim(0), rounded_size(100, 4) + rounded_size(1000, 4));
}

class recording_observer : public pool_observer {
 public:
  void on_event(const pool_event& e) noexcept override { events.push_back(e); }
  std::vector<pool_event> events;
};

TEST(MemoryPool, ObserverSeesEventsInOrder) {
  auto dev = device(5000);
  pool p(fake_allocator{dev});
  auto obs = std::make_shared<recording_observer>();
  p.set_observer(obs);
  auto a = p.allocate(3000);
  a.release();
  auto b = p.allocate(3000);
  EXPECT_THROW(p.allocate(3000), out_of_memory);
  b.release();
  p.free_held();
  p.set_observer(nullptr);
  std::vector<std::string> kinds;
  for (const auto& e : obs->events) kinds.push_back(to_string(e.kind));
  const std::vector<std::string> expected = {
      "allocator_allocate", "miss",    "release",        "hit",      "allocator_failed",
      "out_of_memory",      "release", "allocator_free", "free_held"};
  EXPECT_EQ(kinds, expected);
  EXPECT_EQ(obs->events[1].allocation_id, obs->events[3].allocation_id - 1);
  EXPECT_EQ(obs->events[1].counters.active_bytes, 3000u);
  EXPECT_EQ(obs->events.back().counters.managed_bytes, 0u);
}

}  // namespace
}  // namespace clpool
