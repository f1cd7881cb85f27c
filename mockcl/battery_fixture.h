// The battery's fixture: each test runs in-process (mockcl::dispatch()) and through the system ICD
// loader (libmockcl.so via OCL_ICD_VENDORS), each with its own controller. Shared by the
// battery's files (battery_test.cc, object_graph_test.cc).
#ifndef MOCKCL_BATTERY_FIXTURE_H_
#define MOCKCL_BATTERY_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "mockcl/runtime/control.h"
#include "mockcl/testing.h"

namespace mockcl_battery {

using mockcl::accounting_snapshot;
using mockcl::controller;

struct Backend {
  const cl_icd_dispatch* d;
  cl_platform_id platform;
  controller* ctl;
};

struct InProcess {
  static Backend get() { return {mockcl::dispatch(), mockcl::platform(), &mockcl::control()}; }
};

struct ThroughLoader {
  static Backend get() {
    static Backend b = [] {
      std::string so = mockcl::testing::mock_so_path();
      mockcl::testing::use_mock_only(so);
      static std::unique_ptr<controller> ctl = mockcl::testing::icd_control(so);
      cl_platform_id p = mockcl::testing::loader_mock_platform();
      return Backend{mockcl::testing::loader_dispatch(), p, ctl.get()};
    }();
    return b;
  }
};

constexpr size_t kMiB = 1 << 20;

template <typename T>
class Battery : public ::testing::Test {
 protected:
  void SetUp() override {
    b_ = T::get();
    ASSERT_NE(b_.platform, nullptr) << "mock platform not found";
    d_ = b_.d;
    ctl_ = b_.ctl;
    ctl_->reset();
  }
  void TearDown() override { ctl_->reset(); }

  // Applies a device spec, then makes a context and an in-order queue on device 0.
  void Setup(const std::string& devices, cl_command_queue_properties props = 0) {
    ASSERT_EQ(ctl_->configure_devices(devices), "");
    cl_uint n = 0;
    ASSERT_EQ(d_->clGetDeviceIDs(b_.platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n), CL_SUCCESS);
    devices_.resize(n);
    ASSERT_EQ(d_->clGetDeviceIDs(b_.platform, CL_DEVICE_TYPE_ALL, n, devices_.data(), nullptr),
              CL_SUCCESS);
    cl_int err;
    cl_context_properties cp[] = {CL_CONTEXT_PLATFORM,
                                  reinterpret_cast<cl_context_properties>(b_.platform), 0};
    ctx_ = d_->clCreateContext(cp, 1, devices_.data(), nullptr, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    q_ = NewQueue(props);
  }
  cl_command_queue NewQueue(cl_command_queue_properties props = 0) {
    cl_int err;
    cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, props, 0};
    cl_command_queue q = d_->clCreateCommandQueueWithProperties(ctx_, devices_[0], qp, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    return q;
  }
  cl_mem Buf(size_t size, cl_int* err_out = nullptr, cl_mem_flags flags = CL_MEM_READ_WRITE,
             void* host = nullptr) {
    cl_int err;
    cl_mem m = d_->clCreateBuffer(ctx_, flags, size, host, &err);
    if (err_out) {
      *err_out = err;
    } else {
      EXPECT_EQ(err, CL_SUCCESS);
    }
    return m;
  }
  void Teardown() {
    if (q_) {
      EXPECT_EQ(d_->clReleaseCommandQueue(q_), CL_SUCCESS);
    }
    if (ctx_) {
      EXPECT_EQ(d_->clReleaseContext(ctx_), CL_SUCCESS);
    }
    q_ = nullptr;
    ctx_ = nullptr;
  }
  cl_int Status(cl_event e) {
    cl_int s = 1;
    EXPECT_EQ(d_->clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr),
              CL_SUCCESS);
    return s;
  }
  uint64_t Outstanding() { return ctl_->snapshot().devices.at(0).outstanding; }
  cl_kernel Kernel(cl_program* prog) {
    const char* src = "__kernel void touch(__global int* a, __global int* b) { }";
    cl_int err;
    *prog = d_->clCreateProgramWithSource(ctx_, 1, &src, nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    EXPECT_EQ(d_->clBuildProgram(*prog, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
    cl_kernel k = d_->clCreateKernel(*prog, "touch", &err);
    EXPECT_EQ(err, CL_SUCCESS);
    return k;
  }

  Backend b_{};
  const cl_icd_dispatch* d_ = nullptr;
  controller* ctl_ = nullptr;
  std::vector<cl_device_id> devices_;
  cl_context ctx_ = nullptr;
  cl_command_queue q_ = nullptr;
};

using Backends = ::testing::Types<InProcess, ThroughLoader>;
class BackendNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return std::is_same_v<T, InProcess> ? "InProcess" : "ThroughLoader";
  }
};
}  // namespace mockcl_battery

#endif  // MOCKCL_BATTERY_FIXTURE_H_
