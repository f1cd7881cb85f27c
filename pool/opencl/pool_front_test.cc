// One battery for every OpenCL pool's counters (pool_front): buffer_pool, svm_pool and
// host_pinned_pool each report what their requests made (active, held and managed blocks and
// bytes under the seeds' names), through allocation, release, a hit, free_held and stop_holding,
// on every device.
#include "pool/opencl/pool_front.h"

#include <CL/cl.h>
#include <gtest/gtest.h>

#include <type_traits>

#include "pool/bins.h"
#include "pool/opencl/buffer_pool.h"
#include "pool/opencl/host_pinned_pool.h"
#include "pool/opencl/svm_pool.h"
#include "pool/opencl/testing/cl_test_devices.h"

namespace clpool::opencl {
namespace {

static_assert(std::is_base_of_v<pool_front<immediate_buffer_allocator>, buffer_pool<>>);
static_assert(std::is_base_of_v<pool_front<deferred_buffer_allocator>,
                                buffer_pool<deferred_buffer_allocator>>);
static_assert(std::is_base_of_v<pool_front<svm_allocator>, svm_pool>);
static_assert(std::is_base_of_v<pool_front<host_pinned_allocator>, host_pinned_pool>);

// What the forwarders must report, from the requests the battery made (sizes it knows, rounded
// to PyOpenCL's bins), not from the core pool: comparing a forwarder with what it forwards could
// not fail.
struct figures {
  std::uint64_t active_blocks, active_bytes, held_blocks, held_bytes, managed_bytes;
};

template <class Pool>
void expect_figures(const Pool& pool, const figures& want) {
  EXPECT_EQ(pool.active_blocks(), want.active_blocks);
  EXPECT_EQ(pool.active_bytes(), want.active_bytes);
  EXPECT_EQ(pool.held_blocks(), want.held_blocks);
  EXPECT_EQ(pool.held_bytes(), want.held_bytes);
  EXPECT_EQ(pool.managed_bytes(), want.managed_bytes);
}

// The battery: `allocate(pool, size)` returns a block that gives itself back when destroyed.
template <class Pool, class Allocate>
void forwarders_battery(Pool& pool, Allocate allocate) {
  constexpr std::uint64_t big = 1 << 20, small = 3000;
  const std::uint64_t rounded =
      rounded_size(big, default_leading_bits) + rounded_size(small, default_leading_bits);
  ASSERT_GT(rounded, big + small);  // the bins round both up
  expect_figures(pool, {0, 0, 0, 0, 0});
  {
    auto a = allocate(pool, big);
    auto b = allocate(pool, small);
    expect_figures(pool, {2, big + small, 0, 0, rounded});
  }
  // Released: held for reuse, still managed.
  expect_figures(pool, {0, 0, 2, rounded, rounded});
  { auto again = allocate(pool, big); }  // a hit: the held block comes back and goes again
  expect_figures(pool, {0, 0, 2, rounded, rounded});
  pool.free_held();
  expect_figures(pool, {0, 0, 0, 0, 0});
  pool.stop_holding();
  { auto c = allocate(pool, 4096); }
  expect_figures(pool, {0, 0, 0, 0, 0});  // after stop_holding, a released block is freed
}

class pool_front_test : public testing::device_test {};

TEST_P(pool_front_test, BufferPool) {
  buffer_pool<> pool{immediate_buffer_allocator(queue())};
  forwarders_battery(pool,
                     [&](buffer_pool<>& p, std::uint64_t n) { return p.allocate(n, queue()); });
}

TEST_P(pool_front_test, DeferredBufferPool) {
  buffer_pool<deferred_buffer_allocator> pool{deferred_buffer_allocator(context())};
  forwarders_battery(pool, [](buffer_pool<deferred_buffer_allocator>& p, std::uint64_t n) {
    return p.allocate(n);
  });
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
