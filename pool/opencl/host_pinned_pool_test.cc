// host_pinned_pool (PyCUDA's PageLockedMemoryPool for OpenCL) on every device.
#include "pool/opencl/host_pinned_pool.h"

#include <CL/cl.h>
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "pool/opencl/cl_error.h"
#include "pool/opencl/testing/cl_test_devices.h"

namespace clpool::opencl {
namespace {

class host_pinned_pool_test : public testing::device_test {};

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
    cl_int status = CL_SUCCESS;
    cl_mem dev = clCreateBuffer(context(), CL_MEM_READ_WRITE, n, nullptr, &status);
    ASSERT_EQ(status, CL_SUCCESS);
    EXPECT_EQ(clEnqueueCopyBuffer(queue(), m.mem(), dev, 0, 0, n, 0, nullptr, nullptr), CL_SUCCESS);
    std::vector<unsigned char> out(n);
    EXPECT_EQ(clEnqueueReadBuffer(queue(), dev, CL_TRUE, 0, n, out.data(), 0, nullptr, nullptr),
              CL_SUCCESS);
    clReleaseMemObject(dev);
    EXPECT_EQ(out, src);
    cl_mem_flags flags = 0;
    clGetMemObjectInfo(m.mem(), CL_MEM_FLAGS, sizeof(flags), &flags, nullptr);
    EXPECT_NE(flags & CL_MEM_ALLOC_HOST_PTR, 0u);
  }
  clFinish(queue());
  EXPECT_EQ(context_refs_settled(refs), refs);
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
    }
    EXPECT_EQ(pool.held_blocks(), 1u);
    pinned_memory again = pool.allocate(5000);
    EXPECT_EQ(again.data(), first);
    EXPECT_EQ(pool.active_blocks(), 1u);
    again.release();
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

TEST_P(host_pinned_pool_test, MisuseAndOversizeGiveTypedErrors) {
  EXPECT_THROW(host_pinned_allocator(nullptr), invalid_use);
  EXPECT_THROW(host_pinned_allocator(queue(), CL_MEM_USE_HOST_PTR), invalid_use);
  EXPECT_THROW(host_pinned_allocator(queue(), CL_MEM_READ_WRITE, 0), invalid_use);
  host_pinned_pool pool{host_pinned_allocator(queue())};
  { pinned_memory m = pool.allocate(100); }
  EXPECT_THROW(pool.allocate(device_max_alloc(device()) + 1), cl_error);
  EXPECT_EQ(pool.held_blocks(), 1u);
}

CLPOOL_INSTANTIATE_DEVICE_TESTS(host_pinned_pool_test);

}  // namespace
}  // namespace clpool::opencl
