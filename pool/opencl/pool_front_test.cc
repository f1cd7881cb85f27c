// One battery for every OpenCL pool's counters (pool_front): buffer_pool, svm_pool and
// host_pinned_pool each show the core pool's figures under the seeds' names, through allocation,
// release, free_held and stop_holding, on every device.
#include "pool/opencl/pool_front.h"

#include <CL/cl.h>
#include <gtest/gtest.h>

#include <type_traits>

#include "pool/opencl/buffer_pool.h"
#include "pool/opencl/host_pinned_pool.h"
#include "pool/opencl/svm_pool.h"
#include "pool/opencl/testing/cl_test_devices.h"

namespace clpool::opencl {
namespace {

static_assert(std::is_base_of_v<pool_front<immediate_buffer_allocator>, buffer_pool<>>);
static_assert(std::is_base_of_v<pool_front<deferred_buffer_allocator>, buffer_pool<deferred_buffer_allocator>>);
static_assert(std::is_base_of_v<pool_front<svm_allocator>, svm_pool>);
static_assert(std::is_base_of_v<pool_front<host_pinned_allocator>, host_pinned_pool>);

// The forwarders equal the core pool's own figures.
template <class Pool>
void expect_same_as_core(const Pool& pool) {
  const auto& core = pool.pool();
  EXPECT_EQ(pool.held_blocks(), core.held_blocks());
  EXPECT_EQ(pool.active_blocks(), core.active_blocks());
  EXPECT_EQ(pool.held_bytes(), core.held_bytes());
  EXPECT_EQ(pool.active_bytes(), core.active_bytes());
  EXPECT_EQ(pool.managed_bytes(), core.managed_bytes());
}

// The battery: `allocate(pool, size)` returns a block that gives itself back when destroyed.
template <class Pool, class Allocate>
void forwarders_battery(Pool& pool, Allocate allocate) {
  expect_same_as_core(pool);
  EXPECT_EQ(pool.active_blocks(), 0u);
  EXPECT_EQ(pool.managed_bytes(), 0u);
  {
    auto a = allocate(pool, 1 << 20);
    auto b = allocate(pool, 3000);
    expect_same_as_core(pool);
    EXPECT_EQ(pool.active_blocks(), 2u);
    EXPECT_GE(pool.active_bytes(), (1u << 20) + 3000u);
    EXPECT_EQ(pool.held_blocks(), 0u);
  }
  // Released: held for reuse, still managed.
  expect_same_as_core(pool);
  EXPECT_EQ(pool.active_blocks(), 0u);
  EXPECT_EQ(pool.held_blocks(), 2u);
  EXPECT_EQ(pool.managed_bytes(), pool.held_bytes());
  EXPECT_GT(pool.held_bytes(), 0u);
  pool.free_held();
  expect_same_as_core(pool);
  EXPECT_EQ(pool.held_blocks(), 0u);
  EXPECT_EQ(pool.managed_bytes(), 0u);
  pool.stop_holding();
  { auto c = allocate(pool, 4096); }
  expect_same_as_core(pool);
  EXPECT_EQ(pool.held_blocks(), 0u) << "after stop_holding, a released block is freed";
}

class pool_front_test : public testing::device_test {};

TEST_P(pool_front_test, BufferPool) {
  buffer_pool<> pool{immediate_buffer_allocator(queue())};
  forwarders_battery(pool, [&](buffer_pool<>& p, std::uint64_t n) { return p.allocate(n, queue()); });
}

TEST_P(pool_front_test, DeferredBufferPool) {
  buffer_pool<deferred_buffer_allocator> pool{deferred_buffer_allocator(context())};
  forwarders_battery(pool, [](buffer_pool<deferred_buffer_allocator>& p, std::uint64_t n) { return p.allocate(n); });
}

TEST_P(pool_front_test, SvmPool) {
  if (const std::string why = svm_missing(); !why.empty()) GTEST_SKIP() << why;
  svm_pool pool{svm_allocator(context())};
  forwarders_battery(pool, [&](svm_pool& p, std::uint64_t n) { return p.allocate(n, queue()); });
}

TEST_P(pool_front_test, HostPinnedPool) {
  host_pinned_pool pool{host_pinned_allocator(queue())};
  forwarders_battery(pool, [](host_pinned_pool& p, std::uint64_t n) { return p.allocate(n); });
}

CLPOOL_INSTANTIATE_DEVICE_TESTS(pool_front_test);

}  // namespace
}  // namespace clpool::opencl
