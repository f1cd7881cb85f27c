// maps=copy (a discrete device's maps): a mapped region is the host's own copy, filled at map and
// written back at unmap; commands that start while their buffer is mapped against them are
// reported. In-process (mockcl::dispatch()).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "mockcl/runtime/control.h"

namespace {

constexpr size_t kBytes = 4096;

class MapsTest : public ::testing::Test {
 protected:
  void Open(const std::string& devices) {
    ASSERT_EQ(ctl().configure_devices(devices), "");
    cl_device_id dev = nullptr;
    ASSERT_EQ(d()->clGetDeviceIDs(mockcl::platform(), CL_DEVICE_TYPE_ALL, 1, &dev, nullptr),
              CL_SUCCESS);
    cl_int err = CL_SUCCESS;
    ctx_ = d()->clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    q_ = d()->clCreateCommandQueueWithProperties(ctx_, dev, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
  }
  void TearDown() override {
    if (q_) d()->clReleaseCommandQueue(q_);
    if (ctx_) d()->clReleaseContext(ctx_);
    ctl().reset();
  }
  static const cl_icd_dispatch* d() { return mockcl::dispatch(); }
  static mockcl::controller& ctl() { return mockcl::control(); }
  cl_mem Buffer(cl_mem_flags flags = CL_MEM_READ_WRITE, size_t bytes = kBytes) {
    cl_int err = CL_SUCCESS;
    cl_mem m = d()->clCreateBuffer(ctx_, flags, bytes, nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    return m;
  }
  unsigned char* Map(cl_mem m, cl_map_flags flags, size_t offset = 0, size_t bytes = kBytes) {
    cl_int err = CL_SUCCESS;
    void* p =
        d()->clEnqueueMapBuffer(q_, m, CL_TRUE, flags, offset, bytes, 0, nullptr, nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    EXPECT_NE(p, nullptr);
    return static_cast<unsigned char*>(p);
  }
  std::vector<unsigned char> Read(cl_mem m) {
    std::vector<unsigned char> out(kBytes, 0xee);
    EXPECT_EQ(d()->clEnqueueReadBuffer(q_, m, CL_TRUE, 0, kBytes, out.data(), 0, nullptr, nullptr),
              CL_SUCCESS);
    return out;
  }
  static std::vector<unsigned char> Pattern(int seed) {
    std::vector<unsigned char> v(kBytes);
    for (size_t i = 0; i < kBytes; ++i) v[i] = static_cast<unsigned char>(i * 7 + seed);
    return v;
  }
  uint64_t UsedWhileMapped() { return ctl().snapshot().reports.used_while_mapped; }

  cl_context ctx_ = nullptr;
  cl_command_queue q_ = nullptr;
};

// The host-pinned pool's old protocol: keep a CL_MEM_ALLOC_HOST_PTR buffer mapped for its whole
// life, write through the pointer, let the device read the buffer. Legal nowhere; it "works" on a
// shared-memory device (maps=shared, like POCL) and reads stale bytes on a discrete one.
TEST_F(MapsTest, PersistentlyMappedWritesNeverReachTheDeviceAndTheUseIsReported) {
  Open("gpu:maps=copy");
  cl_mem pinned = Buffer(CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR);
  unsigned char* host = Map(pinned, CL_MAP_READ | CL_MAP_WRITE);
  const std::vector<unsigned char> data = Pattern(3);
  std::memcpy(host, data.data(), kBytes);
  EXPECT_EQ(Read(pinned), std::vector<unsigned char>(kBytes, 0))
      << "the device saw host writes made while mapped";
  EXPECT_EQ(UsedWhileMapped(), 1u);
  const auto messages = ctl().snapshot().reports.messages;
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages.back().find("(read) started while mem #"), std::string::npos)
      << messages.back();
  EXPECT_NE(messages.back().find("was mapped for writing"), std::string::npos) << messages.back();
  EXPECT_EQ(d()->clEnqueueUnmapMemObject(q_, pinned, host, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(Read(pinned), data) << "the unmap writes the host copy back";
  EXPECT_EQ(UsedWhileMapped(), 1u) << "a use after the unmap is legal";
  d()->clReleaseMemObject(pinned);
}

TEST_F(MapsTest, SharedMapsHideTheSameBugAndReportNothing) {
  Open("gpu");
  cl_mem pinned = Buffer(CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR);
  unsigned char* host = Map(pinned, CL_MAP_READ | CL_MAP_WRITE);
  const std::vector<unsigned char> data = Pattern(3);
  std::memcpy(host, data.data(), kBytes);
  EXPECT_EQ(Read(pinned), data);
  EXPECT_EQ(UsedWhileMapped(), 0u);
  // As on POCL, only the pointer the map returned names the mapping (OpenCL 3.0).
  EXPECT_EQ(d()->clEnqueueUnmapMemObject(q_, pinned, host + 1, 0, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(d()->clEnqueueUnmapMemObject(q_, pinned, host, 0, nullptr, nullptr), CL_SUCCESS);
  d()->clReleaseMemObject(pinned);
}

// The new protocol: the mapped pointer is only ever host memory, the source or destination of
// transfers to another buffer; the mapped buffer itself is never an argument of a command.
TEST_F(MapsTest, MappedPointerAsTransferSourceAndDestinationIsLegal) {
  Open("gpu:maps=copy");
  cl_mem pinned = Buffer(CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR);
  cl_mem dev = Buffer();
  unsigned char* host = Map(pinned, CL_MAP_READ | CL_MAP_WRITE);
  const std::vector<unsigned char> data = Pattern(5);
  std::memcpy(host, data.data(), kBytes);
  ASSERT_EQ(d()->clEnqueueWriteBuffer(q_, dev, CL_TRUE, 0, kBytes, host, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(Read(dev), data);
  std::memset(host, 0, kBytes);
  ASSERT_EQ(d()->clEnqueueReadBuffer(q_, dev, CL_TRUE, 0, kBytes, host, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(std::memcmp(host, data.data(), kBytes), 0);
  EXPECT_EQ(UsedWhileMapped(), 0u);
  EXPECT_EQ(d()->clEnqueueUnmapMemObject(q_, pinned, host, 0, nullptr, nullptr), CL_SUCCESS);
  d()->clReleaseMemObject(dev);
  d()->clReleaseMemObject(pinned);
  EXPECT_EQ(ctl().snapshot().live["mem"], 0u);
}

TEST_F(MapsTest, MapCopiesTheBufferInUnlessInvalidating) {
  Open("gpu:maps=copy");
  cl_mem m = Buffer();
  const std::vector<unsigned char> data = Pattern(9);
  ASSERT_EQ(d()->clEnqueueWriteBuffer(q_, m, CL_TRUE, 0, kBytes, data.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  unsigned char* r = Map(m, CL_MAP_READ, 16, 64);
  EXPECT_EQ(std::memcmp(r, data.data() + 16, 64), 0);
  EXPECT_EQ(Read(m), data) << "commands may read a buffer mapped for reading";
  EXPECT_EQ(UsedWhileMapped(), 0u);
  r[0] = 0;  // not written back: a read mapping
  ASSERT_EQ(d()->clEnqueueUnmapMemObject(q_, m, r, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(Read(m), data);

  unsigned char* w = Map(m, CL_MAP_WRITE_INVALIDATE_REGION, 0, 8);
  EXPECT_EQ(std::vector<unsigned char>(w, w + 8), std::vector<unsigned char>(8, 0))
      << "nothing copied in";
  std::memset(w, 0xab, 8);
  ASSERT_EQ(d()->clEnqueueUnmapMemObject(q_, m, w, 0, nullptr, nullptr), CL_SUCCESS);
  std::vector<unsigned char> expect = data;
  std::memset(expect.data(), 0xab, 8);
  EXPECT_EQ(Read(m), expect);
  d()->clReleaseMemObject(m);
}

TEST_F(MapsTest, WritingABufferMappedForReadingAndUsingASubBufferAreReported) {
  Open("gpu:maps=copy");
  cl_mem m = Buffer();
  unsigned char* r = Map(m, CL_MAP_READ);
  const int zero = 0;
  ASSERT_EQ(d()->clEnqueueFillBuffer(q_, m, &zero, sizeof zero, 0, kBytes, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d()->clFinish(q_), CL_SUCCESS);
  EXPECT_EQ(UsedWhileMapped(), 1u);
  EXPECT_NE(ctl().snapshot().reports.messages.back().find("mapped for reading"), std::string::npos);
  ASSERT_EQ(d()->clEnqueueUnmapMemObject(q_, m, r, 0, nullptr, nullptr), CL_SUCCESS);

  cl_buffer_region region{1024, 1024};
  cl_int err = CL_SUCCESS;
  cl_mem sub =
      d()->clCreateSubBuffer(m, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  unsigned char* w = Map(m, CL_MAP_WRITE, 0, 16);  // another region of the parent
  std::vector<unsigned char> out(16);
  ASSERT_EQ(d()->clEnqueueReadBuffer(q_, sub, CL_TRUE, 0, 16, out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(UsedWhileMapped(), 2u);
  EXPECT_NE(ctl().snapshot().reports.messages.back().find("a sub-buffer of mem #"),
            std::string::npos)
      << ctl().snapshot().reports.messages.back();
  ASSERT_EQ(d()->clEnqueueUnmapMemObject(q_, m, w, 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(d()->clEnqueueReadBuffer(q_, sub, CL_TRUE, 0, 16, out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(UsedWhileMapped(), 2u);
  d()->clReleaseMemObject(sub);
  d()->clReleaseMemObject(m);
}

TEST_F(MapsTest, UnmapNeedsTheMappedPointerOnceAndReleaseWhileMappedFreesTheCopy) {
  Open("gpu:maps=copy");
  cl_mem m = Buffer();
  unsigned char* p = Map(m, CL_MAP_WRITE);
  EXPECT_EQ(d()->clEnqueueUnmapMemObject(q_, m, p + 1, 0, nullptr, nullptr), CL_INVALID_VALUE);
  cl_uint count = 0;
  d()->clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof count, &count, nullptr);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(d()->clEnqueueUnmapMemObject(q_, m, p, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(d()->clEnqueueUnmapMemObject(q_, m, p, 0, nullptr, nullptr), CL_INVALID_VALUE);
  unsigned char* again = Map(m, CL_MAP_WRITE);
  ASSERT_NE(again, nullptr);
  ASSERT_EQ(d()->clFinish(q_), CL_SUCCESS);
  EXPECT_EQ(d()->clReleaseMemObject(m), CL_SUCCESS);  // still mapped: the copy goes with it (ASan)
  EXPECT_EQ(ctl().snapshot().live["mem"], 0u);
}

}  // namespace
