// Configuration from MOCKCL_* environment variables (set by the BUILD rule), seen through the
// real loader: devices, faults and schedule apply from start-up, and reset() restores them.
#include <gtest/gtest.h>

#include <string>

#include "mockcl/testing.h"

namespace {

class EnvConfig : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    so_ = new std::string(mockcl::testing::mock_so_path());
    mockcl::testing::use_mock_only(*so_);
  }
  void SetUp() override {
    d_ = mockcl::testing::loader_dispatch();
    p_ = mockcl::testing::loader_mock_platform();
    ASSERT_NE(p_, nullptr);
    ctl_ = mockcl::testing::icd_control(*so_);
    ctl_->reset();
    cl_uint n = 0;
    ASSERT_EQ(d_->clGetDeviceIDs(p_, CL_DEVICE_TYPE_ALL, 2, dev_, &n), CL_SUCCESS);
    ASSERT_EQ(n, 2u);
    cl_int err;
    ctx_ = d_->clCreateContext(nullptr, 1, dev_, nullptr, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
  }
  void TearDown() override {
    d_->clReleaseContext(ctx_);
    ctl_->reset();
  }
  static std::string* so_;
  const cl_icd_dispatch* d_ = nullptr;
  cl_platform_id p_ = nullptr;
  std::unique_ptr<mockcl::controller> ctl_;
  cl_device_id dev_[2];
  cl_context ctx_ = nullptr;
};
std::string* EnvConfig::so_ = nullptr;

TEST_F(EnvConfig, DevicesComeFromTheEnvironment) {
  char name[128];
  d_->clGetDeviceInfo(dev_[0], CL_DEVICE_NAME, sizeof name, name, nullptr);
  EXPECT_STREQ(name, "mockcl gpu-16m");
  d_->clGetDeviceInfo(dev_[1], CL_DEVICE_NAME, sizeof name, name, nullptr);
  EXPECT_STREQ(name, "tiny");
  auto s = ctl_->snapshot();
  EXPECT_EQ(s.devices.at(0).capacity, 16u << 20);
  EXPECT_EQ(s.devices.at(1).capacity, 32u << 20);
}

TEST_F(EnvConfig, FaultsComeFromTheEnvironmentAndResetRestoresThem) {
  for (int round = 0; round < 2; ++round) {
    cl_int e1, e2, e3;
    cl_mem a = d_->clCreateBuffer(ctx_, 0, 64, nullptr, &e1);
    cl_mem b = d_->clCreateBuffer(ctx_, 0, 64, nullptr, &e2);
    cl_mem c = d_->clCreateBuffer(ctx_, 0, 64, nullptr, &e3);
    EXPECT_EQ(e1, CL_SUCCESS);
    EXPECT_EQ(e2, CL_OUT_OF_RESOURCES) << "round " << round;
    EXPECT_EQ(b, nullptr);
    EXPECT_EQ(e3, CL_SUCCESS);
    d_->clReleaseMemObject(a);
    d_->clReleaseMemObject(c);
    d_->clReleaseContext(ctx_);
    ctl_->reset();  // Back to the environment's rules, counters from zero.
    cl_int err;
    ctx_ = d_->clCreateContext(nullptr, 1, dev_, nullptr, nullptr, &err);
  }
}

TEST_F(EnvConfig, ScheduleComesFromTheEnvironment) {
  cl_int err;
  cl_command_queue q = d_->clCreateCommandQueueWithProperties(ctx_, dev_[0], nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_event pass = d_->clCreateUserEvent(ctx_, &err);
  d_->clSetUserEventStatus(pass, CL_COMPLETE);
  cl_mem m = d_->clCreateBuffer(ctx_, 0, 64, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_event e;
  ASSERT_EQ(d_->clEnqueueMigrateMemObjects(q, 1, &m, 0, 1, &pass, &e), CL_SUCCESS);
  cl_int st;
  d_->clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
  EXPECT_EQ(st, CL_QUEUED);  // Lazy: nothing runs before a flush.
  ASSERT_EQ(d_->clFlush(q), CL_SUCCESS);
  d_->clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
  EXPECT_EQ(st, CL_COMPLETE);
  d_->clReleaseEvent(e);
  d_->clReleaseEvent(pass);
  d_->clReleaseMemObject(m);
  d_->clReleaseCommandQueue(q);
}

}  // namespace
