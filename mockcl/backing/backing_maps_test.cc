// Maps in backing mode (MOCKCL_BACKING=pocl), in-process and through the loader. On a maps=shared
// device (the default) a buffer's map is POCL's own mapping of its twin: the buffer's bytes, with
// nothing copied at the map or the unmap (a map + unmap of 128 MiB was a fresh host copy each
// time: clpeak's enqueueMapBuffer measured 2.6 GB/s against POCL's 45,000). A maps=copy device
// keeps the discrete-device copies.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "mockcl/battery_fixture.h"

namespace {

using namespace mockcl_battery;  // NOLINT: the fixture's names

template <typename T>
class BackingMaps : public Battery<T> {
 protected:
  void TearDown() override {
    for (cl_mem m : mems_) EXPECT_EQ(this->d_->clReleaseMemObject(m), CL_SUCCESS);
    mems_.clear();
    this->Teardown();
    EXPECT_EQ(this->ctl_->snapshot().live.at("mem"), 0u);
    Battery<T>::TearDown();
  }
  cl_mem Filled(size_t n, int first) {
    cl_mem m = this->Buf(n * sizeof(int));
    mems_.push_back(m);
    std::vector<int> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = first + static_cast<int>(i);
    EXPECT_EQ(this->d_->clEnqueueWriteBuffer(this->q_, m, CL_TRUE, 0, n * sizeof(int), v.data(), 0,
                                             nullptr, nullptr),
              CL_SUCCESS);
    return m;
  }
  int* Map(cl_mem m, cl_map_flags flags, size_t offset, size_t bytes) {
    cl_int err;
    void* p = this->d_->clEnqueueMapBuffer(this->q_, m, CL_TRUE, flags, offset, bytes, 0, nullptr,
                                           nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    return static_cast<int*>(p);
  }
  cl_int Unmap(cl_mem m, void* p) {
    cl_int s = this->d_->clEnqueueUnmapMemObject(this->q_, m, p, 0, nullptr, nullptr);
    if (s == CL_SUCCESS) s = this->d_->clFinish(this->q_);
    return s;
  }
  int ReadOne(cl_mem m, size_t index) {
    int v = -1;
    EXPECT_EQ(this->d_->clEnqueueReadBuffer(this->q_, m, CL_TRUE, index * sizeof(int), sizeof v, &v,
                                            0, nullptr, nullptr),
              CL_SUCCESS);
    return v;
  }
  std::vector<cl_mem> mems_;
};
TYPED_TEST_SUITE(BackingMaps, Backends, BackendNames);

constexpr size_t kInts = 1 << 16;

TYPED_TEST(BackingMaps, ASharedMapIsTheBuffersOwnBytes) {
  this->Setup("gpu");
  cl_mem m = this->Filled(kInts, 100);
  int* a = this->Map(m, CL_MAP_READ, 0, kInts * sizeof(int));
  int* b = this->Map(m, CL_MAP_READ, 0, kInts * sizeof(int));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b) << "two maps of one buffer are two copies";
  EXPECT_EQ(a[0], 100);
  EXPECT_EQ(a[kInts - 1], 100 + static_cast<int>(kInts) - 1);
  EXPECT_EQ(this->Unmap(m, a), CL_SUCCESS);
  EXPECT_EQ(this->Unmap(m, b), CL_SUCCESS);
  EXPECT_EQ(this->Unmap(m, b), CL_INVALID_VALUE);  // Both mappings are gone.
  // A write mapping's bytes reach the buffer at the unmap (here: they are the buffer's).
  int* w = this->Map(m, CL_MAP_WRITE, 4 * sizeof(int), 4 * sizeof(int));
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w, a + 4);  // The same bytes, four ints in.
  w[0] = -7;
  EXPECT_EQ(this->Unmap(m, w + 1), CL_INVALID_VALUE);  // Only the pointer the map returned.
  EXPECT_EQ(this->Unmap(m, w), CL_SUCCESS);
  EXPECT_EQ(this->ReadOne(m, 4), -7);
}

TYPED_TEST(BackingMaps, ASubBuffersMapIsItsParentsBytes) {
  this->Setup("gpu");
  cl_mem m = this->Filled(kInts, 0);
  const cl_buffer_region r{1024, 4096};
  cl_int err;
  cl_mem sub =
      this->d_->clCreateSubBuffer(m, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  int* whole = this->Map(m, CL_MAP_READ, 0, kInts * sizeof(int));
  int* part = this->Map(sub, CL_MAP_READ, 8, 16);
  ASSERT_NE(part, nullptr);
  EXPECT_EQ(reinterpret_cast<char*>(part), reinterpret_cast<char*>(whole) + 1024 + 8);
  EXPECT_EQ(part[0], (1024 + 8) / 4);
  EXPECT_EQ(this->Unmap(sub, part), CL_SUCCESS);
  EXPECT_EQ(this->Unmap(m, whole), CL_SUCCESS);
  // A buffer released while mapped: the mapping goes with it, on POCL too.
  ASSERT_NE(this->Map(sub, CL_MAP_WRITE, 0, 64), nullptr);
  EXPECT_EQ(this->d_->clReleaseMemObject(sub), CL_SUCCESS);
}

TYPED_TEST(BackingMaps, ACopyDeviceStillCopies) {
  this->Setup("gpu:maps=copy");
  cl_mem m = this->Filled(kInts, 5);
  int* a = this->Map(m, CL_MAP_READ, 0, 64);
  int* b = this->Map(m, CL_MAP_READ, 0, 64);
  ASSERT_NE(a, nullptr);
  EXPECT_NE(a, b);
  EXPECT_EQ(a[0], 5);
  EXPECT_EQ(b[3], 8);
  EXPECT_EQ(this->Unmap(m, a), CL_SUCCESS);
  EXPECT_EQ(this->Unmap(m, b), CL_SUCCESS);
  int* w = this->Map(m, CL_MAP_WRITE, 0, 64);
  w[0] = 42;
  EXPECT_EQ(this->ReadOne(m, 0), 5);  // Not unmapped yet: the host's copy.
  EXPECT_EQ(this->Unmap(m, w), CL_SUCCESS);
  EXPECT_EQ(this->ReadOne(m, 0), 42);
}

}  // namespace
