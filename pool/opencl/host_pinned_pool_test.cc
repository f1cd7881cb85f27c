// host_pinned_pool (PyCUDA's PageLockedMemoryPool for OpenCL) on every device. Every data path
// here is legal OpenCL: the pinned block is host memory, the source or destination of transfers
// to other buffers; its own (mapped) buffer is never an argument of a command. The *_mockcl build
// also runs on a maps=copy mock device, where breaking that rule reads stale bytes.
#include "pool/opencl/host_pinned_pool.h"

#include <CL/cl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "pool/opencl/cl_error.h"
#include "pool/opencl/testing/cl_test_devices.h"

namespace clpool::opencl {
namespace {

class host_pinned_pool_test : public testing::device_test {
 protected:
  mem_ref device_buffer(std::size_t n) {
    cl_int status = CL_SUCCESS;
    mem_ref m = mem_ref::adopt(clCreateBuffer(context(), CL_MEM_READ_WRITE, n, nullptr, &status));
    EXPECT_EQ(status, CL_SUCCESS);
    return m;
  }
};

TEST_P(host_pinned_pool_test, BlocksAreMappedAndTransferToTheDevice) {
  const cl_uint refs = context_refs();
  {
    host_pinned_pool pool{host_pinned_allocator(queue())};
    constexpr std::size_t n = 1 << 20;
    pinned_memory m = pool.allocate(n);
    ASSERT_NE(m.data(), nullptr);
    ASSERT_NE(m.mem(), nullptr);
    EXPECT_EQ(m.size(), n);
    std::vector<unsigned char> src(n);
    std::iota(src.begin(), src.end(), 3);
    std::memcpy(m.data(), src.data(), n);
    mem_ref dev = device_buffer(n);
    // Host -> device from pinned memory, then check on the device side with an ordinary read.
    event_ref up = m.write_to(queue(), dev.get());
    ASSERT_TRUE(up);
    std::vector<unsigned char> out(n);
    ASSERT_EQ(
        clEnqueueReadBuffer(queue(), dev.get(), CL_TRUE, 0, n, out.data(), 0, nullptr, nullptr),
        CL_SUCCESS);
    EXPECT_EQ(out, src);
    EXPECT_EQ(testing::event_status(up.get()), CL_COMPLETE);
    // Device -> host into pinned memory.
    const unsigned char pattern = 0x5a;
    ASSERT_EQ(clEnqueueFillBuffer(queue(), dev.get(), &pattern, 1, 0, n, 0, nullptr, nullptr),
              CL_SUCCESS);
    m.read_from(queue(), dev.get(), 0, pinned_memory::whole, /*blocking=*/true);
    EXPECT_EQ(std::vector<unsigned char>(static_cast<unsigned char*>(m.data()),
                                         static_cast<unsigned char*>(m.data()) + n),
              std::vector<unsigned char>(n, pattern));
    // Part of the block, at an offset of the device buffer.
    std::memset(m.data(), 7, 16);
    m.write_to(queue(), dev.get(), 100, 16, /*blocking=*/true);
    std::vector<unsigned char> part(18);
    ASSERT_EQ(
        clEnqueueReadBuffer(queue(), dev.get(), CL_TRUE, 99, 18, part.data(), 0, nullptr, nullptr),
        CL_SUCCESS);
    EXPECT_EQ(part.front(), pattern);
    EXPECT_EQ(std::vector<unsigned char>(part.begin() + 1, part.end() - 1),
              std::vector<unsigned char>(16, 7));
    EXPECT_EQ(part.back(), pattern);
    cl_mem_flags flags = 0;
    clGetMemObjectInfo(m.mem(), CL_MEM_FLAGS, sizeof(flags), &flags, nullptr);
    EXPECT_NE(flags & CL_MEM_ALLOC_HOST_PTR, 0u);
    cl_uint maps = 0;
    clGetMemObjectInfo(m.mem(), CL_MEM_MAP_COUNT, sizeof(maps), &maps, nullptr);
    EXPECT_EQ(maps, 1u) << "a block stays mapped for its whole life";
  }
  clFinish(queue());
  EXPECT_EQ(context_refs_settled(refs), refs);
}

// free() waits for the transfers the block enqueued: the block must not go back to the pool (and
// on to another user, or to be unmapped) while a transfer still reads it.
TEST_P(host_pinned_pool_test, FreeWaitsForTheBlocksTransfers) {
  host_pinned_pool pool{host_pinned_allocator(queue())};
  pinned_memory m = pool.allocate(4096);
  std::memset(m.data(), 9, 4096);
  mem_ref dev = device_buffer(4096);
  event_ref gate = testing::make_gate(context());
  cl_event g = gate.get();
  ASSERT_EQ(clEnqueueBarrierWithWaitList(queue(), 1, &g, nullptr), CL_SUCCESS);
  event_ref up = m.write_to(queue(), dev.get());
  clFlush(queue());
  EXPECT_FALSE(testing::completes_within(up.get(), 20)) << "the gate holds the transfer back";
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    testing::open_gate(g);
  });
  m.free();
  const cl_int status_at_free = testing::event_status(up.get());
  opener.join();
  EXPECT_EQ(status_at_free, CL_COMPLETE) << "free() returned before the block's transfer ended";
  EXPECT_EQ(pool.held_blocks(), 1u);
  std::vector<unsigned char> out(4096);
  ASSERT_EQ(
      clEnqueueReadBuffer(queue(), dev.get(), CL_TRUE, 0, 4096, out.data(), 0, nullptr, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(out, std::vector<unsigned char>(4096, 9));
}

TEST_P(host_pinned_pool_test, FreedBlocksAreReusedWithTheSameHostAddress) {
  const cl_uint refs = context_refs();
  {
    host_pinned_pool pool{host_pinned_allocator(queue())};
    void* first = nullptr;
    {
      pinned_memory m = pool.allocate(5000);
      first = m.data();
      m.free();  // PyCUDA's name
      EXPECT_FALSE(m.has_block());
      EXPECT_EQ(m.data(), nullptr);
      EXPECT_THROW(m.write_to(queue(), nullptr), invalid_use);
    }
    EXPECT_EQ(pool.held_blocks(), 1u);
    pinned_memory again = pool.allocate(5000);
    EXPECT_EQ(again.data(), first);
    EXPECT_EQ(pool.active_blocks(), 1u);
    pinned_memory moved = std::move(again);
    EXPECT_EQ(moved.data(), first);
    moved = pool.allocate(64);  // the 5000-byte block goes back
    EXPECT_EQ(pool.held_blocks(), 1u);
    moved.release();
    pool.free_held();
    EXPECT_EQ(pool.held_blocks(), 0u);
    pool.stop_holding();
    pinned_memory direct = pool.allocate(64);
    direct.release();
    EXPECT_EQ(pool.held_blocks(), 0u);
  }
  clFinish(queue());
  EXPECT_EQ(context_refs_settled(refs), refs);
}

TEST_P(host_pinned_pool_test, MisuseGivesTypedErrors) {
  EXPECT_THROW(host_pinned_allocator(nullptr), invalid_use);
  EXPECT_THROW(host_pinned_allocator(queue(), CL_MEM_USE_HOST_PTR), invalid_use);
  EXPECT_THROW(host_pinned_allocator(queue(), CL_MEM_HOST_NO_ACCESS), invalid_use);
  host_pinned_pool pool{host_pinned_allocator(queue())};
  pinned_memory m = pool.allocate(100);
  mem_ref dev = device_buffer(64);
  EXPECT_THROW(m.write_to(queue(), dev.get(), 0, 101), invalid_use);
  EXPECT_THROW(m.write_to(queue(), m.mem()), invalid_use) << "the block's own buffer is mapped";
  EXPECT_THROW(m.write_to(nullptr, dev.get()), invalid_use) << "a null queue, as README says";
  EXPECT_THROW(m.read_from(queue(), nullptr), invalid_use) << "a null buffer";
  try {
    m.write_to(queue(), dev.get(), 0, 100);  // 100 bytes into a 64-byte buffer
    ADD_FAILURE() << "no error";
  } catch (const cl_error& e) {
    EXPECT_EQ(e.status(), CL_INVALID_VALUE) << e.what();
  }
}

TEST_P(host_pinned_pool_test, OversizeFollowsTheDevicesMaxAllocRule) {
  const testing::max_alloc_probe probe = testing::probe_max_alloc(*this);
  host_pinned_pool pool{host_pinned_allocator(queue())};
  { pinned_memory m = pool.allocate(100); }
  ASSERT_EQ(pool.held_blocks(), 1u);
  if (probe.enforced()) {
    EXPECT_THROW(pool.allocate(probe.max_alloc + 1), cl_error) << probe.description;
    EXPECT_EQ(pool.held_blocks(), 1u) << "a non-OOM error must not free held memory";
    return;
  }
  // Not enforced: an ordinary request, which either succeeds or is out-of-memory.
  try {
    pinned_memory big = pool.allocate(probe.max_alloc + 1);
    EXPECT_NE(big.data(), nullptr);
  } catch (const out_of_memory&) {
    // the pool freed what it held and retried: allowed
  } catch (const cl_error& e) {
    ADD_FAILURE() << probe.description << ", yet the pool threw " << e.what();
  }
  EXPECT_TRUE(pool.pool().state_is_valid());
  GTEST_SKIP() << "the CL_INVALID_BUFFER_SIZE expectation does not apply: " << probe.description
               << "; checked instead that the request succeeds or is out_of_memory";
}

CLPOOL_INSTANTIATE_DEVICE_TESTS(host_pinned_pool_test);

}  // namespace
}  // namespace clpool::opencl
