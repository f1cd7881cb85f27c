// The behaviour battery, run twice: in-process (mockcl::dispatch()) and through the system
// ICD loader (libmockcl.so via OCL_ICD_VENDORS), each with its own Control.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "mockcl/battery_fixture.h"
#include "mockcl/consistency.h"
#include "mockcl/runtime/control.h"
#include "mockcl/testing.h"

namespace {

using namespace mockcl_battery;  // NOLINT: the fixture's names, as the tests were written
using mockcl::accounting_snapshot;
using mockcl::controller;

TYPED_TEST_SUITE(Battery, Backends, BackendNames);

TYPED_TEST(Battery, PlatformAndDeviceQueries) {
  auto* d = this->d_;
  char buf[256];
  ASSERT_EQ(
      d->clGetPlatformInfo(this->b_.platform, CL_PLATFORM_EXTENSIONS, sizeof buf, buf, nullptr),
      CL_SUCCESS);
  EXPECT_NE(std::string(buf).find("cl_khr_icd"), std::string::npos);
  ASSERT_EQ(
      d->clGetPlatformInfo(this->b_.platform, CL_PLATFORM_ICD_SUFFIX_KHR, sizeof buf, buf, nullptr),
      CL_SUCCESS);
  this->Setup("gpu-1g:reported=2g,name=small;cpu");
  ASSERT_EQ(this->devices_.size(), 2u);
  cl_ulong mem = 0, max_alloc = 0;
  d->clGetDeviceInfo(this->devices_[0], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, nullptr);
  d->clGetDeviceInfo(this->devices_[0], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc,
                     nullptr);
  EXPECT_EQ(mem, 2ull << 30);  // Reported differs from the enforced capacity.
  EXPECT_EQ(max_alloc, 256ull << 20);
  ASSERT_EQ(d->clGetDeviceInfo(this->devices_[0], CL_DEVICE_NAME, sizeof buf, buf, nullptr),
            CL_SUCCESS);
  EXPECT_STREQ(buf, "small");
  cl_device_type t;
  d->clGetDeviceInfo(this->devices_[1], CL_DEVICE_TYPE, sizeof t, &t, nullptr);
  EXPECT_EQ(t, cl_device_type{CL_DEVICE_TYPE_CPU});
  EXPECT_EQ(this->ctl_->snapshot().devices.at(0).capacity, 1ull << 30);
  // An unimplemented slot answers, never crashes.
  EXPECT_EQ(d->clCreatePipe(this->ctx_, 0, 4, 4, nullptr, nullptr), nullptr);
  cl_int err = 0;
  d->clCreatePipe(this->ctx_, 0, 4, 4, nullptr, &err);
  EXPECT_EQ(err, CL_INVALID_OPERATION);
  this->Teardown();
}

// A device type that is not a valid value (no known bit, or an unknown one) is
// CL_INVALID_DEVICE_TYPE from clGetDeviceIDs and clCreateContextFromType alike (OpenCL 3.0); a
// valid type that names no device of the platform is CL_DEVICE_NOT_FOUND from both.
TYPED_TEST(Battery, DeviceTypesAreCheckedAlikeByGetDeviceIDsAndCreateContextFromType) {
  auto* d = this->d_;
  this->Setup("gpu");
  const cl_context_properties props[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(this->b_.platform), 0};
  const auto from_type = [&](cl_device_type type) {
    cl_int err = CL_SUCCESS;
    cl_context ctx = d->clCreateContextFromType(props, type, nullptr, nullptr, &err);
    if (ctx) {
      EXPECT_EQ(d->clReleaseContext(ctx), CL_SUCCESS);
    }
    return err;
  };
  const auto get_ids = [&](cl_device_type type) {
    cl_uint n = 0;
    return d->clGetDeviceIDs(this->b_.platform, type, 0, nullptr, &n);
  };
  for (cl_device_type bad : {cl_device_type{0}, cl_device_type{1} << 40,
                             cl_device_type{CL_DEVICE_TYPE_GPU | (cl_device_type{1} << 40)}}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(get_ids(bad), CL_INVALID_DEVICE_TYPE);
    EXPECT_EQ(from_type(bad), CL_INVALID_DEVICE_TYPE);
  }
  // Valid, but the platform has no CPU or accelerator: not found.
  for (cl_device_type none :
       {cl_device_type{CL_DEVICE_TYPE_CPU}, cl_device_type{CL_DEVICE_TYPE_ACCELERATOR}}) {
    SCOPED_TRACE(none);
    EXPECT_EQ(get_ids(none), CL_DEVICE_NOT_FOUND);
    EXPECT_EQ(from_type(none), CL_DEVICE_NOT_FOUND);
  }
  for (cl_device_type ok : {cl_device_type{CL_DEVICE_TYPE_ALL}, cl_device_type{CL_DEVICE_TYPE_GPU},
                            cl_device_type{CL_DEVICE_TYPE_DEFAULT}}) {
    SCOPED_TRACE(ok);
    EXPECT_EQ(get_ids(ok), CL_SUCCESS);
    EXPECT_EQ(from_type(ok), CL_SUCCESS);
  }
  this->Teardown();
}

// context_cost=: each live context holds device memory (as NVIDIA's driver's contexts do), given
// back when it is destroyed; a context that does not fit is refused. free_query=amd: the device
// answers AMD's free-memory query (free KiB = capacity - committed) and lists its extension.
TYPED_TEST(Battery, ContextsCostMemoryAndTheFreeQueryAnswers) {
  auto* d = this->d_;
  constexpr cl_device_info free_amd = 0x4039;  // CL_DEVICE_GLOBAL_FREE_MEMORY_AMD
  this->Setup("gpu-64m:context_cost=8m,free_query=amd;gpu-64m");
  const auto free_kib = [&](cl_device_id dev, cl_int* status = nullptr) {
    size_t kib[2] = {0, 0};
    const cl_int s = d->clGetDeviceInfo(dev, free_amd, sizeof kib, kib, nullptr);
    if (status) *status = s;
    EXPECT_EQ(kib[0], kib[1]);
    return kib[0];
  };
  EXPECT_EQ(this->Outstanding(), 8 * kMiB);
  EXPECT_EQ(free_kib(this->devices_[0]), 56u * 1024);
  char ext[4096];
  ASSERT_EQ(d->clGetDeviceInfo(this->devices_[0], CL_DEVICE_EXTENSIONS, sizeof ext, ext, nullptr),
            CL_SUCCESS);
  EXPECT_NE(std::string(ext).find("cl_amd_device_attribute_query"), std::string::npos) << ext;
  // The second device: no cost, no query, no extension.
  cl_int status = CL_SUCCESS;
  free_kib(this->devices_[1], &status);
  EXPECT_EQ(status, CL_INVALID_VALUE);
  ASSERT_EQ(d->clGetDeviceInfo(this->devices_[1], CL_DEVICE_EXTENSIONS, sizeof ext, ext, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(std::string(ext).find("cl_amd_device_attribute_query"), std::string::npos) << ext;
  // A buffer and a second context both come off the free memory.
  cl_int err = CL_SUCCESS;
  cl_mem m = this->Buf(4 * kMiB);
  cl_context second = d->clCreateContext(nullptr, 1, &this->devices_[0], nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(free_kib(this->devices_[0]), 44u * 1024);
  EXPECT_EQ(d->clReleaseContext(second), CL_SUCCESS);
  EXPECT_EQ(free_kib(this->devices_[0]), 52u * 1024);
  EXPECT_EQ(d->clReleaseMemObject(m), CL_SUCCESS);
  // Both devices in one context: only the first one's memory is taken.
  cl_context both = d->clCreateContext(nullptr, 2, this->devices_.data(), nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(free_kib(this->devices_[0]), 48u * 1024);
  EXPECT_EQ(this->ctl_->snapshot().devices.at(1).outstanding, 0u);
  EXPECT_EQ(d->clReleaseContext(both), CL_SUCCESS);
  this->Teardown();
  // Every context gone: all of it back.
  EXPECT_EQ(this->Outstanding(), 0u);
  // No room for a context: refused, and nothing is taken.
  this->Setup("gpu-64m:context_cost=40m");
  cl_context no_room = d->clCreateContext(nullptr, 1, &this->devices_[0], nullptr, nullptr, &err);
  EXPECT_EQ(no_room, nullptr);
  EXPECT_EQ(err, CL_OUT_OF_RESOURCES);
  EXPECT_EQ(this->Outstanding(), 40 * kMiB);
  this->Teardown();
}

// A sub-buffer's flags (OpenCL 3.0, clCreateSubBuffer): access bits it gives must be compatible
// with its parent's, those it does not give are inherited, and so are the parent's host-pointer
// bits (the CTS's get_buffer_info reads CL_MEM_FLAGS = READ_WRITE | COPY_HOST_PTR on such a
// sub-buffer).
TYPED_TEST(Battery, SubBufferFlagsFollowTheParent) {
  this->Setup("gpu");
  const auto* d = this->d_;
  cl_int err;
  std::vector<char> host(4096, 1);
  auto make = [&](cl_mem_flags f, void* p) {
    cl_mem m = d->clCreateBuffer(this->ctx_, f, 4096, p, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    return m;
  };
  auto flags_of = [&](cl_mem m) {
    cl_mem_flags f = 0;
    EXPECT_EQ(d->clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof f, &f, nullptr), CL_SUCCESS);
    return f;
  };
  const cl_buffer_region r{0, 1024};
  auto sub = [&](cl_mem parent, cl_mem_flags f) {
    return d->clCreateSubBuffer(parent, f, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  };
  cl_mem copied = make(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.data());
  cl_mem s = sub(copied, 0);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(flags_of(s), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR);
  d->clReleaseMemObject(s);
  s = sub(copied, CL_MEM_READ_ONLY | CL_MEM_HOST_READ_ONLY);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(flags_of(s), CL_MEM_READ_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_COPY_HOST_PTR);
  d->clReleaseMemObject(s);
  EXPECT_EQ(sub(copied, CL_MEM_USE_HOST_PTR), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(sub(copied, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  cl_mem write_only = make(CL_MEM_WRITE_ONLY | CL_MEM_HOST_WRITE_ONLY, nullptr);
  EXPECT_EQ(sub(write_only, CL_MEM_READ_WRITE), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(sub(write_only, CL_MEM_READ_ONLY), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(sub(write_only, CL_MEM_HOST_READ_ONLY), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  s = sub(write_only, 0);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(flags_of(s), CL_MEM_WRITE_ONLY | CL_MEM_HOST_WRITE_ONLY);
  d->clReleaseMemObject(s);
  s = sub(write_only, CL_MEM_HOST_NO_ACCESS);  // Narrowing host access is allowed.
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(flags_of(s), CL_MEM_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS);
  d->clReleaseMemObject(s);
  cl_mem no_host = make(CL_MEM_HOST_NO_ACCESS, nullptr);
  EXPECT_EQ(sub(no_host, CL_MEM_HOST_WRITE_ONLY), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  d->clReleaseMemObject(no_host);
  d->clReleaseMemObject(write_only);
  d->clReleaseMemObject(copied);
  this->Teardown();
}

TYPED_TEST(Battery, ImmediateCapacityIsEnforced) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  std::vector<cl_mem> ms;
  for (int i = 0; i < 4; ++i) ms.push_back(this->Buf(16 * kMiB));
  cl_int err;
  EXPECT_EQ(this->Buf(1, &err), nullptr);
  EXPECT_EQ(err, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(this->Outstanding(), 64 * kMiB);
  EXPECT_EQ(d->clReleaseMemObject(ms.back()), CL_SUCCESS);
  ms.pop_back();
  EXPECT_EQ(this->Outstanding(), 48 * kMiB);
  ms.push_back(this->Buf(16 * kMiB));
  EXPECT_EQ(this->Buf(64 * kMiB + 1, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_BUFFER_SIZE);
  EXPECT_EQ(this->Buf(0, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_BUFFER_SIZE);
  for (cl_mem m : ms) d->clReleaseMemObject(m);
  accounting_snapshot s = this->ctl_->snapshot();
  EXPECT_EQ(s.devices[0].outstanding, 0u);
  EXPECT_EQ(s.devices[0].peak, 64 * kMiB);
  ASSERT_EQ(s.contexts.size(), 1u);
  EXPECT_EQ(s.contexts[0].peak, 64 * kMiB);
  EXPECT_EQ(s.calls["clCreateBuffer"], 8u);
  EXPECT_EQ(s.live["mem"], 0u);
  this->Teardown();
  EXPECT_EQ(this->ctl_->snapshot().live["context"], 0u);
}

TYPED_TEST(Battery, HostOomSemantics) {
  this->Setup("gpu-64m:semantics=host_oom");
  cl_mem a = this->Buf(40 * kMiB);
  cl_int err;
  EXPECT_EQ(this->Buf(40 * kMiB, &err), nullptr);
  EXPECT_EQ(err, CL_OUT_OF_HOST_MEMORY);
  this->d_->clReleaseMemObject(a);
  this->Teardown();
}

TYPED_TEST(Battery, DeferredSemanticsChargeAtFirstUse) {
  this->Setup("gpu-64m:semantics=deferred");
  auto* d = this->d_;
  cl_mem a = this->Buf(40 * kMiB), b = this->Buf(40 * kMiB), c = this->Buf(40 * kMiB);
  EXPECT_EQ(this->Outstanding(), 0u);  // Creation charges nothing.
  EXPECT_EQ(d->clEnqueueMigrateMemObjects(this->q_, 1, &a, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED,
                                          0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), 40 * kMiB);
  EXPECT_EQ(d->clEnqueueMigrateMemObjects(this->q_, 1, &b, 0, 0, nullptr, nullptr),
            CL_MEM_OBJECT_ALLOCATION_FAILURE);
  int x = 7;
  EXPECT_EQ(d->clEnqueueWriteBuffer(this->q_, c, CL_TRUE, 0, sizeof x, &x, 0, nullptr, nullptr),
            CL_MEM_OBJECT_ALLOCATION_FAILURE);
  d->clReleaseMemObject(a);
  EXPECT_EQ(d->clEnqueueWriteBuffer(this->q_, c, CL_TRUE, 0, sizeof x, &x, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), 40 * kMiB);
  d->clReleaseMemObject(b);
  d->clReleaseMemObject(c);
  EXPECT_EQ(this->Outstanding(), 0u);
  this->Teardown();
}

TYPED_TEST(Battery, DeferredOomAtExecutionShowsInTheEvent) {
  this->Setup("gpu-64m:semantics=deferred,oom_at=execution");
  auto* d = this->d_;
  cl_mem a = this->Buf(40 * kMiB), b = this->Buf(40 * kMiB);
  cl_event ea, eb;
  ASSERT_EQ(d->clEnqueueMigrateMemObjects(this->q_, 1, &a, 0, 0, nullptr, &ea), CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueMigrateMemObjects(this->q_, 1, &b, 0, 0, nullptr, &eb),
            CL_SUCCESS);  // Accepted...
  EXPECT_EQ(d->clWaitForEvents(1, &eb), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  EXPECT_EQ(this->Status(ea), CL_COMPLETE);
  EXPECT_EQ(this->Status(eb), CL_MEM_OBJECT_ALLOCATION_FAILURE);  // ...fails in its event.
  int x = 1;
  // A blocking call whose own command fails returns that command's status, not -14 (which is
  // for the events of its wait list, and it has none).
  EXPECT_EQ(d->clEnqueueWriteBuffer(this->q_, b, CL_TRUE, 0, 4, &x, 0, nullptr, nullptr),
            CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(d->clEnqueueReadBuffer(this->q_, b, CL_TRUE, 0, 4, &x, 0, nullptr, nullptr),
            CL_MEM_OBJECT_ALLOCATION_FAILURE);
  cl_int map_status = CL_SUCCESS;
  EXPECT_EQ(d->clEnqueueMapBuffer(this->q_, b, CL_TRUE, CL_MAP_READ, 0, 4, 0, nullptr, nullptr,
                                  &map_status),
            nullptr);
  EXPECT_EQ(map_status, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  // One whose wait list holds the failed event gets -14.
  EXPECT_EQ(d->clEnqueueReadBuffer(this->q_, a, CL_TRUE, 0, 4, &x, 1, &eb, nullptr),
            CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  EXPECT_EQ(this->Outstanding(), 40 * kMiB);
  d->clReleaseMemObject(a);
  EXPECT_EQ(d->clEnqueueWriteBuffer(this->q_, b, CL_TRUE, 0, 4, &x, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), 40 * kMiB);
  d->clReleaseEvent(ea);
  d->clReleaseEvent(eb);
  d->clReleaseMemObject(b);
  this->Teardown();
}

// Where out-of-memory shows in the event, a command that uses two fresh buffers of which only one
// fits fails whole: neither stays charged (as at an enqueue, AFailedEnqueueChargesNothing).
TYPED_TEST(Battery, AFailedCommandAtExecutionChargesNothing) {
  this->Setup("gpu-64m:semantics=deferred,oom_at=execution,max_alloc=64m");
  auto* d = this->d_;
  cl_mem x = this->Buf(40 * kMiB), y = this->Buf(40 * kMiB);
  cl_event copy, migrate;
  ASSERT_EQ(d->clEnqueueCopyBuffer(this->q_, x, y, 0, 0, 64, 0, nullptr, &copy), CL_SUCCESS);
  cl_mem both[] = {x, y};
  ASSERT_EQ(d->clEnqueueMigrateMemObjects(this->q_, 2, both, 0, 0, nullptr, &migrate), CL_SUCCESS);
  d->clFinish(this->q_);
  EXPECT_EQ(this->Status(copy), CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(this->Status(migrate), CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(this->Outstanding(), 0u);
  // Each alone still fits, and is charged once.
  const int pat = 1;
  cl_event fill;
  ASSERT_EQ(d->clEnqueueFillBuffer(this->q_, y, &pat, sizeof pat, 0, 64, 0, nullptr, &fill),
            CL_SUCCESS);
  ASSERT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  EXPECT_EQ(this->Status(fill), CL_COMPLETE);
  EXPECT_EQ(this->Outstanding(), 40 * kMiB);
  for (cl_event e : {copy, migrate, fill}) d->clReleaseEvent(e);
  d->clReleaseMemObject(x);
  d->clReleaseMemObject(y);
  EXPECT_EQ(this->Outstanding(), 0u);
  this->Teardown();
}

// OpenCL 3.0 lists no CL_INVALID_VALUE for a fill of size 0 (its errors: a region out of bounds,
// no pattern, a pattern size of 0, not a power of two or above 128, an offset or size not a
// multiple of it), nor did 1.2 or 2.x; POCL 3.1 accepts one. So it is a fill of nothing, while
// the other arguments are still checked.
TYPED_TEST(Battery, AFillOfSizeZeroFillsNothingAndStillChecksItsArguments) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_mem b = this->Buf(256);
  std::vector<unsigned char> in(256, 5), out(256, 0);
  ASSERT_EQ(d->clEnqueueWriteBuffer(this->q_, b, CL_TRUE, 0, 256, in.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  const int pat = 0x01020304;
  cl_event fill;
  EXPECT_EQ(d->clEnqueueFillBuffer(this->q_, b, &pat, sizeof pat, 0, 0, 0, nullptr, &fill),
            CL_SUCCESS);
  EXPECT_EQ(d->clEnqueueFillBuffer(this->q_, b, &pat, sizeof pat, 256, 0, 0, nullptr, nullptr),
            CL_SUCCESS);  // at the end: still in bounds
  ASSERT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  EXPECT_EQ(this->Status(fill), CL_COMPLETE);
  d->clReleaseEvent(fill);
  ASSERT_EQ(d->clEnqueueReadBuffer(this->q_, b, CL_TRUE, 0, 256, out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(out, in);
  EXPECT_EQ(d->clEnqueueFillBuffer(this->q_, b, &pat, sizeof pat, 260, 0, 0, nullptr, nullptr),
            CL_INVALID_VALUE);  // past the end
  EXPECT_EQ(d->clEnqueueFillBuffer(this->q_, b, nullptr, sizeof pat, 0, 0, 0, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(d->clEnqueueFillBuffer(this->q_, b, &pat, 3, 0, 0, 0, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(d->clEnqueueFillBuffer(this->q_, b, &pat, sizeof pat, 2, 0, 0, nullptr, nullptr),
            CL_INVALID_VALUE);  // offset not a multiple of the pattern
  d->clReleaseMemObject(b);
  this->Teardown();
}

TYPED_TEST(Battery, DataRoundTripsReadWriteFillCopyMap) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_mem a = this->Buf(4096), b = this->Buf(4096);
  std::vector<int> in(1024), out(1024, 0);
  for (int i = 0; i < 1024; ++i) in[i] = i * 3;
  ASSERT_EQ(d->clEnqueueWriteBuffer(this->q_, a, CL_FALSE, 0, 4096, in.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueCopyBuffer(this->q_, a, b, 0, 0, 4096, 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueReadBuffer(this->q_, b, CL_TRUE, 0, 4096, out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(in, out);
  int pat = 0x01020304;
  ASSERT_EQ(d->clEnqueueFillBuffer(this->q_, b, &pat, sizeof pat, 64, 128, 0, nullptr, nullptr),
            CL_SUCCESS);
  cl_int err;
  auto* p = static_cast<int*>(d->clEnqueueMapBuffer(
      this->q_, b, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, 4096, 0, nullptr, nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(p[15], 45);
  EXPECT_EQ(p[16], pat);
  EXPECT_EQ(p[47], pat);
  EXPECT_EQ(p[48], 144);
  p[0] = -1;
  cl_uint maps = 0;
  d->clGetMemObjectInfo(b, CL_MEM_MAP_COUNT, sizeof maps, &maps, nullptr);
  EXPECT_EQ(maps, 1u);
  ASSERT_EQ(d->clEnqueueUnmapMemObject(this->q_, b, p, 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueReadBuffer(this->q_, b, CL_TRUE, 0, 4, out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(out[0], -1);
  EXPECT_EQ(
      d->clEnqueueReadBuffer(this->q_, b, CL_TRUE, 4000, 200, out.data(), 0, nullptr, nullptr),
      CL_INVALID_VALUE);
  EXPECT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  // Sub-buffers share their parent's bytes.
  cl_buffer_region r{1024, 1024};
  cl_mem sub = d->clCreateSubBuffer(b, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  int v = 0;
  ASSERT_EQ(d->clEnqueueReadBuffer(this->q_, sub, CL_TRUE, 0, 4, &v, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(v, 256 * 3);
  cl_buffer_region bad{1000, 16};
  EXPECT_EQ(d->clCreateSubBuffer(b, 0, CL_BUFFER_CREATE_TYPE_REGION, &bad, &err), nullptr);
  EXPECT_EQ(err, CL_MISALIGNED_SUB_BUFFER_OFFSET);
  // CL_DEVICE_MEM_BASE_ADDR_ALIGN is in bits: 1024 bits allow an origin of 128 bytes.
  cl_uint align_bits = 0;
  ASSERT_EQ(d->clGetDeviceInfo(this->devices_[0], CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits,
                               &align_bits, nullptr),
            CL_SUCCESS);
  cl_buffer_region aligned{align_bits / 8, 16};
  cl_mem sub2 = d->clCreateSubBuffer(b, 0, CL_BUFFER_CREATE_TYPE_REGION, &aligned, &err);
  EXPECT_EQ(err, CL_SUCCESS);
  if (sub2 != nullptr) d->clReleaseMemObject(sub2);
  cl_buffer_region half{align_bits / 16, 16};
  EXPECT_EQ(d->clCreateSubBuffer(b, 0, CL_BUFFER_CREATE_TYPE_REGION, &half, &err), nullptr);
  EXPECT_EQ(err, CL_MISALIGNED_SUB_BUFFER_OFFSET);
  cl_buffer_region big{2048, 4096};
  EXPECT_EQ(d->clCreateSubBuffer(b, 0, CL_BUFFER_CREATE_TYPE_REGION, &big, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  // The parent stays alive (and charged) while the sub-buffer lives.
  d->clReleaseMemObject(b);
  EXPECT_EQ(this->Outstanding(), 8192u);
  d->clReleaseMemObject(sub);
  EXPECT_EQ(this->Outstanding(), 4096u);
  d->clReleaseMemObject(a);
  this->Teardown();
}

TYPED_TEST(Battery, ReleasedMemoryReturnsWhenCommandsComplete) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_int err;
  cl_event gate = d->clCreateUserEvent(this->ctx_, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem a = this->Buf(32 * kMiB);
  int x = 1;
  cl_event w;
  ASSERT_EQ(d->clEnqueueWriteBuffer(this->q_, a, CL_FALSE, 0, 4, &x, 1, &gate, &w), CL_SUCCESS);
  EXPECT_EQ(this->Status(w), CL_QUEUED);
  ASSERT_EQ(d->clReleaseMemObject(a), CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), 32 * kMiB);  // Still in use by the gated write.
  EXPECT_EQ(this->Buf(40 * kMiB, &err), nullptr);
  ASSERT_EQ(d->clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  ASSERT_EQ(d->clWaitForEvents(1, &w), CL_SUCCESS);
  EXPECT_EQ(this->Status(w), CL_COMPLETE);
  EXPECT_EQ(this->Outstanding(), 0u);
  accounting_snapshot s = this->ctl_->snapshot();
  ASSERT_EQ(s.frees.size(), 1u);
  EXPECT_EQ(s.frees[0].kind, "mem");
  EXPECT_EQ(s.frees[0].size, 32 * kMiB);
  EXPECT_EQ(s.frees[0].time, s.commands.back().end);  // Freed when the write completed.
  d->clReleaseEvent(w);
  d->clReleaseEvent(gate);
  this->Teardown();
}

// In eager mode a command runs at enqueue, but its virtual end lies ahead of the host clock. A
// buffer or SVM block released right after it must not be recorded as freed before that end
// (found by //fuzz:svm_ordering_fuzzer: the free_record said the host clock).
TYPED_TEST(Battery, RealFreeIsNotRecordedBeforeTheLastUseEnds) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_mem a = this->Buf(kMiB);
  const cl_uint pattern = 7;
  ASSERT_EQ(d->clEnqueueFillBuffer(this->q_, a, &pattern, 4, 0, kMiB, 0, nullptr, nullptr),
            CL_SUCCESS);
  void* p = d->clSVMAlloc(this->ctx_, CL_MEM_READ_WRITE, kMiB, 0);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(d->clEnqueueSVMMemFill(this->q_, p, &pattern, 4, kMiB, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clReleaseMemObject(a), CL_SUCCESS);
  d->clSVMFree(this->ctx_, p);
  accounting_snapshot s = this->ctl_->snapshot();
  ASSERT_EQ(s.commands.size(), 2u);
  ASSERT_EQ(s.frees.size(), 2u);
  EXPECT_GT(s.commands[0].end, s.now) << "the fill ended after the host clock: the case at hand";
  EXPECT_EQ(s.frees[0].kind, "mem");
  EXPECT_GE(s.frees[0].time, s.commands[0].end);
  EXPECT_EQ(s.frees[1].kind, "svm");
  EXPECT_GE(s.frees[1].time, s.commands[1].end);
  this->Teardown();
}

TYPED_TEST(Battery, EventStatusPropagatesAndProfilingAnswers) {
  this->Setup("gpu-64m", CL_QUEUE_PROFILING_ENABLE);
  auto* d = this->d_;
  cl_int err;
  cl_event gate = d->clCreateUserEvent(this->ctx_, &err);
  cl_mem a = this->Buf(4096);
  cl_event m1, m2;
  ASSERT_EQ(d->clEnqueueMigrateMemObjects(this->q_, 1, &a, 0, 1, &gate, &m1), CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueMarkerWithWaitList(this->q_, 1, &m1, &m2), CL_SUCCESS);
  std::atomic<int> called{0};
  std::atomic<int> seen{1};
  struct Ctx {
    std::atomic<int>* called;
    std::atomic<int>* seen;
  } cbctx{&called, &seen};
  ASSERT_EQ(d->clSetEventCallback(
                m2, CL_COMPLETE,
                [](cl_event, cl_int s, void* p) {
                  auto* c = static_cast<Ctx*>(p);
                  c->seen->store(s);
                  c->called->fetch_add(1);
                },
                &cbctx),
            CL_SUCCESS);
  ASSERT_EQ(d->clSetUserEventStatus(gate, -42), CL_SUCCESS);
  EXPECT_EQ(d->clWaitForEvents(1, &m2), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  EXPECT_EQ(this->Status(m1), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  EXPECT_EQ(this->Status(m2), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  EXPECT_EQ(called.load(), 1);
  EXPECT_EQ(seen.load(), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  // A good command on the same queue still runs and has profiling times.
  cl_event w;
  int x = 3;
  ASSERT_EQ(d->clEnqueueWriteBuffer(this->q_, a, CL_TRUE, 0, 4, &x, 0, nullptr, &w), CL_SUCCESS);
  cl_ulong q = 0, s = 0, e = 0;
  ASSERT_EQ(d->clGetEventProfilingInfo(w, CL_PROFILING_COMMAND_QUEUED, sizeof q, &q, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clGetEventProfilingInfo(w, CL_PROFILING_COMMAND_START, sizeof s, &s, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clGetEventProfilingInfo(w, CL_PROFILING_COMMAND_END, sizeof e, &e, nullptr),
            CL_SUCCESS);
  EXPECT_LE(q, s);
  EXPECT_LT(s, e);
  for (cl_event ev : {gate, m1, m2, w}) d->clReleaseEvent(ev);
  d->clReleaseMemObject(a);
  this->Teardown();
}

TYPED_TEST(Battery, CommandLogShowsCrossQueueOrdering) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_command_queue q2 = this->NewQueue();
  cl_mem a = this->Buf(4096), b = this->Buf(4096);
  cl_program prog;
  cl_kernel k = this->Kernel(&prog);
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof(cl_mem), &a), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(k, 1, sizeof(cl_mem), &b), CL_SUCCESS);
  size_t g = 64;
  ASSERT_EQ(d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  int x = 0;
  // Unordered use of `a` on q2: it overlaps the kernel in virtual time.
  ASSERT_EQ(d->clEnqueueWriteBuffer(q2, a, CL_FALSE, 0, 4, &x, 0, nullptr, nullptr), CL_SUCCESS);
  // Ordered use: a marker on q_ that q2 waits for.
  cl_event mk;
  ASSERT_EQ(d->clEnqueueMarkerWithWaitList(this->q_, 0, nullptr, &mk), CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueWriteBuffer(q2, a, CL_TRUE, 0, 4, &x, 1, &mk, nullptr), CL_SUCCESS);
  accounting_snapshot s = this->ctl_->snapshot();
  ASSERT_EQ(s.commands.size(), 4u);
  const auto& kern = s.commands[0];
  EXPECT_EQ(kern.kind, "kernel");
  EXPECT_EQ(kern.queue_id, this->ctl_->object_id(this->q_));
  uint64_t ida = this->ctl_->object_id(a);
  EXPECT_EQ(kern.mems, (std::vector<uint64_t>{ida, this->ctl_->object_id(b)}));
  EXPECT_EQ(s.commands[1].queue_id, this->ctl_->object_id(q2));
  EXPECT_LT(s.commands[1].start, kern.end);  // The race is visible.
  EXPECT_EQ(s.commands[2].kind, "marker");
  EXPECT_GE(s.commands[3].start, kern.end);  // The marker orders it.
  d->clReleaseEvent(mk);
  d->clReleaseKernel(k);
  d->clReleaseProgram(prog);
  d->clReleaseMemObject(a);
  d->clReleaseMemObject(b);
  d->clReleaseCommandQueue(q2);
  this->Teardown();
  EXPECT_EQ(this->ctl_->snapshot().live["kernel"], 0u);
}

// kernel_ns is at most one week (2^64 - 1 wrapped the virtual clock at the first launch: END before
// START). Past 2^64 ns, some 30500 week-long kernels, the clock saturates rather than wrap: a
// kernel's profiled END is never before its START, and the host's clock stays at the end.
TYPED_TEST(Battery, VirtualClockSaturatesInsteadOfWrapping) {
  // The clock is the runtime's, the same in both; 30600 launches through the loader took 4 s.
  if (!std::is_same_v<TypeParam, InProcess>) GTEST_SKIP() << "in-process only";
  this->Setup("gpu-64m", CL_QUEUE_PROFILING_ENABLE);
  auto* d = this->d_;
  EXPECT_NE(this->ctl_->configure_schedule("kernel_ns=18446744073709551615"), "");
  ASSERT_EQ(this->ctl_->configure_schedule("kernel_ns=604800000000000"), "");
  cl_program prog;
  cl_kernel k = this->Kernel(&prog);
  cl_mem a = this->Buf(64);
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof(cl_mem), &a), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(k, 1, sizeof(cl_mem), &a), CL_SUCCESS);
  const size_t global = 1;
  const auto profile = [&](cl_event e, cl_profiling_info what) {
    cl_ulong t = 0;
    EXPECT_EQ(d->clGetEventProfilingInfo(e, what, sizeof t, &t, nullptr), CL_SUCCESS);
    return t;
  };
  cl_event first = nullptr, last = nullptr;
  ASSERT_EQ(
      d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &global, nullptr, 0, nullptr, &first),
      CL_SUCCESS);
  ASSERT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  EXPECT_EQ(profile(first, CL_PROFILING_COMMAND_END) - profile(first, CL_PROFILING_COMMAND_START),
            604800000000000u);
  for (int i = 0; i < 30600; ++i) {  // 30600 weeks > 2^64 ns
    ASSERT_EQ(d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &global, nullptr, 0, nullptr,
                                        i + 1 == 30600 ? &last : nullptr),
              CL_SUCCESS);
  }
  ASSERT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  EXPECT_EQ(profile(last, CL_PROFILING_COMMAND_END), UINT64_MAX);
  EXPECT_LE(profile(last, CL_PROFILING_COMMAND_START), profile(last, CL_PROFILING_COMMAND_END));
  EXPECT_EQ(this->ctl_->snapshot().now, UINT64_MAX);
  EXPECT_EQ(this->Status(last), CL_COMPLETE);  // One more call: the clock does not wrap to 0.
  EXPECT_EQ(this->ctl_->snapshot().now, UINT64_MAX);
  d->clReleaseEvent(first);
  d->clReleaseEvent(last);
  EXPECT_EQ(d->clReleaseMemObject(a), CL_SUCCESS);
  d->clReleaseKernel(k);
  d->clReleaseProgram(prog);
  this->Teardown();
}

TYPED_TEST(Battery, LazyModeAndSeededOutOfOrder) {
  this->Setup("gpu-64m", CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  auto* d = this->d_;
  std::vector<cl_mem> ms;
  for (int i = 0; i < 8; ++i) ms.push_back(this->Buf(64));
  auto order = [&](const std::string& sched) {
    EXPECT_EQ(this->ctl_->configure_schedule(sched), "");
    size_t before = this->ctl_->snapshot().commands.size();
    int x = 0;
    cl_event last;
    for (cl_mem m : ms)
      EXPECT_EQ(d->clEnqueueWriteBuffer(this->q_, m, CL_FALSE, 0, 4, &x, 0, nullptr, nullptr),
                CL_SUCCESS);
    EXPECT_EQ(d->clEnqueueBarrierWithWaitList(this->q_, 0, nullptr, nullptr), CL_SUCCESS);
    EXPECT_EQ(d->clEnqueueWriteBuffer(this->q_, ms[0], CL_FALSE, 0, 4, &x, 0, nullptr, &last),
              CL_SUCCESS);
    if (sched.find("lazy") != std::string::npos) {
      EXPECT_EQ(this->Status(last), CL_QUEUED);  // Nothing runs before a flush.
      EXPECT_EQ(this->ctl_->snapshot().commands.size(), before);
    }
    EXPECT_EQ(d->clFlush(this->q_), CL_SUCCESS);
    EXPECT_EQ(d->clFinish(this->q_), CL_SUCCESS);
    EXPECT_EQ(this->Status(last), CL_COMPLETE);
    d->clReleaseEvent(last);
    accounting_snapshot s = this->ctl_->snapshot();
    std::vector<uint64_t> ids;
    for (size_t i = before; i < s.commands.size(); ++i) ids.push_back(s.commands[i].id);
    return std::make_pair(ids, s);
  };
  auto [fifo, s0] = order("lazy");
  EXPECT_TRUE(std::is_sorted(fifo.begin(), fifo.end()));
  auto [a1, s1] = order("lazy,seed=7");
  auto [a2, s2] = order("lazy,seed=7");
  auto [b1, s3] = order("lazy,seed=12345");
  // Normalise: ids relative to the first executed command differ; compare as permutations.
  auto norm = [](std::vector<uint64_t> v) {
    auto mn = *std::min_element(v.begin(), v.end());
    for (auto& x : v) x -= mn;
    return v;
  };
  EXPECT_EQ(norm(a1), norm(a2));  // Same seed, same order.
  EXPECT_NE(norm(a1), norm(fifo));
  EXPECT_FALSE(norm(a1) == norm(b1) && norm(a1) == norm(fifo));
  // The barrier (index 8) runs after all eight writes, the last write after the barrier.
  for (const auto& v : {norm(a1), norm(b1)}) {
    ASSERT_EQ(v.size(), 10u);
    EXPECT_EQ(v[8], 8u);
    EXPECT_EQ(v[9], 9u);
  }
  for (cl_mem m : ms) d->clReleaseMemObject(m);
  this->Teardown();
}

TYPED_TEST(Battery, SvmAllocFreeAndQueueOrderedFree) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  void* p = d->clSVMAlloc(this->ctx_, CL_MEM_READ_WRITE, 32 * kMiB, 0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(d->clSVMAlloc(this->ctx_, CL_MEM_READ_WRITE, 48 * kMiB, 0), nullptr);  // OOM: NULL.
  EXPECT_EQ(d->clSVMAlloc(this->ctx_, CL_MEM_READ_WRITE, 65 * kMiB, 0),
            nullptr);  // Above max alloc.
  int pat = 5;
  ASSERT_EQ(d->clEnqueueSVMMemFill(this->q_, p, &pat, sizeof pat, 4096, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueSVMMap(this->q_, CL_TRUE, CL_MAP_READ, p, 4096, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(static_cast<int*>(p)[1023], 5);
  ASSERT_EQ(d->clEnqueueSVMUnmap(this->q_, p, 0, nullptr, nullptr), CL_SUCCESS);
  // The map flags' rules are clEnqueueMapBuffer's: CL_MAP_WRITE_INVALIDATE_REGION alone, and no
  // unknown bit (CL_INVALID_VALUE, nothing mapped).
  for (cl_map_flags bad : {cl_map_flags{CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION},
                           cl_map_flags{CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION},
                           cl_map_flags{CL_MAP_READ | (cl_map_flags{1} << 20)}}) {
    EXPECT_EQ(d->clEnqueueSVMMap(this->q_, CL_TRUE, bad, p, 4096, 0, nullptr, nullptr),
              CL_INVALID_VALUE)
        << bad;
  }
  std::vector<int> host(16, 9);
  ASSERT_EQ(d->clEnqueueSVMMemcpy(this->q_, CL_TRUE, p, host.data(), 64, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(static_cast<int*>(p)[15], 9);
  EXPECT_EQ(this->ctl_->snapshot().live["svm"], 1u);
  // A kernel gated by a user event uses the block; the queued free runs only after it.
  EXPECT_EQ(this->ctl_->configure_schedule("lazy"), "");
  cl_program prog;
  cl_kernel k = this->Kernel(&prog);
  ASSERT_EQ(d->clSetKernelArgSVMPointer(k, 0, p), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArgSVMPointer(k, 1, static_cast<char*>(p) + 64), CL_SUCCESS);
  size_t g = 1;
  ASSERT_EQ(d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  static std::atomic<int> freed_calls{0};
  freed_calls = 0;
  void* ptrs[] = {p};
  cl_event fe;
  ASSERT_EQ(d->clEnqueueSVMFree(this->q_, 1, ptrs, nullptr, nullptr, 0, nullptr, &fe), CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), 32 * kMiB);  // Not yet executed (lazy).
  EXPECT_EQ(d->clEnqueueSVMFree(this->q_, 1, ptrs, nullptr, nullptr, 0, nullptr, nullptr),
            CL_INVALID_VALUE);
  ASSERT_EQ(d->clWaitForEvents(1, &fe), CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), 0u);
  accounting_snapshot s = this->ctl_->snapshot();
  ASSERT_GE(s.commands.size(), 2u);
  const auto& kern = s.commands[s.commands.size() - 2];
  const auto& fr = s.commands.back();
  EXPECT_EQ(kern.kind, "kernel");
  EXPECT_EQ(fr.kind, "svm_free");
  EXPECT_GE(fr.start, kern.end);
  ASSERT_EQ(kern.svm.size(), 2u);
  EXPECT_EQ(kern.svm[0].address, reinterpret_cast<uint64_t>(p));
  EXPECT_EQ(fr.svm.at(0).size, 32 * kMiB);
  EXPECT_EQ(s.live["svm"], 0u);
  ASSERT_EQ(s.frees.size(), 1u);
  EXPECT_EQ(s.frees[0].kind, "svm");
  EXPECT_EQ(s.frees[0].address, reinterpret_cast<uint64_t>(p));
  EXPECT_EQ(s.frees[0].size, 32 * kMiB);
  EXPECT_GE(s.frees[0].time, kern.end);  // The real free follows every use.
  EXPECT_GE(s.reports.double_release, 1u);
  // With a callback, the callback gets the pointers (and frees them itself).
  void* q = d->clSVMAlloc(this->ctx_, 0, kMiB, 0);
  ASSERT_NE(q, nullptr);
  struct Free {
    const cl_icd_dispatch* d;
    cl_context ctx;
  } fctx{d, this->ctx_};
  void* qs[] = {q};
  ASSERT_EQ(d->clEnqueueSVMFree(
                this->q_, 1, qs,
                [](cl_command_queue, cl_uint n, void* ps[], void* data) {
                  auto* f = static_cast<Free*>(data);
                  for (cl_uint i = 0; i < n; ++i) f->d->clSVMFree(f->ctx, ps[i]);
                  freed_calls++;
                },
                &fctx, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  EXPECT_EQ(freed_calls.load(), 1);
  EXPECT_EQ(this->Outstanding(), 0u);
  d->clReleaseEvent(fe);
  d->clReleaseKernel(k);
  d->clReleaseProgram(prog);
  this->Teardown();
}

// SVM commands go through the enqueue prologue every command shares: the call log names their
// queue, as it does a buffer command's.
TYPED_TEST(Battery, SvmCommandsLogTheirQueue) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  void* p = d->clSVMAlloc(this->ctx_, CL_MEM_READ_WRITE, 4096, 0);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(this->ctl_->configure_call_log(":memory:"), "");
  int pat = 7;
  ASSERT_EQ(d->clEnqueueSVMMemFill(this->q_, p, &pat, sizeof pat, 4096, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueSVMMap(this->q_, CL_TRUE, CL_MAP_READ, p, 4096, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueSVMUnmap(this->q_, p, 0, nullptr, nullptr), CL_SUCCESS);
  const accounting_snapshot s = this->ctl_->snapshot();
  ASSERT_EQ(this->ctl_->configure_call_log(""), "");
  std::vector<std::string> svm_calls;  // the lines of the SVM enqueues, in order
  for (const std::string& line : s.call_log) {
    if (line.find("\"call\":\"clEnqueueSVM") != std::string::npos) svm_calls.push_back(line);
  }
  ASSERT_EQ(svm_calls.size(), 3u);
  for (const std::string& line : svm_calls) {
    EXPECT_NE(line.find("\"queue\":\"queue#"), std::string::npos) << line;
  }
  d->clSVMFree(this->ctx_, p);
  this->Teardown();
}

// svm_oom_at=first_use: clSVMAlloc charges nothing, the first command that uses a block charges
// it, and one that does not fit fails at its enqueue with the profile's status (nothing queued,
// the block still uncharged); migrating to the host charges nothing; a free of a block never used
// credits nothing.
TYPED_TEST(Battery, SvmChargedAtFirstUseWhereTheDeviceSaysSo) {
  this->Setup("gpu-64m:svm_oom_at=first_use,max_alloc=64m");
  auto* d = this->d_;
  void* a = d->clSVMAlloc(this->ctx_, CL_MEM_READ_WRITE, 40 * kMiB, 0);
  void* b = d->clSVMAlloc(this->ctx_, CL_MEM_READ_WRITE, 40 * kMiB, 0);
  void* never = d->clSVMAlloc(this->ctx_, CL_MEM_READ_WRITE, 60 * kMiB, 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);  // 120 MiB of blocks on a 64 MiB device: nothing charged yet.
  ASSERT_NE(never, nullptr);
  EXPECT_EQ(this->Outstanding(), 0u);
  const void* both[] = {a, b};
  EXPECT_EQ(d->clEnqueueSVMMigrateMem(this->q_, 2, both, nullptr, CL_MIGRATE_MEM_OBJECT_HOST, 0,
                                      nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), 0u);
  int pat = 3;
  ASSERT_EQ(d->clEnqueueSVMMemFill(this->q_, a, &pat, sizeof pat, 4096, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), 40 * kMiB);
  // Every first use of b fails at its enqueue; a (already charged) stays usable.
  EXPECT_EQ(d->clEnqueueSVMMemFill(this->q_, b, &pat, sizeof pat, 4096, 0, nullptr, nullptr),
            CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(d->clEnqueueSVMMap(this->q_, CL_TRUE, CL_MAP_WRITE, b, 4096, 0, nullptr, nullptr),
            CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(d->clEnqueueSVMMemcpy(this->q_, CL_TRUE, b, a, 64, 0, nullptr, nullptr),
            CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(d->clEnqueueSVMMigrateMem(this->q_, 1, both + 1, nullptr, 0, 0, nullptr, nullptr),
            CL_MEM_OBJECT_ALLOCATION_FAILURE);
  cl_program prog;
  cl_kernel k = this->Kernel(&prog);
  ASSERT_EQ(d->clSetKernelArgSVMPointer(k, 0, a), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArgSVMPointer(k, 1, static_cast<char*>(b) + 64), CL_SUCCESS);
  size_t g = 1;
  EXPECT_EQ(d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr),
            CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), 40 * kMiB);
  // Freeing a makes room: b's first use now succeeds, and the kernel runs.
  std::vector<int> host(16, 9);
  EXPECT_EQ(d->clEnqueueSVMMemcpy(this->q_, CL_TRUE, host.data(), a, 64, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(host[15], 3);
  d->clSVMFree(this->ctx_, a);
  EXPECT_EQ(this->Outstanding(), 0u);
  ASSERT_EQ(d->clSetKernelArgSVMPointer(k, 0, b), CL_SUCCESS);
  EXPECT_EQ(d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), 40 * kMiB);
  d->clSVMFree(this->ctx_, never);  // Never used: nothing to give back, and the record says so.
  EXPECT_EQ(this->Outstanding(), 40 * kMiB);
  const accounting_snapshot s = this->ctl_->snapshot();
  ASSERT_FALSE(s.frees.empty());
  EXPECT_EQ(s.frees.back().kind, "svm");
  EXPECT_EQ(s.frees.back().size, 0u);
  d->clSVMFree(this->ctx_, b);
  EXPECT_EQ(this->Outstanding(), 0u);
  d->clReleaseKernel(k);
  d->clReleaseProgram(prog);
  this->Teardown();
}

// An enqueue whose first uses do not all fit charges none of them: two fresh blocks (buffers on
// a deferred device, SVM blocks with svm_oom_at=first_use), each fitting alone, both needed by
// one copy, memcpy, migrate or kernel launch. A failed call has no effect.
TYPED_TEST(Battery, AFailedEnqueueChargesNothing) {
  this->Setup("gpu-64m:semantics=deferred,svm_oom_at=first_use,max_alloc=64m");
  auto* d = this->d_;
  cl_int err;
  cl_mem x = d->clCreateBuffer(this->ctx_, CL_MEM_READ_WRITE, 40 * kMiB, nullptr, &err);
  cl_mem y = d->clCreateBuffer(this->ctx_, CL_MEM_READ_WRITE, 40 * kMiB, nullptr, &err);
  void* a = d->clSVMAlloc(this->ctx_, CL_MEM_READ_WRITE, 40 * kMiB, 0);
  void* b = d->clSVMAlloc(this->ctx_, CL_MEM_READ_WRITE, 40 * kMiB, 0);
  ASSERT_TRUE(x && y && a && b);
  const int oom = CL_MEM_OBJECT_ALLOCATION_FAILURE;
  EXPECT_EQ(d->clEnqueueCopyBuffer(this->q_, x, y, 0, 0, 64, 0, nullptr, nullptr), oom);
  EXPECT_EQ(this->Outstanding(), 0u);
  cl_mem both[] = {x, y};
  EXPECT_EQ(d->clEnqueueMigrateMemObjects(this->q_, 2, both, 0, 0, nullptr, nullptr), oom);
  EXPECT_EQ(this->Outstanding(), 0u);
  EXPECT_EQ(d->clEnqueueSVMMemcpy(this->q_, CL_TRUE, b, a, 64, 0, nullptr, nullptr), oom);
  EXPECT_EQ(this->Outstanding(), 0u);
  const void* blocks[] = {a, b};
  EXPECT_EQ(d->clEnqueueSVMMigrateMem(this->q_, 2, blocks, nullptr, 0, 0, nullptr, nullptr), oom);
  EXPECT_EQ(this->Outstanding(), 0u);
  cl_program prog;
  cl_kernel k = this->Kernel(&prog);
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof x, &x), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArgSVMPointer(k, 1, a), CL_SUCCESS);
  size_t g = 1;
  EXPECT_EQ(d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr),
            oom);
  EXPECT_EQ(this->Outstanding(), 0u);
  // Each alone still fits, and is charged once.
  const int pat = 1;
  EXPECT_EQ(d->clEnqueueFillBuffer(this->q_, y, &pat, sizeof pat, 0, 64, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), 40 * kMiB);
  d->clReleaseKernel(k);
  d->clReleaseProgram(prog);
  d->clReleaseMemObject(x);
  d->clReleaseMemObject(y);
  d->clSVMFree(this->ctx_, a);
  d->clSVMFree(this->ctx_, b);
  EXPECT_EQ(this->Outstanding(), 0u);
  this->Teardown();
}

TYPED_TEST(Battery, SvmRefusedWithoutSupport) {
  this->Setup("gpu-64m:svm=off");
  cl_device_svm_capabilities caps = 1;
  this->d_->clGetDeviceInfo(this->devices_[0], CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps,
                            nullptr);
  EXPECT_EQ(caps, 0u);
  EXPECT_EQ(this->d_->clSVMAlloc(this->ctx_, 0, 64, 0), nullptr);
  this->Teardown();
}

// The access flags of an SVM block are mutually exclusive, as a buffer's are (OpenCL 3.0, the
// table of clSVMAlloc's flags): two or three of them give NULL, charging nothing, and the call
// log says why instead of CL_SUCCESS; one of them (or none) gives a block.
TYPED_TEST(Battery, SvmAllocRefusesMutuallyExclusiveAccessFlags) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(d->clCreateBuffer(this->ctx_, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64, nullptr, &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);  // What clSVMAlloc now agrees with.
  ASSERT_EQ(this->ctl_->configure_call_log(":memory:"), "");
  for (cl_svm_mem_flags bad :
       {cl_svm_mem_flags{CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY},
        cl_svm_mem_flags{CL_MEM_READ_WRITE | CL_MEM_READ_ONLY},
        cl_svm_mem_flags{CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY},
        cl_svm_mem_flags{CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY}}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(d->clSVMAlloc(this->ctx_, bad, 64, 0), nullptr);
  }
  EXPECT_EQ(this->Outstanding(), 0u);
  const accounting_snapshot s = this->ctl_->snapshot();
  ASSERT_EQ(this->ctl_->configure_call_log(""), "");
  int refused = 0;
  for (const std::string& line : s.call_log) {
    if (line.find("\"call\":\"clSVMAlloc\"") == std::string::npos) continue;
    ++refused;
    EXPECT_NE(line.find("\"status\":\"CL_INVALID_VALUE\""), std::string::npos) << line;
  }
  EXPECT_EQ(refused, 4);
  for (cl_svm_mem_flags one :
       {cl_svm_mem_flags{0}, cl_svm_mem_flags{CL_MEM_READ_WRITE},
        cl_svm_mem_flags{CL_MEM_WRITE_ONLY}, cl_svm_mem_flags{CL_MEM_READ_ONLY}}) {
    SCOPED_TRACE(one);
    void* p = d->clSVMAlloc(this->ctx_, one, 64, 0);
    EXPECT_NE(p, nullptr);
    d->clSVMFree(this->ctx_, p);
  }
  this->Teardown();
}

// With no backing device SVM is coarse-grain only: a fine-grain request is refused.
TYPED_TEST(Battery, NoFineGrainSvmWithoutABackingDevice) {
  this->Setup("gpu-64m");
  cl_device_svm_capabilities caps = 0;
  this->d_->clGetDeviceInfo(this->devices_[0], CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps,
                            nullptr);
  EXPECT_EQ(caps, cl_device_svm_capabilities(CL_DEVICE_SVM_COARSE_GRAIN_BUFFER));
  EXPECT_EQ(this->d_->clSVMAlloc(this->ctx_, CL_MEM_SVM_FINE_GRAIN_BUFFER, 64, 0), nullptr);
  EXPECT_EQ(this->Outstanding(), 0u);
  this->Teardown();
}

TYPED_TEST(Battery, HostPinnedBudgetIsSeparate) {
  this->Setup("gpu-64m:pinned=8m");
  std::vector<char> host(4 * kMiB);
  cl_mem a = this->Buf(6 * kMiB, nullptr, CL_MEM_ALLOC_HOST_PTR);
  cl_int err;
  EXPECT_EQ(this->Buf(4 * kMiB, &err, CL_MEM_USE_HOST_PTR, host.data()), nullptr);
  EXPECT_EQ(err, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  cl_mem b = this->Buf(2 * kMiB, nullptr, CL_MEM_USE_HOST_PTR, host.data());
  accounting_snapshot s = this->ctl_->snapshot();
  EXPECT_EQ(s.devices[0].outstanding, 0u);
  EXPECT_EQ(s.devices[0].pinned_outstanding, 8 * kMiB);
  // USE_HOST_PTR maps onto the application's memory.
  void* p = this->d_->clEnqueueMapBuffer(this->q_, b, CL_TRUE, CL_MAP_READ, 0, 16, 0, nullptr,
                                         nullptr, &err);
  EXPECT_EQ(p, host.data());
  this->d_->clEnqueueUnmapMemObject(this->q_, b, p, 0, nullptr, nullptr);
  this->d_->clReleaseMemObject(a);
  this->d_->clReleaseMemObject(b);
  EXPECT_EQ(this->ctl_->snapshot().devices[0].pinned_outstanding, 0u);
  this->Teardown();
}

TYPED_TEST(Battery, FaultNthCall) {
  this->Setup("gpu-64m");
  ASSERT_EQ(this->ctl_->configure_faults("nth:clCreateBuffer:2:CL_OUT_OF_RESOURCES"), "");
  cl_int e1, e2, e3;
  cl_mem a = this->Buf(64, &e1), b = this->Buf(64, &e2), c = this->Buf(64, &e3);
  EXPECT_EQ(e1, CL_SUCCESS);
  EXPECT_EQ(e2, CL_OUT_OF_RESOURCES);
  EXPECT_EQ(b, nullptr);
  EXPECT_EQ(e3, CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), 128u);  // The failed call had no effect.
  EXPECT_EQ(this->ctl_->snapshot().faults_fired, 1u);
  // "*" counts every entry point.
  ASSERT_EQ(this->ctl_->configure_faults("nth:*:2"), "");
  EXPECT_EQ(this->d_->clRetainMemObject(a), CL_SUCCESS);
  EXPECT_EQ(this->d_->clRetainMemObject(a), CL_SUCCESS);  // Retain/release/info calls never fail...
  EXPECT_EQ(this->d_->clFlush(this->q_), CL_SUCCESS);     // ...the first failable call passes,
  EXPECT_EQ(this->d_->clFlush(this->q_), CL_OUT_OF_RESOURCES);  // the second fails.
  ASSERT_EQ(this->ctl_->configure_faults(""), "");
  this->d_->clReleaseMemObject(a);
  this->d_->clReleaseMemObject(a);
  this->d_->clReleaseMemObject(a);
  this->d_->clReleaseMemObject(c);
  this->Teardown();
}

TYPED_TEST(Battery, FaultBytesAbove) {
  this->Setup("gpu-64m");
  ASSERT_EQ(this->ctl_->configure_faults("bytes:10m"), "");
  cl_mem a = this->Buf(8 * kMiB);
  cl_int err;
  EXPECT_EQ(this->Buf(4 * kMiB, &err), nullptr);
  EXPECT_EQ(err, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(this->d_->clSVMAlloc(this->ctx_, 0, 4 * kMiB, 0), nullptr);
  cl_mem b = this->Buf(2 * kMiB);
  this->d_->clReleaseMemObject(a);
  this->d_->clReleaseMemObject(b);
  EXPECT_EQ(this->ctl_->snapshot().faults_fired, 2u);
  this->Teardown();
}

TYPED_TEST(Battery, FaultProbabilityIsSeeded) {
  this->Setup("gpu-64m");
  auto pattern = [&](const char* rule) {
    EXPECT_EQ(this->ctl_->configure_faults(rule), "");
    std::string out;
    for (int i = 0; i < 64; ++i) {
      cl_int err;
      cl_mem m = this->Buf(64, &err);
      out += err == CL_SUCCESS ? '.' : 'x';
      if (m) this->d_->clReleaseMemObject(m);
    }
    return out;
  };
  std::string a = pattern("prob:clCreateBuffer:0.3:99:CL_OUT_OF_HOST_MEMORY");
  std::string b = pattern("prob:clCreateBuffer:0.3:99:CL_OUT_OF_HOST_MEMORY");
  std::string c = pattern("prob:clCreateBuffer:0.3:100");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  auto fails = std::count(a.begin(), a.end(), 'x');
  EXPECT_GT(fails, 5);
  EXPECT_LT(fails, 40);
  EXPECT_EQ(pattern("prob:clCreateBuffer:0:1"), std::string(64, '.'));
  EXPECT_EQ(pattern("prob:clCreateBuffer:1:1"), std::string(64, 'x'));
  this->Teardown();
}

TYPED_TEST(Battery, FaultExecFailsTheCommandNotTheCall) {
  this->Setup("gpu-64m");
  ASSERT_EQ(this->ctl_->configure_faults("exec:clEnqueueWriteBuffer:2:CL_OUT_OF_RESOURCES"), "");
  cl_mem a = this->Buf(64);
  int x = 0;
  cl_event e1, e2, after;
  ASSERT_EQ(this->d_->clEnqueueWriteBuffer(this->q_, a, CL_FALSE, 0, 4, &x, 0, nullptr, &e1),
            CL_SUCCESS);
  ASSERT_EQ(this->d_->clEnqueueWriteBuffer(this->q_, a, CL_FALSE, 0, 4, &x, 0, nullptr, &e2),
            CL_SUCCESS);
  ASSERT_EQ(this->d_->clEnqueueMarkerWithWaitList(this->q_, 1, &e2, &after), CL_SUCCESS);
  EXPECT_EQ(this->d_->clFinish(this->q_), CL_SUCCESS);
  EXPECT_EQ(this->Status(e1), CL_COMPLETE);
  EXPECT_EQ(this->Status(e2), CL_OUT_OF_RESOURCES);
  EXPECT_EQ(this->Status(after), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  EXPECT_EQ(this->d_->clEnqueueWriteBuffer(this->q_, a, CL_TRUE, 0, 4, &x, 0, nullptr, nullptr),
            CL_SUCCESS);
  accounting_snapshot s = this->ctl_->snapshot();
  EXPECT_EQ(s.commands.at(1).status, CL_OUT_OF_RESOURCES);
  for (cl_event e : {e1, e2, after}) this->d_->clReleaseEvent(e);
  this->d_->clReleaseMemObject(a);
  this->Teardown();
}

TYPED_TEST(Battery, QuarantineDoubleReleaseAndLeaks) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_mem a = this->Buf(64);
  ASSERT_EQ(d->clReleaseMemObject(a), CL_SUCCESS);
  size_t sz = 0;
  EXPECT_EQ(d->clGetMemObjectInfo(a, CL_MEM_SIZE, sizeof sz, &sz, nullptr), CL_INVALID_MEM_OBJECT);
  int x = 0;
  EXPECT_EQ(d->clEnqueueWriteBuffer(this->q_, a, CL_TRUE, 0, 4, &x, 0, nullptr, nullptr),
            CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(d->clReleaseMemObject(a), CL_INVALID_MEM_OBJECT);
  cl_mem leak = this->Buf(64);
  (void)leak;
  accounting_snapshot s = this->ctl_->snapshot();
  EXPECT_EQ(s.reports.use_after_release, 2u);
  EXPECT_EQ(s.reports.double_release, 1u);
  cl_context ctx = this->ctx_;
  this->Teardown();  // The application's context goes with `leak` still alive...
  s = this->ctl_->snapshot();
  EXPECT_EQ(s.live["mem"], 1u);
  EXPECT_EQ(s.live["context"], 1u);  // ...which holds it (object_graph_test.cc): no leak of it.
  EXPECT_EQ(s.reports.leaked_at_context_release, 0u);
  EXPECT_EQ(d->clRetainContext(ctx), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseContext(ctx), CL_SUCCESS);
}

// The quarantine bound (mockcl/runtime/slab.h): a released buffer's slot is not reused while fewer
// than 1024 newer buffers were destroyed, so the stale handle is still recognised as released.
TYPED_TEST(Battery, QuarantineHoldsForAThousandNewerReleases) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_mem a = this->Buf(64);
  ASSERT_EQ(d->clReleaseMemObject(a), CL_SUCCESS);
  for (int i = 0; i < 1023; ++i) {
    cl_mem m = this->Buf(64);
    ASSERT_NE(m, a) << "slot reused after " << i << " newer releases";
    ASSERT_EQ(d->clReleaseMemObject(m), CL_SUCCESS);
  }
  size_t sz = 0;
  EXPECT_EQ(d->clGetMemObjectInfo(a, CL_MEM_SIZE, sizeof sz, &sz, nullptr), CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(d->clReleaseMemObject(a), CL_INVALID_MEM_OBJECT);
  accounting_snapshot s = this->ctl_->snapshot();
  EXPECT_EQ(s.reports.use_after_release, 1u);
  EXPECT_EQ(s.reports.double_release, 1u);
  EXPECT_EQ(s.frees.size(), 1024u);
  EXPECT_EQ(s.devices.at(0).outstanding, 0u);
  EXPECT_EQ(s.devices.at(0).peak, 64u);
  this->Teardown();
}

// A property bit OpenCL does not define is an invalid value; a defined one the mock does not
// support (a device-side queue) is CL_INVALID_QUEUE_PROPERTIES (found by the CTS).
TYPED_TEST(Battery, QueuePropertiesGetTheirOwnErrors) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(d->clCreateCommandQueue(this->ctx_, this->devices_[0],
                                    cl_command_queue_properties{1} << 40, &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(
      d->clCreateCommandQueue(this->ctx_, this->devices_[0],
                              CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err),
      nullptr);
  EXPECT_EQ(err, CL_INVALID_QUEUE_PROPERTIES);
  cl_command_queue q =
      d->clCreateCommandQueue(this->ctx_, this->devices_[0], CL_QUEUE_PROFILING_ENABLE, &err);
  EXPECT_EQ(err, CL_SUCCESS);
  if (q != nullptr) d->clReleaseCommandQueue(q);
  this->Teardown();
}

// clCreateBuffer/clReleaseMemObject have an express path for the plain case (runtime.h). Its
// effects must be the general path's: the same counters, clock, accounting, peaks and free
// records, whichever path each call took (a call log forces the general path). Checked on an
// exact-byte device and on one that commits NVIDIA's pages at creation.
TYPED_TEST(Battery, ExpressAndGeneralPathsAgree) {
  for (const auto& [device, peak] :
       {std::pair{"gpu-64m", 6 * kMiB},
        std::pair{"gpu-64m:profile=nvidia,semantics=immediate", 8 * kMiB}}) {
    SCOPED_TRACE(device);
    auto run = [this, device = device](bool general) {
      this->ctl_->reset();
      this->Setup(device);
      if (general) {
        EXPECT_EQ(this->ctl_->configure_call_log(":memory:"), "");
      }
      auto* d = this->d_;
      cl_mem a = this->Buf(kMiB);
      cl_mem b = this->Buf(2 * kMiB, nullptr, CL_MEM_READ_ONLY);
      cl_mem c = this->Buf(3 * kMiB);
      EXPECT_EQ(d->clReleaseMemObject(b), CL_SUCCESS);
      EXPECT_EQ(d->clRetainMemObject(a), CL_SUCCESS);
      EXPECT_EQ(d->clReleaseMemObject(a), CL_SUCCESS);  // refs 2 -> 1: not destroyed
      EXPECT_EQ(d->clReleaseMemObject(a), CL_SUCCESS);
      EXPECT_EQ(d->clReleaseMemObject(c), CL_SUCCESS);
      EXPECT_EQ(d->clReleaseMemObject(c), CL_INVALID_MEM_OBJECT);  // double release
      cl_int err;
      EXPECT_EQ(this->Buf(0, &err), nullptr);
      EXPECT_EQ(err, CL_INVALID_BUFFER_SIZE);
      EXPECT_EQ(this->Buf(65 * kMiB, &err), nullptr);  // above capacity
      EXPECT_NE(err, CL_SUCCESS);
      EXPECT_EQ(this->Buf(kMiB, &err, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY), nullptr);
      EXPECT_EQ(err, CL_INVALID_VALUE);
      accounting_snapshot s = this->ctl_->snapshot();
      if (general) {
        EXPECT_EQ(this->ctl_->configure_call_log(""), "");
      }
      this->Teardown();
      return s;
    };
    const accounting_snapshot express = run(false), general = run(true);
    EXPECT_EQ(express.calls, general.calls);
    EXPECT_EQ(express.calls.at("clCreateBuffer"), 6u);
    EXPECT_EQ(express.calls.at("clReleaseMemObject"), 5u);
    EXPECT_EQ(express.now, general.now);
    EXPECT_EQ(express.devices.at(0).outstanding, 0u);
    EXPECT_EQ(express.devices.at(0).peak, general.devices.at(0).peak);
    EXPECT_EQ(express.devices.at(0).peak, peak);
    EXPECT_EQ(express.reports.double_release, 1u);
    EXPECT_EQ(general.reports.double_release, 1u);
    ASSERT_EQ(express.frees.size(), 3u);
    ASSERT_EQ(general.frees.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(express.frees[i].kind, "mem");
      EXPECT_EQ(express.frees[i].size, general.frees[i].size);
      EXPECT_EQ(express.frees[i].time, general.frees[i].time);
    }
    EXPECT_EQ(express.frees[0].size, 2 * kMiB);
  }
}

// Tests of runtime limits that need a million calls: in-process only. The runtime is the same
// code through the loader, but there every snapshot crosses the control API as JSON, and one
// with a million free records takes over a minute in the default (unoptimised) build.
template <typename T>
class BatteryInProcessOnly : public Battery<T> {};
TYPED_TEST_SUITE(BatteryInProcessOnly, ::testing::Types<InProcess>, BackendNames);

// Free records stop at kMaxCommandRecords (2^20); buffers are still created, released and
// accounted after that (by the express path too, which must not wait for room in the records).
TYPED_TEST(BatteryInProcessOnly, FreeRecordsStopAtTheirCapAndReleasesGoOn) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  const size_t n = (size_t{1} << 20) + 100;
  for (size_t i = 0; i < n; ++i) {
    cl_mem m = this->Buf(64);
    ASSERT_EQ(d->clReleaseMemObject(m), CL_SUCCESS);
  }
  accounting_snapshot s = this->ctl_->snapshot();
  EXPECT_EQ(s.frees.size(), size_t{1} << 20);
  EXPECT_EQ(s.calls["clCreateBuffer"], n);
  EXPECT_EQ(s.calls["clReleaseMemObject"], n);
  EXPECT_EQ(s.devices.at(0).outstanding, 0u);
  EXPECT_EQ(s.devices.at(0).peak, 64u);
  this->Teardown();
}

// The devices report no intermediate language (CL_DEVICE_IL_VERSION ""), so creating a program
// from IL is CL_INVALID_OPERATION on a valid context, whatever the IL (the CTS's
// consistency_il_programs), and CL_INVALID_CONTEXT without one.
TYPED_TEST(Battery, NoIntermediateLanguage) {
  this->Setup("gpu");
  const auto* d = this->d_;
  size_t n = 1;
  ASSERT_EQ(d->clGetDeviceInfo(this->devices_[0], CL_DEVICE_IL_VERSION, 0, nullptr, &n),
            CL_SUCCESS);
  EXPECT_EQ(n, 1u);  // "" with its terminator.
  const unsigned char spirv[8] = {0x03, 0x02, 0x23, 0x07, 0, 0, 1, 0};
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(d->clCreateProgramWithIL(this->ctx_, spirv, sizeof spirv, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_OPERATION);
  EXPECT_EQ(d->clCreateProgramWithIL(this->ctx_, nullptr, 0, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_OPERATION);
  EXPECT_EQ(d->clCreateProgramWithIL(nullptr, spirv, sizeof spirv, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_CONTEXT);
  this->Teardown();
}

// An entry point the mock does not implement (images, with no backing device) answers
// CL_INVALID_OPERATION, and the call is counted and logged like any other, so a program's use of
// it shows (found by the CTS).
TYPED_TEST(Battery, UnimplementedEntryPointsAreLoggedCalls) {
  this->Setup("gpu-64m");
  ASSERT_EQ(this->ctl_->configure_call_log(":memory:"), "");
  cl_image_format format{CL_RGBA, CL_UNORM_INT8};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = desc.image_height = 16;
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(this->d_->clCreateImage(this->ctx_, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_OPERATION);
  accounting_snapshot s = this->ctl_->snapshot();
  ASSERT_EQ(this->ctl_->configure_call_log(""), "");
  ASSERT_EQ(s.call_log.size(), 1u);
  EXPECT_NE(s.call_log[0].find("\"call\":\"clCreateImage\""), std::string::npos) << s.call_log[0];
  EXPECT_NE(s.call_log[0].find("\"result\":-59"), std::string::npos) << s.call_log[0];
  EXPECT_EQ(s.calls["clCreateImage"], 1u);
  this->Teardown();
}

TYPED_TEST(Battery, CallLogAndCounters) {
  this->Setup("gpu-64m");
  std::string path = std::string(getenv("TEST_TMPDIR")) + "/calls.jsonl";
  ASSERT_EQ(this->ctl_->configure_call_log(":memory:"), "");
  cl_mem a = this->Buf(1234);
  cl_int err;
  EXPECT_EQ(this->Buf(100 * kMiB, &err), nullptr);
  this->d_->clReleaseMemObject(a);
  accounting_snapshot s = this->ctl_->snapshot();
  ASSERT_EQ(s.call_log.size(), 3u);
  EXPECT_NE(s.call_log[0].find("\"call\":\"clCreateBuffer\""), std::string::npos) << s.call_log[0];
  EXPECT_NE(s.call_log[0].find("\"size\":1234"), std::string::npos);
  EXPECT_NE(s.call_log[1].find("\"result\":-61"), std::string::npos) << s.call_log[1];
  EXPECT_NE(s.call_log[2].find("clReleaseMemObject"), std::string::npos);
  EXPECT_EQ(s.calls["clCreateBuffer"], 2u);
  EXPECT_EQ(s.calls["clReleaseMemObject"], 1u);
  ASSERT_EQ(this->ctl_->configure_call_log(path), "");
  a = this->Buf(8);
  this->d_->clReleaseMemObject(a);
  ASSERT_EQ(this->ctl_->configure_call_log(""), "");
  std::ifstream f(path);
  std::string line;
  int n = 0;
  while (std::getline(f, line)) ++n;
  EXPECT_GE(n, 2);
  EXPECT_NE(this->ctl_->configure_call_log("/nonexistent/dir/x.jsonl"), "");
  this->Teardown();
}

TYPED_TEST(Battery, LegacyMarkersBarriersAndDestructorCallbacks) {
  this->Setup("gpu-64m", CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  auto* d = this->d_;
  ASSERT_EQ(this->ctl_->configure_schedule("lazy,seed=3"), "");
  cl_mem a = this->Buf(64), b = this->Buf(64);
  static std::vector<int> order;
  order.clear();
  auto note = [](cl_mem, void* p) {
    order.push_back(static_cast<int>(reinterpret_cast<intptr_t>(p)));
  };
  ASSERT_EQ(d->clSetMemObjectDestructorCallback(a, note, reinterpret_cast<void*>(1)), CL_SUCCESS);
  ASSERT_EQ(d->clSetMemObjectDestructorCallback(a, note, reinterpret_cast<void*>(2)), CL_SUCCESS);
  int x = 0;
  ASSERT_EQ(d->clEnqueueWriteBuffer(this->q_, a, CL_FALSE, 0, 4, &x, 0, nullptr, nullptr),
            CL_SUCCESS);
  cl_event mk;
  ASSERT_EQ(d->clEnqueueMarker(this->q_, &mk), CL_SUCCESS);  // OpenCL 1.1 marker: after everything.
  ASSERT_EQ(d->clEnqueueBarrier(this->q_), CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueWriteBuffer(this->q_, b, CL_FALSE, 0, 4, &x, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueWaitForEvents(this->q_, 1, &mk), CL_SUCCESS);
  ASSERT_EQ(d->clReleaseMemObject(a), CL_SUCCESS);
  EXPECT_TRUE(order.empty());  // The queued write still uses it.
  ASSERT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  d->clFlush(this->q_);                        // Any call runs callbacks made due.
  EXPECT_EQ(order, (std::vector<int>{2, 1}));  // Reverse order of registration.
  accounting_snapshot s = this->ctl_->snapshot();
  std::vector<std::string> kinds;
  for (const auto& c : s.commands) kinds.push_back(c.kind);
  ASSERT_EQ(kinds.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(kinds.begin(), kinds.begin() + 3),
            (std::vector<std::string>{"write", "marker", "barrier"}));
  // The last two are both ready after the barrier: the seeded out-of-order pick decides.
  std::sort(kinds.begin() + 3, kinds.end());
  EXPECT_EQ(kinds[3], "wait_for_events");
  EXPECT_EQ(kinds[4], "write");
  for (size_t i = 3; i < 5; ++i) EXPECT_GE(s.commands[i].start, s.commands[0].end);
  d->clReleaseEvent(mk);
  d->clReleaseMemObject(b);
  this->Teardown();
}

TYPED_TEST(Battery, ReconfigureWhileAliveIsAnError) {
  this->Setup("gpu-64m");
  std::string e = this->ctl_->configure_devices("gpu-1g");
  EXPECT_NE(e.find("objects are alive"), std::string::npos) << e;
  EXPECT_NE(this->ctl_->configure_devices("gpu-lots"), "");
  this->Teardown();
  EXPECT_EQ(this->ctl_->configure_devices("gpu-1g"), "");
}

long RssKiB() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, rss = 0;
  f >> pages >> rss;
  return rss * 4;
}

TYPED_TEST(Battery, HugeDeviceIsBackedLazily) {
  this->Setup("gpu-64g");
  auto* d = this->d_;
  long before = RssKiB();
  std::vector<cl_mem> ms;
  for (int i = 0; i < 4; ++i) ms.push_back(this->Buf(16ull << 30));
  cl_int err;
  EXPECT_EQ(this->Buf(1, &err), nullptr);  // Full.
  std::vector<char> chunk(kMiB, 'z'), back(kMiB);
  for (cl_mem m : ms) {
    ASSERT_EQ(d->clEnqueueWriteBuffer(this->q_, m, CL_FALSE, (8ull << 30), kMiB, chunk.data(), 0,
                                      nullptr, nullptr),
              CL_SUCCESS);
    ASSERT_EQ(d->clEnqueueReadBuffer(this->q_, m, CL_TRUE, (8ull << 30), kMiB, back.data(), 0,
                                     nullptr, nullptr),
              CL_SUCCESS);
    EXPECT_EQ(back, chunk);
  }
  void* p = d->clEnqueueMapBuffer(this->q_, ms[0], CL_TRUE, CL_MAP_READ, (15ull << 30), 4096, 0,
                                  nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(static_cast<char*>(p)[100], 0);
  d->clEnqueueUnmapMemObject(this->q_, ms[0], p, 0, nullptr, nullptr);
  long grown = RssKiB() - before;
  EXPECT_LT(grown, 32 * 1024) << "RSS grew by " << grown << " KiB for 64 GiB of simulated memory";
  EXPECT_EQ(this->Outstanding(), 64ull << 30);
  for (cl_mem m : ms) d->clReleaseMemObject(m);
  this->Teardown();
}

TYPED_TEST(Battery, ThreadsShareTheRuntime) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_int err;
  cl_event gate = d->clCreateUserEvent(this->ctx_, &err);
  cl_mem a = this->Buf(64);
  int x = 0;
  cl_event w;
  ASSERT_EQ(d->clEnqueueWriteBuffer(this->q_, a, CL_FALSE, 0, 4, &x, 1, &gate, &w), CL_SUCCESS);
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    d->clSetUserEventStatus(gate, CL_COMPLETE);
  });
  std::vector<std::thread> workers;
  for (int t = 0; t < 3; ++t)
    workers.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        cl_int e;
        cl_mem m = d->clCreateBuffer(this->ctx_, CL_MEM_READ_WRITE, 256, nullptr, &e);
        if (m) d->clReleaseMemObject(m);
      }
    });
  EXPECT_EQ(d->clWaitForEvents(1, &w), CL_SUCCESS);  // Blocks until the other thread sets it.
  setter.join();
  for (auto& t : workers) t.join();
  EXPECT_EQ(this->Outstanding(), 64u);
  // 6000 free records: more than one of the runtime's record chunks (4096), read back in order.
  accounting_snapshot s = this->ctl_->snapshot();
  ASSERT_EQ(s.frees.size(), 6000u);
  for (size_t i = 0; i < s.frees.size(); ++i) {
    EXPECT_EQ(s.frees[i].kind, "mem");
    EXPECT_EQ(s.frees[i].size, 256u);
    if (i) {
      EXPECT_NE(s.frees[i].id, s.frees[i - 1].id);
    }
  }
  d->clReleaseEvent(w);
  d->clReleaseEvent(gate);
  d->clReleaseMemObject(a);
  this->Teardown();
}

}  // namespace

// clEnqueue{Read,Write,Copy}BufferRect: a 8x8-byte buffer (row pitch 8) seen as a 2D image.
TYPED_TEST(Battery, RectTransfersMoveTheRightBytesAndValidate) {
  this->Setup("gpu-64m:semantics=deferred");
  auto* d = this->d_;
  cl_mem a = this->Buf(64);
  EXPECT_EQ(this->Outstanding(), 0u);
  unsigned char host[16];
  for (int i = 0; i < 16; ++i) host[i] = static_cast<unsigned char>(i + 1);
  const size_t borigin[3] = {2, 1, 0}, horigin[3] = {0, 0, 0}, region[3] = {4, 4, 1};
  ASSERT_EQ(d->clEnqueueWriteBufferRect(this->q_, a, CL_TRUE, borigin, horigin, region, 8, 0, 0, 0,
                                        host, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), 64u);  // Charged at first use, like the plain transfers.
  unsigned char all[64];
  ASSERT_EQ(d->clEnqueueReadBuffer(this->q_, a, CL_TRUE, 0, 64, all, 0, nullptr, nullptr),
            CL_SUCCESS);
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) {
      const bool in = y >= 1 && y < 5 && x >= 2 && x < 6;
      EXPECT_EQ(all[y * 8 + x], in ? (y - 1) * 4 + (x - 2) + 1 : 0) << x << "," << y;
    }
  // Read it back into a host image with row pitch 6 at host origin (1, 1).
  unsigned char back[36] = {};
  const size_t hback[3] = {1, 1, 0};
  ASSERT_EQ(d->clEnqueueReadBufferRect(this->q_, a, CL_TRUE, borigin, hback, region, 8, 64, 6, 36,
                                       back, 0, nullptr, nullptr),
            CL_SUCCESS);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) EXPECT_EQ(back[(y + 1) * 6 + x + 1], host[y * 4 + x]);
  EXPECT_EQ(back[0], 0);
  // Copy within one buffer: interleaved rows that share no byte are not an overlap.
  const size_t s0[3] = {2, 1, 0}, side[3] = {6, 1, 0}, r2[3] = {2, 4, 1};
  ASSERT_EQ(
      d->clEnqueueCopyBufferRect(this->q_, a, a, s0, side, r2, 8, 0, 8, 0, 0, nullptr, nullptr),
      CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueReadBuffer(this->q_, a, CL_TRUE, 0, 64, all, 0, nullptr, nullptr),
            CL_SUCCESS);
  for (int y = 1; y < 5; ++y) {
    EXPECT_EQ(all[y * 8 + 6], all[y * 8 + 2]);
    EXPECT_EQ(all[y * 8 + 7], all[y * 8 + 3]);
  }
  const size_t o1[3] = {3, 2, 0};
  EXPECT_EQ(
      d->clEnqueueCopyBufferRect(this->q_, a, a, s0, o1, region, 8, 0, 8, 0, 0, nullptr, nullptr),
      CL_MEM_COPY_OVERLAP);
  EXPECT_EQ(
      d->clEnqueueCopyBufferRect(this->q_, a, a, s0, side, r2, 8, 0, 16, 0, 0, nullptr, nullptr),
      CL_INVALID_VALUE);  // One buffer, two geometries.
  // Two sub-buffers of one buffer whose regions overlap in it.
  cl_mem parent = this->Buf(1024);
  cl_buffer_region ra{0, 512}, rb{128, 512};
  cl_int err;
  cl_mem sa = d->clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &ra, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem sb = d->clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &rb, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  const size_t zero[3] = {0, 0, 0}, at128[3] = {128, 0, 0}, line[3] = {64, 1, 1};
  EXPECT_EQ(d->clEnqueueCopyBufferRect(this->q_, sa, sb, at128, zero, line, 0, 0, 0, 0, 0, nullptr,
                                       nullptr),
            CL_MEM_COPY_OVERLAP);
  EXPECT_EQ(d->clEnqueueCopyBufferRect(this->q_, sa, sb, zero, zero, line, 0, 0, 0, 0, 0, nullptr,
                                       nullptr),
            CL_SUCCESS);
  // Argument rules.
  auto write = [&](const size_t* bo, const size_t* r, size_t brow, size_t bslice, size_t hrow,
                   const void* p) {
    return d->clEnqueueWriteBufferRect(this->q_, a, CL_TRUE, bo, horigin, r, brow, bslice, hrow, 0,
                                       p, 0, nullptr, nullptr);
  };
  const size_t r0[3] = {4, 0, 1}, big[3] = {8, 9, 1};
  EXPECT_EQ(write(borigin, r0, 8, 0, 0, host), CL_INVALID_VALUE);      // A zero region element.
  EXPECT_EQ(write(borigin, region, 3, 0, 0, host), CL_INVALID_VALUE);  // Row pitch < region[0].
  EXPECT_EQ(write(borigin, region, 8, 0, 3, host),
            CL_INVALID_VALUE);  // Host row pitch < region[0].
  EXPECT_EQ(write(borigin, region, 8, 36, 0, host),
            CL_INVALID_VALUE);  // Slice pitch not a multiple.
  EXPECT_EQ(write(borigin, region, 8, 24, 0, host),
            CL_INVALID_VALUE);                                   // Slice pitch < rows * pitch.
  EXPECT_EQ(write(zero, big, 8, 0, 0, host), CL_INVALID_VALUE);  // Past the buffer's end.
  EXPECT_EQ(write(borigin, region, 8, 0, 0, nullptr), CL_INVALID_VALUE);  // No host pointer.
  EXPECT_EQ(write(nullptr, region, 8, 0, 0, host), CL_INVALID_VALUE);
  const size_t huge[3] = {SIZE_MAX / 2, 4, 1};
  EXPECT_EQ(write(zero, huge, 0, 0, 0, host), CL_INVALID_VALUE);  // Overflowing pitches.
  cl_mem sealed = this->Buf(64, nullptr, CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS);
  EXPECT_EQ(d->clEnqueueReadBufferRect(this->q_, sealed, CL_TRUE, zero, zero, region, 0, 0, 0, 0,
                                       back, 0, nullptr, nullptr),
            CL_INVALID_OPERATION);
  EXPECT_EQ(d->clEnqueueReadBuffer(this->q_, sealed, CL_TRUE, 0, 4, back, 0, nullptr, nullptr),
            CL_INVALID_OPERATION);
  for (cl_mem m : {sealed, sb, sa, parent, a}) d->clReleaseMemObject(m);
  this->Teardown();
}

// OpenCL 3.0, clEnqueueMapBuffer: a read map of a host-write-only or no-access buffer, or a write
// map of a host-read-only or no-access one, is CL_INVALID_OPERATION; a sub-buffer carries its
// buffer's host access; CL_MAP_WRITE_INVALIDATE_REGION excludes the other two bits.
TYPED_TEST(Battery, MapsObeyHostAccessFlags) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  auto map = [&](cl_mem m, cl_map_flags f) {
    cl_int err = 1;
    void* p = d->clEnqueueMapBuffer(this->q_, m, CL_TRUE, f, 0, 128, 0, nullptr, nullptr, &err);
    if (p) {
      EXPECT_EQ(d->clEnqueueUnmapMemObject(this->q_, m, p, 0, nullptr, nullptr), CL_SUCCESS);
    }
    EXPECT_EQ(p != nullptr, err == CL_SUCCESS);
    return err;
  };
  cl_mem ro = this->Buf(256, nullptr, CL_MEM_HOST_READ_ONLY);
  cl_mem wo = this->Buf(256, nullptr, CL_MEM_HOST_WRITE_ONLY);
  cl_mem none = this->Buf(256, nullptr, CL_MEM_HOST_NO_ACCESS);
  cl_mem rw = this->Buf(256);
  EXPECT_EQ(map(ro, CL_MAP_READ), CL_SUCCESS);
  EXPECT_EQ(map(ro, CL_MAP_WRITE), CL_INVALID_OPERATION);
  EXPECT_EQ(map(ro, CL_MAP_WRITE_INVALIDATE_REGION), CL_INVALID_OPERATION);
  EXPECT_EQ(map(wo, CL_MAP_WRITE), CL_SUCCESS);
  EXPECT_EQ(map(wo, CL_MAP_WRITE_INVALIDATE_REGION), CL_SUCCESS);
  EXPECT_EQ(map(wo, CL_MAP_READ), CL_INVALID_OPERATION);
  EXPECT_EQ(map(wo, CL_MAP_READ | CL_MAP_WRITE), CL_INVALID_OPERATION);
  EXPECT_EQ(map(none, CL_MAP_READ), CL_INVALID_OPERATION);
  EXPECT_EQ(map(none, CL_MAP_WRITE), CL_INVALID_OPERATION);
  EXPECT_EQ(map(rw, CL_MAP_READ | CL_MAP_WRITE), CL_SUCCESS);
  EXPECT_EQ(map(rw, CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION), CL_INVALID_VALUE);
  EXPECT_EQ(map(rw, CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION), CL_INVALID_VALUE);
  const cl_buffer_region region{128, 128};
  cl_int err;
  cl_mem sub = d->clCreateSubBuffer(ro, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(map(sub, CL_MAP_READ), CL_SUCCESS);
  EXPECT_EQ(map(sub, CL_MAP_WRITE), CL_INVALID_OPERATION);
  for (cl_mem m : {sub, ro, wo, none, rw}) EXPECT_EQ(d->clReleaseMemObject(m), CL_SUCCESS);
  this->Teardown();
}

// OpenCL 3.0, clEnqueueUnmapMemObject: mapped_ptr must be a pointer a map of the object returned
// (CL_INVALID_VALUE otherwise), and each unmap ends the mapping it names: a pointer into the
// buffer that no map returned is refused and leaves the map count, and the right unmap, as they
// were. On a maps=shared device too, where the maps return pointers into the mock's own bytes.
TYPED_TEST(Battery, AnUnmapNamesAPointerAMapReturned) {
  for (const char* devices : {"gpu-64m", "gpu-64m:maps=copy"}) {
    SCOPED_TRACE(devices);
    this->Setup(devices);
    auto* d = this->d_;
    cl_mem m = this->Buf(256);
    cl_int err = 1;
    auto* p1 = static_cast<char*>(
        d->clEnqueueMapBuffer(this->q_, m, CL_TRUE, CL_MAP_READ, 0, 64, 0, nullptr, nullptr, &err));
    ASSERT_EQ(err, CL_SUCCESS);
    auto* p2 = static_cast<char*>(d->clEnqueueMapBuffer(this->q_, m, CL_TRUE, CL_MAP_READ, 64, 64,
                                                        0, nullptr, nullptr, &err));
    ASSERT_EQ(err, CL_SUCCESS);
    auto map_count = [&] {
      cl_uint n = 99;
      EXPECT_EQ(d->clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof n, &n, nullptr), CL_SUCCESS);
      return n;
    };
    EXPECT_EQ(d->clEnqueueUnmapMemObject(this->q_, m, p1 + 1, 0, nullptr, nullptr),
              CL_INVALID_VALUE);
    EXPECT_EQ(map_count(), 2u);
    EXPECT_EQ(d->clEnqueueUnmapMemObject(this->q_, m, p1, 0, nullptr, nullptr), CL_SUCCESS);
    EXPECT_EQ(d->clEnqueueUnmapMemObject(this->q_, m, p1, 0, nullptr, nullptr),
              CL_INVALID_VALUE);  // already unmapped
    EXPECT_EQ(map_count(), 1u);
    EXPECT_EQ(d->clEnqueueUnmapMemObject(this->q_, m, p2, 0, nullptr, nullptr), CL_SUCCESS);
    EXPECT_EQ(map_count(), 0u);
    EXPECT_EQ(d->clFinish(this->q_), CL_SUCCESS);
    EXPECT_EQ(d->clReleaseMemObject(m), CL_SUCCESS);
    this->Teardown();
  }
}

// A buffer released while mapped leaves its slot to later buffers (object_registry.h reuses slots
// past its quarantine): none of them inherits its mappings, so an unmap of a buffer never mapped
// is refused however many buffers came between.
TYPED_TEST(Battery, ABufferInheritsNoMappingFromItsSlot) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  static char host[4096];
  cl_int err = 1;
  cl_mem a = this->Buf(sizeof host, nullptr, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, host);
  ASSERT_NE(d->clEnqueueMapBuffer(this->q_, a, CL_TRUE, CL_MAP_READ, 0, sizeof host, 0, nullptr,
                                  nullptr, &err),
            nullptr);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(d->clReleaseMemObject(a), CL_SUCCESS);  // still mapped
  ASSERT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  int accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    cl_mem b = this->Buf(sizeof host, nullptr, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, host);
    accepted += d->clEnqueueUnmapMemObject(this->q_, b, host, 0, nullptr, nullptr) == CL_SUCCESS;
    ASSERT_EQ(d->clFinish(this->q_), CL_SUCCESS);
    ASSERT_EQ(d->clReleaseMemObject(b), CL_SUCCESS);
  }
  EXPECT_EQ(accepted, 0);
  this->Teardown();
}

// OpenCL 3.0, clEnqueueCopyBuffer: CL_MEM_COPY_OVERLAP when the source and destination are
// different sub-buffers of one buffer and their bytes overlap; also for a sub-buffer and its own
// buffer (POCL refuses that too). Sub-buffers whose bytes do not overlap copy.
TYPED_TEST(Battery, CopiesBetweenOverlappingSubBuffersAreRefused) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_mem b = this->Buf(1024);
  auto sub = [&](size_t origin, size_t size) {
    const cl_buffer_region region{origin, size};
    cl_int err = 1;
    cl_mem s = d->clCreateSubBuffer(b, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    return s;
  };
  cl_mem s1 = sub(0, 256), s2 = sub(128, 256), s3 = sub(512, 256);
  auto copy = [&](cl_mem from, cl_mem to, size_t from_off, size_t to_off, size_t size) {
    return d->clEnqueueCopyBuffer(this->q_, from, to, from_off, to_off, size, 0, nullptr, nullptr);
  };
  EXPECT_EQ(copy(s1, s2, 130, 0, 10), CL_MEM_COPY_OVERLAP);   // parent bytes 130..140 onto 128..138
  EXPECT_EQ(copy(s1, s2, 128, 0, 128), CL_MEM_COPY_OVERLAP);  // the very same bytes
  EXPECT_EQ(copy(s2, b, 0, 100, 64), CL_MEM_COPY_OVERLAP);    // onto its own buffer
  EXPECT_EQ(copy(b, s3, 520, 0, 16), CL_MEM_COPY_OVERLAP);    // 520..536 onto 512..528
  EXPECT_EQ(copy(s1, s2, 0, 128, 128), CL_SUCCESS);           // 0..128 onto 256..384: apart
  EXPECT_EQ(copy(s1, s3, 0, 0, 256), CL_SUCCESS);
  EXPECT_EQ(copy(s3, b, 0, 0, 256), CL_SUCCESS);
  EXPECT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  for (cl_mem m : {s1, s2, s3, b}) EXPECT_EQ(d->clReleaseMemObject(m), CL_SUCCESS);
  this->Teardown();
}

// OpenCL 3.0, clEnqueueMapBuffer: the map of a buffer made with CL_MEM_USE_HOST_PTR returns a
// pointer derived from host_ptr (also on maps=copy devices, where other maps get a copy), and
// the host memory holds the buffer's bytes once the map completes. CL_MEM_USES_SVM_POINTER says
// whether that host_ptr is an SVM pointer.
TYPED_TEST(Battery, UseHostPtrMapsReturnTheHostMemory) {
  for (const char* devices : {"gpu-64m", "gpu-64m:maps=copy"}) {
    SCOPED_TRACE(devices);
    this->Setup(devices);
    auto* d = this->d_;
    alignas(128) static uint8_t host[1024];
    for (size_t i = 0; i < sizeof host; ++i) host[i] = uint8_t(i);
    cl_int err;
    cl_mem buf = this->Buf(sizeof host, nullptr, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, host);
    auto* p = static_cast<uint8_t*>(d->clEnqueueMapBuffer(
        this->q_, buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 256, 128, 0, nullptr, nullptr, &err));
    ASSERT_EQ(err, CL_SUCCESS);
    EXPECT_EQ(p, host + 256);
    // A second map of the same bytes has the same address; each unmap ends one of them.
    auto* p2 = static_cast<uint8_t*>(d->clEnqueueMapBuffer(this->q_, buf, CL_TRUE, CL_MAP_READ, 256,
                                                           128, 0, nullptr, nullptr, &err));
    ASSERT_EQ(err, CL_SUCCESS);
    EXPECT_EQ(p2, p);
    p[0] = 0xAB;
    EXPECT_EQ(d->clEnqueueUnmapMemObject(this->q_, buf, p, 0, nullptr, nullptr), CL_SUCCESS);
    EXPECT_EQ(d->clEnqueueUnmapMemObject(this->q_, buf, p2, 0, nullptr, nullptr), CL_SUCCESS);
    EXPECT_EQ(d->clFinish(this->q_), CL_SUCCESS);
    cl_uint maps = 9;
    ASSERT_EQ(d->clGetMemObjectInfo(buf, CL_MEM_MAP_COUNT, sizeof maps, &maps, nullptr),
              CL_SUCCESS);
    EXPECT_EQ(maps, 0u);
    uint8_t got = 0;
    ASSERT_EQ(d->clEnqueueReadBuffer(this->q_, buf, CL_TRUE, 256, 1, &got, 0, nullptr, nullptr),
              CL_SUCCESS);
    EXPECT_EQ(got, 0xAB);
    // A sub-buffer's map is in its buffer's host memory.
    const cl_buffer_region region{512, 256};
    cl_mem sub = d->clCreateSubBuffer(buf, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    void* q = d->clEnqueueMapBuffer(this->q_, sub, CL_TRUE, CL_MAP_READ, 16, 16, 0, nullptr,
                                    nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    EXPECT_EQ(q, host + 512 + 16);
    EXPECT_EQ(d->clEnqueueUnmapMemObject(this->q_, sub, q, 0, nullptr, nullptr), CL_SUCCESS);
    // Not an SVM pointer; a buffer on an SVM pointer (and its sub-buffer) is.
    cl_bool svm = CL_TRUE;
    ASSERT_EQ(d->clGetMemObjectInfo(buf, CL_MEM_USES_SVM_POINTER, sizeof svm, &svm, nullptr),
              CL_SUCCESS);
    EXPECT_EQ(svm, cl_bool{CL_FALSE});
    void* s = d->clSVMAlloc(this->ctx_, CL_MEM_READ_WRITE, 1024, 0);
    ASSERT_NE(s, nullptr);
    cl_mem on_svm = this->Buf(1024, nullptr, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, s);
    cl_mem on_svm_sub =
        d->clCreateSubBuffer(on_svm, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    for (cl_mem m : {on_svm, on_svm_sub}) {
      svm = CL_FALSE;
      ASSERT_EQ(d->clGetMemObjectInfo(m, CL_MEM_USES_SVM_POINTER, sizeof svm, &svm, nullptr),
                CL_SUCCESS);
      EXPECT_EQ(svm, cl_bool{CL_TRUE});
    }
    void* m = d->clEnqueueMapBuffer(this->q_, on_svm, CL_TRUE, CL_MAP_READ, 0, 1024, 0, nullptr,
                                    nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    EXPECT_EQ(m, s);
    EXPECT_EQ(d->clEnqueueUnmapMemObject(this->q_, on_svm, m, 0, nullptr, nullptr), CL_SUCCESS);
    EXPECT_EQ(d->clFinish(this->q_), CL_SUCCESS);
    for (cl_mem x : {on_svm_sub, on_svm, sub, buf}) EXPECT_EQ(d->clReleaseMemObject(x), CL_SUCCESS);
    d->clSVMFree(this->ctx_, s);
    this->Teardown();
  }
}

TYPED_TEST(Battery, ContextDestructorCallbacksRunLastFirstAtDestruction) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  static std::vector<int> order;
  order.clear();
  auto note = [](cl_context, void* p) {
    order.push_back(static_cast<int>(reinterpret_cast<intptr_t>(p)));
  };
  EXPECT_EQ(d->clSetContextDestructorCallback(this->ctx_, nullptr, nullptr), CL_INVALID_VALUE);
  ASSERT_EQ(d->clSetContextDestructorCallback(this->ctx_, note, reinterpret_cast<void*>(1)),
            CL_SUCCESS);
  ASSERT_EQ(d->clSetContextDestructorCallback(this->ctx_, note, reinterpret_cast<void*>(2)),
            CL_SUCCESS);
  ASSERT_EQ(d->clReleaseContext(this->ctx_), CL_SUCCESS);
  EXPECT_TRUE(order.empty());  // The queue still holds the context.
  ASSERT_EQ(d->clReleaseCommandQueue(this->q_), CL_SUCCESS);
  EXPECT_EQ(order, (std::vector<int>{2, 1}));
  EXPECT_EQ(d->clSetContextDestructorCallback(this->ctx_, note, nullptr), CL_INVALID_CONTEXT);
  this->ctx_ = nullptr;
  this->q_ = nullptr;
}

TYPED_TEST(Battery, CloneKernelKeepsTheArguments) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_program prog;
  cl_kernel k = this->Kernel(&prog);
  cl_mem a = this->Buf(64), b = this->Buf(64);
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof a, &a), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(k, 1, sizeof b, &b), CL_SUCCESS);
  cl_int err;
  cl_kernel clone = d->clCloneKernel(k, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  ASSERT_NE(clone, k);
  ASSERT_EQ(d->clReleaseKernel(k), CL_SUCCESS);
  char name[16];
  ASSERT_EQ(d->clGetKernelInfo(clone, CL_KERNEL_FUNCTION_NAME, sizeof name, name, nullptr),
            CL_SUCCESS);
  EXPECT_STREQ(name, "touch");
  const size_t global = 4;
  ASSERT_EQ(
      d->clEnqueueNDRangeKernel(this->q_, clone, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
      CL_SUCCESS);
  ASSERT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  accounting_snapshot s = this->ctl_->snapshot();
  ASSERT_FALSE(s.commands.empty());
  EXPECT_EQ(s.commands.back().mems,
            (std::vector<uint64_t>{this->ctl_->object_id(a), this->ctl_->object_id(b)}));
  EXPECT_EQ(d->clCloneKernel(k, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_KERNEL);
  d->clReleaseKernel(clone);
  d->clReleaseProgram(prog);
  d->clReleaseMemObject(a);
  d->clReleaseMemObject(b);
  this->Teardown();
}

// Pipes are unsupported, consistently: the device says so and no mem object is a pipe.
TYPED_TEST(Battery, PipesAreUnsupportedConsistently) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_bool pipes = CL_TRUE;
  ASSERT_EQ(
      d->clGetDeviceInfo(this->devices_[0], CL_DEVICE_PIPE_SUPPORT, sizeof pipes, &pipes, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(pipes, cl_bool{CL_FALSE});
  cl_uint max_pipe_args = 1;
  ASSERT_EQ(d->clGetDeviceInfo(this->devices_[0], CL_DEVICE_MAX_PIPE_ARGS, sizeof max_pipe_args,
                               &max_pipe_args, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(max_pipe_args, 0u);
  cl_int err;
  EXPECT_EQ(d->clCreatePipe(this->ctx_, 0, 4, 4, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_OPERATION);
  cl_mem a = this->Buf(64);
  cl_uint packet = 0;
  EXPECT_EQ(d->clGetPipeInfo(a, CL_PIPE_PACKET_SIZE, sizeof packet, &packet, nullptr),
            CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(d->clGetPipeInfo(nullptr, CL_PIPE_PACKET_SIZE, sizeof packet, &packet, nullptr),
            CL_INVALID_MEM_OBJECT);
  d->clReleaseMemObject(a);
  this->Teardown();
}

// clEnqueueNDRangeKernel's argument rules (OpenCL 3.0), as the CTS exercises them.
TYPED_TEST(Battery, NDRangeGeometryIsValidated) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  auto kernel = [&](const char* options, cl_program* prog) {
    const char* src = "__kernel void touch(__global int* a, __global int* b) { }";
    cl_int err;
    *prog = d->clCreateProgramWithSource(this->ctx_, 1, &src, nullptr, &err);
    EXPECT_EQ(d->clBuildProgram(*prog, 0, nullptr, options, nullptr, nullptr), CL_SUCCESS);
    cl_kernel k = d->clCreateKernel(*prog, "touch", &err);
    EXPECT_EQ(err, CL_SUCCESS);
    return k;
  };
  cl_program prog, prog3, prog3u;
  cl_kernel k = kernel("", &prog);
  cl_mem a = this->Buf(64);
  ASSERT_EQ(d->clSetKernelArg(k, 1, sizeof a, &a), CL_SUCCESS);
  const size_t g[3] = {8, 8, 8};
  auto run = [&](cl_kernel kk, cl_uint dims, const size_t* off, const size_t* gl,
                 const size_t* lo) {
    return d->clEnqueueNDRangeKernel(this->q_, kk, dims, off, gl, lo, 0, nullptr, nullptr);
  };
  EXPECT_EQ(run(k, 1, nullptr, g, nullptr), CL_INVALID_KERNEL_ARGS);  // Argument 0 never set.
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof a, &a), CL_SUCCESS);
  EXPECT_EQ(run(k, 1, nullptr, g, nullptr), CL_SUCCESS);
  EXPECT_EQ(run(k, 0, nullptr, g, nullptr), CL_INVALID_WORK_DIMENSION);
  EXPECT_EQ(run(k, 4, nullptr, g, nullptr), CL_INVALID_WORK_DIMENSION);
  EXPECT_EQ(run(k, 1, nullptr, nullptr, nullptr), CL_INVALID_GLOBAL_WORK_SIZE);
  const size_t none[3] = {0, 8, 8};
  EXPECT_EQ(run(k, 3, nullptr, none, nullptr), CL_SUCCESS);  // An empty range is valid since 2.1.
  const size_t far[3] = {SIZE_MAX - 2, 0, 0};
  EXPECT_EQ(run(k, 1, far, g, nullptr), CL_INVALID_GLOBAL_OFFSET);
  const size_t l3[3] = {3, 1, 1}, l0[3] = {0, 1, 1}, deep[3] = {1, 1, 65}, wide[3] = {64, 32, 1};
  EXPECT_EQ(run(k, 1, nullptr, g, l3),
            CL_INVALID_WORK_GROUP_SIZE);  // 3 does not divide 8 (OpenCL C 1.2).
  EXPECT_EQ(run(k, 1, nullptr, g, l0), CL_INVALID_WORK_GROUP_SIZE);
  EXPECT_EQ(run(k, 3, nullptr, g, deep),
            CL_INVALID_WORK_ITEM_SIZE);  // Above CL_DEVICE_MAX_WORK_ITEM_SIZES[2].
  const size_t gw[3] = {64, 32, 1};
  EXPECT_EQ(run(k, 2, nullptr, gw, wide), CL_INVALID_WORK_GROUP_SIZE);  // 2048 items > 1024.
  const size_t ok[3] = {4, 2, 2};
  EXPECT_EQ(run(k, 3, nullptr, g, ok), CL_SUCCESS);
  // OpenCL C 3.0 programs may have partial work-groups, unless built uniform.
  cl_kernel k3 = kernel("-cl-std=CL3.0", &prog3);
  cl_kernel k3u = kernel("-cl-std=CL3.0 -cl-uniform-work-group-size", &prog3u);
  for (cl_kernel kk : {k3, k3u}) {
    ASSERT_EQ(d->clSetKernelArg(kk, 0, sizeof a, &a), CL_SUCCESS);
    ASSERT_EQ(d->clSetKernelArg(kk, 1, sizeof a, &a), CL_SUCCESS);
  }
  EXPECT_EQ(run(k3, 1, nullptr, g, l3), CL_SUCCESS);
  EXPECT_EQ(run(k3u, 1, nullptr, g, l3), CL_INVALID_WORK_GROUP_SIZE);
  ASSERT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  for (cl_kernel kk : {k, k3, k3u}) d->clReleaseKernel(kk);
  for (cl_program p : {prog, prog3, prog3u}) d->clReleaseProgram(p);
  d->clReleaseMemObject(a);
  this->Teardown();
}

// A driver that refuses CL_DEVICE_HALF_FP_CONFIG without cl_khr_fp16, as NVIDIA's does (a GPU
// run of consistency_check, docs/device-facts.md): the query requires the extension, so the
// refusal is consistent, not a failed query. The mock's dispatch with that one query refused.
namespace refusing_half {
decltype(cl_icd_dispatch::clGetDeviceInfo) g_real = nullptr;
cl_int CL_API_CALL get_device_info(cl_device_id dev, cl_device_info param, size_t size, void* value,
                                   size_t* size_ret) {
  if (param == CL_DEVICE_HALF_FP_CONFIG) return CL_INVALID_VALUE;
  return g_real(dev, param, size, value, size_ret);
}
}  // namespace refusing_half

TYPED_TEST(Battery, HalfFpConfigMayBeRefusedWithoutFp16) {
  this->Setup("gpu");
  cl_icd_dispatch refusing = *this->d_;
  refusing_half::g_real = this->d_->clGetDeviceInfo;
  refusing.clGetDeviceInfo = refusing_half::get_device_info;
  char ext[1024];
  ASSERT_EQ(
      this->d_->clGetDeviceInfo(this->devices_[0], CL_DEVICE_EXTENSIONS, sizeof ext, ext, nullptr),
      CL_SUCCESS);
  ASSERT_EQ(std::string(ext).find("cl_khr_fp16"), std::string::npos) << ext;
  std::string all;
  for (const auto& p :
       mockcl::testing::device_consistency(refusing, this->b_.platform, this->devices_[0]))
    all += p + "\n";
  EXPECT_EQ(all, "");
  this->Teardown();
}

// Every preset and profile reports queries that agree with each other (the CTS's consistency and
// feature-macro rules; mockcl/consistency.cc).
TYPED_TEST(Battery, DeviceQueriesAreConsistentForEveryPresetAndProfile) {
  this->Setup(
      "gpu;cpu;gpu-8g:profile=nvidia;gpu-64m:profile=pocl;cpu-64m:svm=off,maps=copy;gpu-64m:"
      "semantics=deferred");
  ASSERT_EQ(this->devices_.size(), 6u);
  for (cl_device_id dev : this->devices_) {
    std::vector<std::string> problems =
        mockcl::testing::device_consistency(*this->d_, this->b_.platform, dev);
    std::string all;
    for (const auto& p : problems) all += p + "\n";
    EXPECT_TRUE(problems.empty()) << all;
    // fp64 as the mock reports it with no backing device.
    char ext[1024];
    ASSERT_EQ(this->d_->clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof ext, ext, nullptr),
              CL_SUCCESS);
    EXPECT_NE(std::string(ext).find("cl_khr_fp64"), std::string::npos) << ext;
  }
  this->Teardown();
}

// CL_QUEUE_PROPERTIES_ARRAY and CL_MEM_PROPERTIES give back the list the object was created
// with, and nothing when none was given.
TYPED_TEST(Battery, PropertyQueriesReturnTheCreationLists) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  size_t n = 99;
  ASSERT_EQ(d->clGetCommandQueueInfo(this->q_, CL_QUEUE_PROPERTIES_ARRAY, 0, nullptr, &n),
            CL_SUCCESS);
  ASSERT_EQ(n, 3 * sizeof(cl_queue_properties));  // Setup() gave {CL_QUEUE_PROPERTIES, 0, 0}.
  cl_queue_properties got[3] = {1, 1, 1};
  ASSERT_EQ(d->clGetCommandQueueInfo(this->q_, CL_QUEUE_PROPERTIES_ARRAY, sizeof got, got, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(got[0], cl_queue_properties{CL_QUEUE_PROPERTIES});
  EXPECT_EQ(got[1], 0u);
  EXPECT_EQ(got[2], 0u);
  cl_int err;
  cl_command_queue plain = d->clCreateCommandQueue(this->ctx_, this->devices_[0], 0, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  ASSERT_EQ(d->clGetCommandQueueInfo(plain, CL_QUEUE_PROPERTIES_ARRAY, 0, nullptr, &n), CL_SUCCESS);
  EXPECT_EQ(n, 0u);
  cl_command_queue none =
      d->clCreateCommandQueueWithProperties(this->ctx_, this->devices_[0], nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  ASSERT_EQ(d->clGetCommandQueueInfo(none, CL_QUEUE_PROPERTIES_ARRAY, 0, nullptr, &n), CL_SUCCESS);
  EXPECT_EQ(n, 0u);
  const cl_mem_properties empty[] = {0};
  cl_mem with =
      d->clCreateBufferWithProperties(this->ctx_, empty, CL_MEM_READ_WRITE, 64, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem without =
      d->clCreateBufferWithProperties(this->ctx_, nullptr, CL_MEM_READ_WRITE, 64, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem old = this->Buf(64);
  ASSERT_EQ(d->clGetMemObjectInfo(with, CL_MEM_PROPERTIES, 0, nullptr, &n), CL_SUCCESS);
  EXPECT_EQ(n, sizeof(cl_mem_properties));
  cl_mem_properties p = 7;
  ASSERT_EQ(d->clGetMemObjectInfo(with, CL_MEM_PROPERTIES, sizeof p, &p, nullptr), CL_SUCCESS);
  EXPECT_EQ(p, 0u);
  for (cl_mem m : {without, old}) {
    ASSERT_EQ(d->clGetMemObjectInfo(m, CL_MEM_PROPERTIES, 0, nullptr, &n), CL_SUCCESS);
    EXPECT_EQ(n, 0u);
  }
  // A slot reused by a plain buffer does not inherit the answer.
  d->clReleaseMemObject(with);
  for (int i = 0; i < 2000; ++i) d->clReleaseMemObject(this->Buf(64));
  for (cl_mem m : {without, old}) d->clReleaseMemObject(m);
  d->clReleaseCommandQueue(plain);
  d->clReleaseCommandQueue(none);
  this->Teardown();
}

// With no backing device the kernel's signature comes from the source: argument count, info and
// clSetKernelArg's checks answer as a driver's would (OpenCL 3.0, clSetKernelArg).
TYPED_TEST(Battery, KernelArgumentsFollowTheSourceSignature) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  const char* src =
      "typedef struct { float x, y, z; } P3;\n"
      "// __kernel void hidden(int a) {}\n"
      "__kernel void mix(__global const float* restrict a, __local int* tmp, float k, int4 v, P3 "
      "p) {}\n";
  auto build = [&](const char* options, cl_program* prog) {
    cl_int err;
    *prog = d->clCreateProgramWithSource(this->ctx_, 1, &src, nullptr, &err);
    EXPECT_EQ(d->clBuildProgram(*prog, 0, nullptr, options, nullptr, nullptr), CL_SUCCESS);
    cl_kernel k = d->clCreateKernel(*prog, "mix", &err);
    EXPECT_EQ(err, CL_SUCCESS);
    return k;
  };
  cl_program prog, prog_info;
  cl_kernel k = build("", &prog);
  cl_int err;
  EXPECT_EQ(d->clCreateKernel(prog, "hidden", &err), nullptr);  // Only in a comment.
  EXPECT_EQ(err, CL_INVALID_KERNEL_NAME);
  cl_uint num = 0;
  ASSERT_EQ(d->clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof num, &num, nullptr), CL_SUCCESS);
  EXPECT_EQ(num, 5u);
  cl_mem a = this->Buf(64);
  cl_mem null_mem = nullptr;
  const float f = 1;
  const cl_int4 v{};
  const char p3[12] = {};
  cl_mem not_a_mem = reinterpret_cast<cl_mem>(&num);
  EXPECT_EQ(d->clSetKernelArg(k, 5, sizeof f, &f), CL_INVALID_ARG_INDEX);
  EXPECT_EQ(d->clSetKernelArg(k, 0, 4, &a), CL_INVALID_ARG_SIZE);  // A buffer is sizeof(cl_mem).
  EXPECT_EQ(d->clSetKernelArg(k, 0, sizeof a, &not_a_mem), CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(d->clSetKernelArg(k, 0, sizeof a, &null_mem), CL_SUCCESS);  // A NULL buffer is allowed.
  EXPECT_EQ(d->clSetKernelArg(k, 1, 64, &a), CL_INVALID_ARG_VALUE);  // __local: the value is NULL.
  EXPECT_EQ(d->clSetKernelArg(k, 1, 0, nullptr), CL_INVALID_ARG_SIZE);  // __local: a size.
  EXPECT_EQ(d->clSetKernelArg(k, 2, sizeof(double), &f), CL_INVALID_ARG_SIZE);
  EXPECT_EQ(d->clSetKernelArg(k, 2, sizeof f, nullptr), CL_INVALID_ARG_VALUE);
  EXPECT_EQ(d->clSetKernelArg(k, 3, 12, &v), CL_INVALID_ARG_SIZE);  // int4 is 16 bytes.
  EXPECT_EQ(d->clSetKernelArg(k, 4, 0, p3), CL_INVALID_ARG_SIZE);   // Opaque: any nonzero size.
  EXPECT_EQ(d->clSetKernelArgSVMPointer(k, 2, nullptr), CL_INVALID_ARG_INDEX);  // Not a pointer.
  const size_t global = 4;
  EXPECT_EQ(
      d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
      CL_INVALID_KERNEL_ARGS);
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof a, &a), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(k, 1, 64, nullptr), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(k, 2, sizeof f, &f), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(k, 3, sizeof v, &v), CL_SUCCESS);
  EXPECT_EQ(
      d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
      CL_INVALID_KERNEL_ARGS);  // p still unset.
  ASSERT_EQ(d->clSetKernelArg(k, 4, sizeof p3, p3), CL_SUCCESS);
  ASSERT_EQ(
      d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
      CL_SUCCESS);
  ASSERT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  EXPECT_EQ(this->ctl_->snapshot().commands.back().mems,
            (std::vector<uint64_t>{this->ctl_->object_id(a)}));
  // Argument info: only with -cl-kernel-arg-info.
  cl_kernel_arg_address_qualifier aq = 0;
  EXPECT_EQ(d->clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, nullptr),
            CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
  cl_kernel ki = build("-cl-kernel-arg-info", &prog_info);
  char name[64];
  ASSERT_EQ(d->clGetKernelArgInfo(ki, 1, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(aq, cl_kernel_arg_address_qualifier{CL_KERNEL_ARG_ADDRESS_LOCAL});
  ASSERT_EQ(d->clGetKernelArgInfo(ki, 0, CL_KERNEL_ARG_TYPE_NAME, sizeof name, name, nullptr),
            CL_SUCCESS);
  EXPECT_STREQ(name, "float*");
  cl_kernel_arg_type_qualifier tq = 0;
  ASSERT_EQ(d->clGetKernelArgInfo(ki, 0, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(tq,
            cl_kernel_arg_type_qualifier(CL_KERNEL_ARG_TYPE_CONST | CL_KERNEL_ARG_TYPE_RESTRICT));
  ASSERT_EQ(d->clGetKernelArgInfo(ki, 4, CL_KERNEL_ARG_NAME, sizeof name, name, nullptr),
            CL_SUCCESS);
  EXPECT_STREQ(name, "p");
  ASSERT_EQ(d->clGetKernelArgInfo(ki, 4, CL_KERNEL_ARG_TYPE_NAME, sizeof name, name, nullptr),
            CL_SUCCESS);
  EXPECT_STREQ(name, "P3");
  EXPECT_EQ(d->clGetKernelArgInfo(ki, 5, CL_KERNEL_ARG_NAME, sizeof name, name, nullptr),
            CL_INVALID_ARG_INDEX);
  // A clone keeps the signature.
  cl_kernel clone = d->clCloneKernel(k, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(d->clSetKernelArg(clone, 2, 2, &f), CL_INVALID_ARG_SIZE);
  for (cl_kernel x : {k, ki, clone}) d->clReleaseKernel(x);
  for (cl_program x : {prog, prog_info}) d->clReleaseProgram(x);
  d->clReleaseMemObject(a);
  this->Teardown();
}

// A source the signature reader refuses fails to build, with a log, like a compiler.
TYPED_TEST(Battery, BrokenSourceFailsToBuild) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  const char* broken = "__kernel void k(__global int* a {\n}";
  cl_int err;
  cl_program p = d->clCreateProgramWithSource(this->ctx_, 1, &broken, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(d->clBuildProgram(p, 0, nullptr, "", nullptr, nullptr), CL_BUILD_PROGRAM_FAILURE);
  cl_build_status st = CL_BUILD_NONE;
  ASSERT_EQ(d->clGetProgramBuildInfo(p, this->devices_[0], CL_PROGRAM_BUILD_STATUS, sizeof st, &st,
                                     nullptr),
            CL_SUCCESS);
  EXPECT_EQ(st, CL_BUILD_ERROR);
  char log[256] = {};
  ASSERT_EQ(d->clGetProgramBuildInfo(p, this->devices_[0], CL_PROGRAM_BUILD_LOG, sizeof log, log,
                                     nullptr),
            CL_SUCCESS);
  EXPECT_NE(std::string(log).find("<source>:1: error:"), std::string::npos) << log;
  EXPECT_EQ(d->clCreateKernel(p, "k", &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_PROGRAM_EXECUTABLE);
  d->clReleaseProgram(p);
  this->Teardown();
}

// A rect transfer is a buffer's first use like a plain one, on every profile that commits there
// (NVIDIA's commits whole pages at first use).
TYPED_TEST(Battery, RectTransfersChargeAtFirstUseOnEveryProfile) {
  for (const char* spec : {"gpu-64m:semantics=deferred", "gpu-64m:profile=nvidia"}) {
    SCOPED_TRACE(spec);
    this->Setup(spec);
    auto* d = this->d_;
    cl_mem a = this->Buf(4096), b = this->Buf(4096);
    EXPECT_EQ(this->Outstanding(), 0u);
    const size_t zero[3] = {0, 0, 0}, region[3] = {16, 4, 1};
    char host[64] = {};
    ASSERT_EQ(d->clEnqueueReadBufferRect(this->q_, a, CL_TRUE, zero, zero, region, 64, 0, 0, 0,
                                         host, 0, nullptr, nullptr),
              CL_SUCCESS);
    EXPECT_GE(this->Outstanding(), 4096u);
    EXPECT_EQ(this->ctl_->memory_use(0).requested, 4096u);
    ASSERT_EQ(d->clEnqueueCopyBufferRect(this->q_, a, b, zero, zero, region, 64, 0, 64, 0, 0,
                                         nullptr, nullptr),
              CL_SUCCESS);
    ASSERT_EQ(d->clFinish(this->q_), CL_SUCCESS);
    EXPECT_EQ(this->ctl_->memory_use(0).requested,
              8192u);  // b charged too (it may share a's page).
    accounting_snapshot s = this->ctl_->snapshot();
    EXPECT_EQ(s.commands.back().kind, "copy_rect");
    d->clReleaseMemObject(a);
    d->clReleaseMemObject(b);
    this->Teardown();
    EXPECT_EQ(this->Outstanding(), 0u);
  }
}
