// Argument checks a real driver makes, through the entry points, in-process and through the
// loader, in the mode MOCKCL_BACKING gives: battery_test runs this file with no backing device,
// api_checks_backing_test with POCL behind. Found by hashcat (issue 43): a kernel's work-group
// size above the device's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mockcl/battery_fixture.h"

namespace {

using namespace mockcl_battery;  // NOLINT: the fixture's names

template <typename T>
class ApiChecks : public Battery<T> {
 protected:
  void SetUp() override {
    Battery<T>::SetUp();
    this->Setup("gpu");
    cl_int err;
    const char* src = kSource;
    program_ = this->d_->clCreateProgramWithSource(this->ctx_, 1, &src, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
  }
  void TearDown() override {
    if (program_) {
      EXPECT_EQ(this->d_->clReleaseProgram(program_), CL_SUCCESS);
    }
    this->Teardown();
    Battery<T>::TearDown();
  }
  cl_device_id dev() const { return this->devices_[0]; }
  static constexpr const char* kSource = "__kernel void k(__global int* a) { a[get_global_id(0)] = 1; }\n";
  cl_program program_ = nullptr;
};
TYPED_TEST_SUITE(ApiChecks, Backends, BackendNames);

// A kernel's CL_KERNEL_WORK_GROUP_SIZE is never above the device's CL_DEVICE_MAX_WORK_GROUP_SIZE,
// and a launch of that size is accepted. In backing mode POCL's own was passed through (4096 on
// this machine against the device's 1024), so hashcat's launch sized by it got
// CL_INVALID_WORK_ITEM_SIZE.
TYPED_TEST(ApiChecks, AKernelsWorkGroupSizeFitsTheDevice) {
  const auto* d = this->d_;
  ASSERT_EQ(d->clBuildProgram(this->program_, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
  cl_int err;
  cl_kernel k = d->clCreateKernel(this->program_, "k", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  size_t kernel_max = 0, device_max = 0, items[3] = {};
  ASSERT_EQ(d->clGetKernelWorkGroupInfo(k, this->dev(), CL_KERNEL_WORK_GROUP_SIZE, sizeof kernel_max, &kernel_max,
                                        nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clGetDeviceInfo(this->dev(), CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof device_max, &device_max, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clGetDeviceInfo(this->dev(), CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, nullptr), CL_SUCCESS);
  EXPECT_GT(kernel_max, 0u);
  EXPECT_LE(kernel_max, device_max);
  cl_mem m = this->Buf(kernel_max * sizeof(int));
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
  EXPECT_LE(kernel_max, items[0]);
  const size_t local = kernel_max, global = kernel_max;  // One group as large as the kernel takes.
  cl_event e = nullptr;
  ASSERT_EQ(d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &global, &local, 0, nullptr, &e), CL_SUCCESS);
  ASSERT_EQ(d->clWaitForEvents(1, &e), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseEvent(e), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseMemObject(m), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseKernel(k), CL_SUCCESS);
}

}  // namespace
