// Out-of-memory through every path: the two forms of the allocator seam (allocator.h: throwing
// allocator_out_of_memory, or try_allocate returning false) times the two pool entry points
// (allocate() throwing out_of_memory, try_allocate() returning std::nullopt). Each test runs over
// all four combinations and asserts the same outcome, counters, report and events.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pool/memory_pool.h"
#include "pool/testing/fake_allocator.h"

namespace clpool {
namespace {

using testing::fake_device;
using testing::fake_device_error;

// One combination: the allocator type and the pool entry point.
template <class Allocator, bool kByValue>
struct path {
  using allocator = Allocator;
  using pool = memory_pool<Allocator>;
  static constexpr bool pool_reports_by_value = kByValue;

  // Requests `size`; returns the allocation, or nothing with `report` filled on out-of-memory.
  static std::optional<typename pool::allocation> request(pool& p, std::uint64_t size,
                                                          oom_report& report) {
    if constexpr (kByValue) {
      return p.try_allocate(size, &report);
    } else {
      try {
        return p.allocate(size);
      } catch (const out_of_memory& e) {
        report = e.report();
        return std::nullopt;
      }
    }
  }
};

using paths =
    ::testing::Types<path<testing::fake_allocator, false>, path<testing::fake_allocator, true>,
                     path<testing::throwing_fake_allocator, false>,
                     path<testing::throwing_fake_allocator, true>>;

static_assert(allocator_reports_oom_by_value<testing::fake_allocator>);
static_assert(!allocator_reports_oom_by_value<testing::throwing_fake_allocator>);
static_assert(block_allocator<testing::throwing_fake_allocator>);

template <class P>
class OutOfMemory : public ::testing::Test {
 protected:
  using pool = typename P::pool;
  std::shared_ptr<fake_device> dev = std::make_shared<fake_device>(10'000);
  pool p{typename P::allocator{dev}};
  oom_report report;

  std::optional<typename pool::allocation> request(std::uint64_t size) {
    return P::request(p, size, report);
  }
};
TYPED_TEST_SUITE(OutOfMemory, paths);

TYPED_TEST(OutOfMemory, RetriesAfterFreeingHeldAndSucceeds) {
  auto a = this->p.allocate(3000);
  this->p.allocate(3000).release();  // held
  auto c = this->p.allocate(3500);
  a.release();
  // Device: c (~3.5k) + two held (~3k each). 6000 bytes fit only after both are freed.
  auto d = this->request(6000);
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->has_block());
  EXPECT_EQ(d->size(), 6000u);
  EXPECT_EQ(this->p.held_blocks(), 0u);
  const pool_statistics s = this->p.statistics();
  // The allocator's shortfall is the whole request, so step 0 frees both held blocks at once.
  EXPECT_EQ(s.oom_retries, 1u);
  EXPECT_EQ(s.allocator_failures, 1u);
  EXPECT_EQ(s.ooms_raised, 0u);
  EXPECT_EQ(this->p.managed_bytes(), this->dev->outstanding_bytes());
  EXPECT_TRUE(this->p.state_is_valid());
}

TYPED_TEST(OutOfMemory, FailureCarriesTheAllocatorsReportAndChangesNothingElse) {
  auto a = this->p.allocate(6000);
  this->p.allocate(100).release();  // held, freed by the retries
  const pool_counters before = this->p.counters();
  auto b = this->request(6000);
  EXPECT_FALSE(b.has_value());
  const oom_report& r = this->report;
  EXPECT_EQ(r.cause, oom_cause::allocator);
  EXPECT_EQ(r.allocator_status, testing::fake_oom_status);
  EXPECT_NE(r.allocator_message.find("bytes requested"), std::string::npos) << r.allocator_message;
  EXPECT_EQ(r.requested_bytes, 6000u);
  EXPECT_EQ(r.rounded_bytes, rounded_size(6000, default_leading_bits));
  EXPECT_EQ(r.active_bytes, 6000u);
  EXPECT_EQ(r.held_bytes, 0u);
  EXPECT_EQ(r.managed_bytes, rounded_size(6000, default_leading_bits));
  EXPECT_EQ(r.limit_bytes, unlimited);
  const pool_counters after = this->p.counters();
  EXPECT_EQ(after.active_blocks, before.active_blocks);
  EXPECT_EQ(after.active_bytes, before.active_bytes);
  EXPECT_EQ(after.held_blocks, 0u);
  const pool_statistics s = this->p.statistics();
  EXPECT_EQ(s.ooms_raised, 1u);
  EXPECT_EQ(s.allocator_failures, 2u);  // before and after freeing the held block
  EXPECT_EQ(this->p.managed_bytes(), this->dev->outstanding_bytes());
  EXPECT_TRUE(this->p.state_is_valid());
  auto c = this->request(1000);  // and the pool still works
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->has_block());
}

TYPED_TEST(OutOfMemory, TheLimitAsCause) {
  this->p.set_limit(5000);
  auto a = this->p.allocate(3000);
  EXPECT_FALSE(this->request(3000).has_value());
  EXPECT_EQ(this->report.cause, oom_cause::limit);
  EXPECT_EQ(this->report.limit_bytes, 5000u);
  EXPECT_EQ(this->p.statistics().allocator_failures, 0u);  // the allocator was never asked
  EXPECT_EQ(this->p.statistics().ooms_raised, 1u);
}

TYPED_TEST(OutOfMemory, ReclaimCallbacksRunBeforeGivingUp) {
  std::optional<typename TestFixture::pool::allocation> cache = this->p.allocate(7000);
  int calls = 0;
  this->p.add_reclaim_callback([&](std::uint64_t) {
    ++calls;
    cache.reset();
  });
  auto b = this->request(6000);
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(b->has_block());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(this->p.statistics().reclaim_calls, 1u);
}

TYPED_TEST(OutOfMemory, OtherAllocatorErrorsPropagateUnchanged) {
  this->p.allocate(100).release();
  this->dev->fail_next_allocations(1);
  EXPECT_THROW(this->request(5000), fake_device_error);
  EXPECT_EQ(this->p.held_blocks(), 1u);  // no retry, nothing freed
  EXPECT_EQ(this->p.statistics().oom_retries, 0u);
  EXPECT_EQ(this->p.statistics().ooms_raised, 0u);
  EXPECT_EQ(this->p.managed_bytes(), this->dev->outstanding_bytes());
  auto b = this->request(5000);  // the reservation was returned: the limit math is unchanged
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(b->has_block());
}

TYPED_TEST(OutOfMemory, AccountingOverflowIsStillAnArgumentError) {
  auto dev = std::make_shared<fake_device>();
  typename TestFixture::pool big{typename TypeParam::allocator{dev}};
  auto huge = big.allocate(std::uint64_t{1} << 63);
  oom_report report;
  EXPECT_THROW(TypeParam::request(big, std::uint64_t{1} << 63, report), argument_error);
  EXPECT_EQ(big.active_blocks(), 1u);
  EXPECT_EQ(big.statistics().ooms_raised, 0u);
}

TYPED_TEST(OutOfMemory, ZeroBytesAndHitsBehaveAsAllocate) {
  auto zero = this->request(0);
  ASSERT_TRUE(zero.has_value());
  EXPECT_FALSE(zero->has_block());
  this->p.allocate(4000).release();
  auto hit = this->request(4000);
  ASSERT_TRUE(hit.has_value());
  EXPECT_TRUE(hit->has_block());
  EXPECT_EQ(this->p.held_blocks(), 0u);
  EXPECT_EQ(this->p.statistics().hits, 1u);
  EXPECT_EQ(this->dev->allocate_calls(), 1u);
}

class recording_observer : public pool_observer {
 public:
  void on_event(const pool_event& e) noexcept override { kinds.push_back(to_string(e.kind)); }
  std::vector<std::string> kinds;
};

TYPED_TEST(OutOfMemory, ObserverSeesTheSameEvents) {
  auto obs = std::make_shared<recording_observer>();
  this->p.set_observer(obs);
  auto a = this->p.allocate(6000);
  EXPECT_FALSE(this->request(6000).has_value());
  this->p.set_observer(nullptr);
  const std::vector<std::string> expected = {"allocator_allocate", "miss", "allocator_failed",
                                             "out_of_memory"};
  EXPECT_EQ(obs->kinds, expected);
}

// The retry steps announce themselves the same way on every path: a held block freed for the
// shortfall, then a reclaim callback that frees nothing, then the failure.
TYPED_TEST(OutOfMemory, ObserverSeesTheSameRetryEvents) {
  auto a = this->p.allocate(6000);
  this->p.allocate(100).release();  // held: freed by the first retry step
  this->p.add_reclaim_callback([](std::uint64_t) {});
  auto obs = std::make_shared<recording_observer>();
  this->p.set_observer(obs);
  EXPECT_FALSE(this->request(6000).has_value());
  this->p.set_observer(nullptr);
  const std::vector<std::string> expected = {
      "allocator_failed", "allocator_free", "oom_retry",  // step 0: free the held block
      "allocator_failed", "reclaim",        "oom_retry",  // step 2: the callback (step 1 skipped)
      "allocator_failed", "out_of_memory"};               // step 3 frees nothing: give up
  EXPECT_EQ(obs->kinds, expected);
  const pool_statistics s = this->p.statistics();
  EXPECT_EQ(s.oom_retries, 2u);
  EXPECT_EQ(s.reclaim_calls, 1u);
  EXPECT_EQ(s.allocator_failures, 3u);
  EXPECT_EQ(s.ooms_raised, 1u);
}

// An allocator with try_allocate that throws allocator_out_of_memory anyway (through a helper
// that throws, say) is still refused, retried and reported, not passed on as some other error.
struct by_value_allocator_that_throws {
  using handle_type = std::uint64_t;
  std::shared_ptr<fake_device> device;
  handle_type allocate(std::uint64_t bytes) { return device->allocate(bytes); }
  bool try_allocate(std::uint64_t bytes, handle_type& out, allocator_refusal&) {
    out = device->allocate(bytes);  // throws allocator_out_of_memory when full
    return true;
  }
  void deallocate(handle_type h, std::uint64_t bytes) noexcept { device->deallocate(h, bytes); }
};
static_assert(allocator_reports_oom_by_value<by_value_allocator_that_throws>);

TEST(TryAllocate, AllocatorOutOfMemoryThrownFromTryAllocateIsARefusal) {
  auto dev = std::make_shared<fake_device>(10'000);
  memory_pool<by_value_allocator_that_throws> p{by_value_allocator_that_throws{dev}};
  auto a = p.allocate(6000);
  p.allocate(3000).release();  // held
  auto b = p.allocate(3500);   // fits only once the held block is freed: a retry, not an error
  EXPECT_TRUE(b.has_block());
  EXPECT_EQ(p.statistics().oom_retries, 1u);
  oom_report report;
  EXPECT_FALSE(p.try_allocate(6000, &report).has_value());
  EXPECT_EQ(report.allocator_status, testing::fake_oom_status);
  EXPECT_NE(report.allocator_message.find("bytes requested"), std::string::npos);
  EXPECT_THROW(p.allocate(6000), out_of_memory);
  EXPECT_EQ(p.managed_bytes(), dev->outstanding_bytes());
}

// try_allocate without a report: the same outcome, nothing to fill.
TEST(TryAllocate, ReportIsOptional) {
  auto dev = std::make_shared<fake_device>(100);
  memory_pool<testing::fake_allocator> p{testing::fake_allocator{dev}};
  EXPECT_FALSE(p.try_allocate(1000).has_value());
  EXPECT_EQ(p.statistics().ooms_raised, 1u);
  auto fits = p.try_allocate(50);
  ASSERT_TRUE(fits.has_value());
  EXPECT_TRUE(fits->has_block());
}

}  // namespace
}  // namespace clpool
