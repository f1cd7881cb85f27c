// Out-of-memory handling: the retry-after-free_held guarantee, reclaim callback order, and the
// figures carried by out_of_memory, on a capacity-limited fake device. Every property runs over
// both forms of the allocator seam (pool/allocator.h): fake_allocator reports out-of-memory by
// value, throwing_fake_allocator by throwing allocator_out_of_memory.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "pool/memory_pool.h"
#include "pool/testing/fake_allocator.h"
#include "tests/generators.h"

namespace clpool {
namespace {

using testing::fake_allocator;
using testing::fake_device;
using testing::throwing_fake_allocator;

// Builds an arbitrary pool state: some live allocations, some held blocks in assorted bins.
template <class Pool>
std::vector<typename Pool::allocation> random_state(Pool& pool, std::uint64_t capacity) {
  std::vector<typename Pool::allocation> live;
  const auto steps = *testgen::uniform(0, 40);
  for (int i = 0; i < steps; ++i) {
    if (!live.empty() && *testgen::uniform(0, 3) == 0) {
      const auto pick = *testgen::uniform<std::size_t>(0, live.size());
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(pick));  // released into held
    } else {
      try {
        auto a = pool.allocate(*testgen::request_size(capacity / 4));
        if (a.has_block()) live.push_back(std::move(a));
      } catch (const out_of_memory&) {
      }
    }
  }
  return live;
}

template <class Allocator>
void request_that_fits_without_held_memory_succeeds() {
  const std::uint64_t capacity = *testgen::uniform<std::uint64_t>(1 << 10, 1 << 24);
  const unsigned lb = *testgen::leading_bits();
  auto device = std::make_shared<fake_device>(capacity);
  memory_pool<Allocator> pool(Allocator{device}, pool_options{.leading_bits = lb});
  auto live = random_state(pool, capacity);
  const pool_counters before = pool.counters();
  const std::uint64_t size = *testgen::request_size(capacity);
  RC_PRE(size > 0);
  const std::uint64_t rounded = rounded_size(size, lb);
  const bool fits = before.active_rounded_bytes + rounded <= capacity;
  try {
    auto a = pool.allocate(size);
    RC_ASSERT(fits);
    RC_ASSERT(a.rounded_size() == rounded);
  } catch (const out_of_memory& e) {
    RC_ASSERT(!fits);
    const oom_report& r = e.report();
    RC_ASSERT(r.cause == oom_cause::allocator);
    RC_ASSERT(r.requested_bytes == size);
    RC_ASSERT(r.rounded_bytes == rounded);
    RC_ASSERT(r.active_bytes == before.active_bytes);
    RC_ASSERT(r.active_rounded_bytes == before.active_rounded_bytes);
    RC_ASSERT(r.held_bytes == 0u);
    RC_ASSERT(r.managed_bytes == before.active_rounded_bytes);
    RC_ASSERT(r.allocator_status == testing::fake_oom_status);
  }
  RC_ASSERT(pool.managed_bytes() == device->outstanding_bytes());
  RC_ASSERT(pool.state_is_valid());
}

template <class Allocator>
void limit_behaves_like_a_smaller_device() {
  const std::uint64_t limit = *testgen::uniform<std::uint64_t>(1 << 10, 1 << 20);
  auto device = std::make_shared<fake_device>(unlimited);
  memory_pool<Allocator> pool(Allocator{device}, pool_options{.limit_bytes = limit});
  auto live = random_state(pool, limit);
  const pool_counters before = pool.counters();
  const std::uint64_t size = *testgen::request_size(limit);
  RC_PRE(size > 0);
  const bool fits = before.active_rounded_bytes + rounded_size(size, 4) <= limit;
  try {
    auto a = pool.allocate(size);
    RC_ASSERT(fits);
  } catch (const out_of_memory& e) {
    RC_ASSERT(!fits);
    RC_ASSERT(e.report().cause == oom_cause::limit);
    RC_ASSERT(e.report().limit_bytes == limit);
  }
  RC_ASSERT(pool.managed_bytes() <= limit);
}

template <class Allocator>
void reclaim_callbacks_run_in_order_until_one_helps() {
  const std::uint64_t capacity = 1 << 20;
  auto device = std::make_shared<fake_device>(capacity);
  memory_pool<Allocator> pool(Allocator{device});
  // Fill the device with live blocks that callbacks may drop.
  std::vector<typename memory_pool<Allocator>::allocation> live;
  for (;;) {
    try {
      live.push_back(pool.allocate(capacity / 8));
    } catch (const out_of_memory&) {
      break;
    }
  }
  const int callbacks = *testgen::uniform(1, 6);
  const int helper = *testgen::uniform(0, callbacks + 1);  // == callbacks: none helps
  std::vector<int> order;
  for (int i = 0; i < callbacks; ++i) {
    pool.add_reclaim_callback([&, i](std::uint64_t needed) {
      RC_ASSERT(needed == rounded_size(capacity / 4, 4));
      order.push_back(i);
      if (i == helper) live.clear();
    });
  }
  try {
    auto a = pool.allocate(capacity / 4);
    RC_ASSERT(helper < callbacks);
    RC_ASSERT(order.size() == static_cast<std::size_t>(helper + 1));
  } catch (const out_of_memory& e) {
    RC_ASSERT(helper == callbacks);
    RC_ASSERT(order.size() == static_cast<std::size_t>(callbacks));
  }
  for (std::size_t i = 0; i < order.size(); ++i) RC_ASSERT(order[i] == static_cast<int>(i));
  RC_ASSERT(pool.statistics().reclaim_calls == order.size());
}

RC_GTEST_PROP(PoolOom, RequestThatFitsWithoutHeldMemorySucceeds, ()) {
  request_that_fits_without_held_memory_succeeds<fake_allocator>();
}
RC_GTEST_PROP(PoolOom, RequestThatFitsWithoutHeldMemorySucceedsThrowingAllocator, ()) {
  request_that_fits_without_held_memory_succeeds<throwing_fake_allocator>();
}
RC_GTEST_PROP(PoolOom, LimitBehavesLikeASmallerDevice, ()) {
  limit_behaves_like_a_smaller_device<fake_allocator>();
}
RC_GTEST_PROP(PoolOom, LimitBehavesLikeASmallerDeviceThrowingAllocator, ()) {
  limit_behaves_like_a_smaller_device<throwing_fake_allocator>();
}
RC_GTEST_PROP(PoolOom, ReclaimCallbacksRunInOrderUntilOneHelps, ()) {
  reclaim_callbacks_run_in_order_until_one_helps<fake_allocator>();
}
RC_GTEST_PROP(PoolOom, ReclaimCallbacksRunInOrderUntilOneHelpsThrowingAllocator, ()) {
  reclaim_callbacks_run_in_order_until_one_helps<throwing_fake_allocator>();
}

}  // namespace
}  // namespace clpool
