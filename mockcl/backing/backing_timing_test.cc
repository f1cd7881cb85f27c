// Profiling in backing mode (MOCKCL_BACKING=pocl), in-process and through the loader: the events of
// a profiling queue carry real times on POCL's clock, START and END POCL's own for the work it ran,
// so a kernel that runs for milliseconds profiles as milliseconds (they were the virtual clock's:
// every kernel 10 us, and clpeak's kernel launch latency read 0.00 us). The host timers use the
// same clock. With no backing device the virtual clock still answers (battery_test).
#include <gtest/gtest.h>

#include <time.h>

#include <cstdint>

#include "mockcl/battery_fixture.h"

namespace {

using namespace mockcl_battery;  // NOLINT: the fixture's names

uint64_t raw_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
}

template <typename T>
class BackingTiming : public Battery<T> {
 protected:
  cl_ulong Profile(cl_event e, cl_profiling_info what) {
    cl_ulong t = 0;
    EXPECT_EQ(this->d_->clGetEventProfilingInfo(e, what, sizeof t, &t, nullptr), CL_SUCCESS);
    return t;
  }
};
TYPED_TEST_SUITE(BackingTiming, Backends, BackendNames);

TYPED_TEST(BackingTiming, AKernelProfilesAsTheTimePoclTookToRunIt) {
  this->Setup("gpu", CL_QUEUE_PROFILING_ENABLE);
  const auto* d = this->d_;
  const char* src =
      "__kernel void spin(__global float* a, int n) { float x = a[0];"
      " for (int i = 0; i < n; ++i) x = x * 1.0000001f + 1e-7f; a[get_global_id(0)] = x; }";
  cl_int err;
  cl_program prog = d->clCreateProgramWithSource(this->ctx_, 1, &src, nullptr, &err);
  ASSERT_EQ(d->clBuildProgram(prog, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
  cl_kernel k = d->clCreateKernel(prog, "spin", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem m = this->Buf(sizeof(float));
  const int n = 20 * 1000 * 1000;
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(k, 1, sizeof n, &n), CL_SUCCESS);
  const size_t one = 1;
  cl_event e = nullptr;
  const uint64_t before = raw_ns();
  ASSERT_EQ(d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &one, &one, 0, nullptr, &e),
            CL_SUCCESS);
  ASSERT_EQ(d->clWaitForEvents(1, &e), CL_SUCCESS);
  const uint64_t after = raw_ns();
  const cl_ulong queued = this->Profile(e, CL_PROFILING_COMMAND_QUEUED);
  const cl_ulong submit = this->Profile(e, CL_PROFILING_COMMAND_SUBMIT);
  const cl_ulong start = this->Profile(e, CL_PROFILING_COMMAND_START);
  const cl_ulong end = this->Profile(e, CL_PROFILING_COMMAND_END);
  EXPECT_LE(before, queued);
  EXPECT_LE(queued, submit);
  EXPECT_LE(submit, start);
  EXPECT_LT(start, end);
  EXPECT_LE(end, after);
  EXPECT_EQ(this->Profile(e, CL_PROFILING_COMMAND_COMPLETE), end);
  // 20 million dependent steps take milliseconds on any CPU (about 30 here); the virtual clock said
  // 10 us. (The wall time around it also holds POCL's compilation of the launch.)
  EXPECT_GT(end - start, 1000000u) << "the kernel profiled as " << (end - start) << " ns";
  cl_ulong device_time = 0, host_time = 0;
  ASSERT_EQ(d->clGetDeviceAndHostTimer(this->devices_[0], &device_time, &host_time), CL_SUCCESS);
  EXPECT_GE(host_time, after);  // The same clock as the profile's.
  EXPECT_LE(host_time, raw_ns());
  EXPECT_EQ(d->clReleaseEvent(e), CL_SUCCESS);
  // A command POCL does not run (a marker) is timed by the mock on the same clock.
  ASSERT_EQ(d->clEnqueueMarkerWithWaitList(this->q_, 0, nullptr, &e), CL_SUCCESS);
  ASSERT_EQ(d->clWaitForEvents(1, &e), CL_SUCCESS);
  EXPECT_GE(this->Profile(e, CL_PROFILING_COMMAND_START), end);
  EXPECT_LE(this->Profile(e, CL_PROFILING_COMMAND_END), raw_ns());
  EXPECT_EQ(d->clReleaseEvent(e), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseMemObject(m), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseKernel(k), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseProgram(prog), CL_SUCCESS);
  this->Teardown();
}

}  // namespace
