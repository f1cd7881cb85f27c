// The backing device (MOCKCL_BACKING=pocl) through the system ICD loader: real kernels compute,
// broken sources fail with POCL's log, argument counts are POCL's, out-of-memory still happens at
// mockcl's capacity, and the same seed gives the same call log. Also: a never-written buffer
// reads as zeros in both modes.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "mockcl/consistency.h"
#include "mockcl/testing.h"

namespace {

const char* kVecAdd = R"(
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, float k) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i] * k;
}
__kernel void touch(__global int* p) { p[get_global_id(0)] += 1; }
)";

class Backing : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    so_ = new std::string(mockcl::testing::mock_so_path());
    mockcl::testing::use_mock_only(*so_);
  }
  void SetUp() override {
    d = mockcl::testing::loader_dispatch();
    ctl = mockcl::testing::icd_control(*so_);
    ctl->reset();
    ASSERT_EQ(ctl->configure_backing("pocl"), "");
  }
  void TearDown() override {
    for (cl_mem m : mems) d->clReleaseMemObject(m);
    for (cl_kernel k : kernels) d->clReleaseKernel(k);
    if (prog) d->clReleaseProgram(prog);
    if (q) d->clReleaseCommandQueue(q);
    if (ctx) d->clReleaseContext(ctx);
    EXPECT_EQ(ctl->snapshot().live.at("context"), 0u);
    ctl->reset();
  }
  // Context and queue on the mock's first device.
  void open(cl_command_queue_properties props = 0) {
    cl_platform_id p = mockcl::testing::loader_mock_platform();
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(d->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr), CL_SUCCESS);
    cl_int err;
    ctx = d->clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    q = d->clCreateCommandQueue(ctx, dev, props, &err);
    ASSERT_EQ(err, CL_SUCCESS);
  }
  cl_int build(const char* src) {
    cl_int err;
    prog = d->clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
    if (err != CL_SUCCESS) return err;
    return d->clBuildProgram(prog, 1, &dev, "", nullptr, nullptr);
  }
  cl_kernel kernel(const char* name) {
    cl_int err;
    cl_kernel k = d->clCreateKernel(prog, name, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    if (k) kernels.push_back(k);
    return k;
  }
  cl_mem buffer(size_t bytes, cl_int* err_out = nullptr) {
    cl_int err;
    cl_mem m = d->clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    if (err_out)
      *err_out = err;
    else
      EXPECT_EQ(err, CL_SUCCESS);
    if (m) mems.push_back(m);
    return m;
  }
  static std::string* so_;
  const cl_icd_dispatch* d = nullptr;
  std::unique_ptr<mockcl::controller> ctl;
  cl_device_id dev = nullptr;
  cl_context ctx = nullptr;
  cl_command_queue q = nullptr;
  cl_program prog = nullptr;
  std::vector<cl_kernel> kernels;
  std::vector<cl_mem> mems;
};
std::string* Backing::so_ = nullptr;

TEST_F(Backing, VectorAddComputesThroughTheLoader) {
  open();
  ASSERT_EQ(build(kVecAdd), CL_SUCCESS);
  cl_kernel k = kernel("vadd");
  cl_uint nargs = 0;
  ASSERT_EQ(d->clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, nullptr), CL_SUCCESS);
  EXPECT_EQ(nargs, 4u);
  char name[32] = {};
  ASSERT_EQ(d->clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, nullptr), CL_SUCCESS);
  EXPECT_STREQ(name, "vadd");
  size_t wg = 0;
  EXPECT_EQ(d->clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, nullptr),
            CL_SUCCESS);
  EXPECT_GT(wg, 0u);
  constexpr size_t n = 4096;
  std::vector<float> a(n), b(n), c(n, -1.f);
  for (size_t i = 0; i < n; ++i) a[i] = float(i), b[i] = float(2 * i);
  cl_mem ma = buffer(n * 4), mb = buffer(n * 4), mc = buffer(n * 4);
  ASSERT_EQ(d->clEnqueueWriteBuffer(q, ma, CL_FALSE, 0, n * 4, a.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueWriteBuffer(q, mb, CL_TRUE, 0, n * 4, b.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  const float kf = 0.5f;
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof(cl_mem), &ma), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(k, 1, sizeof(cl_mem), &mb), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(k, 2, sizeof(cl_mem), &mc), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(k, 3, sizeof kf, &kf), CL_SUCCESS);
  EXPECT_EQ(d->clSetKernelArg(k, 4, sizeof kf, &kf), CL_INVALID_ARG_INDEX);
  EXPECT_EQ(d->clSetKernelArg(k, 3, 1, &kf), CL_INVALID_ARG_SIZE);  // POCL checks scalars
  ASSERT_EQ(d->clSetKernelArg(k, 3, sizeof kf, &kf), CL_SUCCESS);
  size_t global = n, local = 64;
  cl_event ev;
  ASSERT_EQ(d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, &ev),
            CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueReadBuffer(q, mc, CL_TRUE, 0, n * 4, c.data(), 1, &ev, nullptr),
            CL_SUCCESS);
  cl_int st = 1;
  d->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
  EXPECT_EQ(st, CL_COMPLETE);
  d->clReleaseEvent(ev);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], float(i) + float(2 * i) * 0.5f) << i;
  // Copy, fill and map see the same bytes as kernels.
  ASSERT_EQ(d->clEnqueueCopyBuffer(q, mc, ma, 0, 0, n * 4, 0, nullptr, nullptr), CL_SUCCESS);
  const float two = 2.f;
  ASSERT_EQ(d->clEnqueueFillBuffer(q, mb, &two, sizeof two, 0, n * 4, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  cl_int err;
  auto* p = static_cast<float*>(d->clEnqueueMapBuffer(q, mc, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                                      n * 4, 0, nullptr, nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(p[i], float(i) + float(2 * i) * 0.5f + 1.f) << i;
  p[7] = 42.f;
  ASSERT_EQ(d->clEnqueueUnmapMemObject(q, mc, p, 0, nullptr, nullptr), CL_SUCCESS);
  float got = 0;
  ASSERT_EQ(d->clEnqueueReadBuffer(q, mc, CL_TRUE, 7 * 4, 4, &got, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(got, 42.f);
}

TEST_F(Backing, BrokenSourceFailsToBuildWithPoclsLog) {
  open();
  ASSERT_EQ(build("__kernel void broken(__global int* p) { p[0] = undeclared_thing; }"),
            CL_BUILD_PROGRAM_FAILURE);
  cl_build_status status = CL_BUILD_SUCCESS;
  ASSERT_EQ(
      d->clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_STATUS, sizeof status, &status, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(status, CL_BUILD_ERROR);
  size_t n = 0;
  ASSERT_EQ(d->clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n), CL_SUCCESS);
  std::string log(n, '\0');
  ASSERT_EQ(d->clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr),
            CL_SUCCESS);
  EXPECT_NE(log.find("undeclared_thing"), std::string::npos) << log;
  cl_int err;
  EXPECT_EQ(d->clCreateKernel(prog, "broken", &err), nullptr);
  EXPECT_NE(err, CL_SUCCESS);
}

// The device reports no images, so the compiler must not predefine the image macros (POCL's does,
// for its own device), and a build error still names the user's line.
TEST_F(Backing, ImageMacrosFollowTheDeviceAndLinesStayTheUsers) {
  open();
  ASSERT_EQ(build("__kernel void k(__global int* o) {\n"
                  "#ifdef __IMAGE_SUPPORT__\n  o[0] = 1;\n#endif\n"
                  "#ifdef __opencl_c_images\n  o[1] = 1;\n#endif\n}\n"),
            CL_SUCCESS);
  cl_kernel k = kernel("k");
  cl_mem out = buffer(2 * sizeof(int));
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof out, &out), CL_SUCCESS);
  const size_t one = 1;
  ASSERT_EQ(d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &one, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  int got[2] = {-1, -1};
  ASSERT_EQ(d->clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof got, got, 0, nullptr, nullptr),
            CL_SUCCESS);
  // POCL's device has images, and so does the mock device over it: the macros are defined. (On
  // a device without them they would not be, and a never-written buffer reads as zeros.)
  cl_bool images = CL_FALSE;
  ASSERT_EQ(d->clGetDeviceInfo(dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(images, CL_TRUE);
  EXPECT_EQ(got[0], 1);
  EXPECT_EQ(got[1], 1);
  d->clReleaseProgram(prog);
  ASSERT_EQ(build("__kernel void broken(__global int* p) {\n\n  p[0] = undeclared_thing;\n}\n"),
            CL_BUILD_PROGRAM_FAILURE);
  size_t n = 0;
  ASSERT_EQ(d->clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n), CL_SUCCESS);
  std::string log(n, '\0');
  ASSERT_EQ(d->clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr),
            CL_SUCCESS);
  EXPECT_NE(log.find(":3:"), std::string::npos) << log;
}

TEST_F(Backing, KernelNamesAndArgumentCountsArePocls) {
  open();
  ASSERT_EQ(build(kVecAdd), CL_SUCCESS);
  size_t n = 0;
  ASSERT_EQ(d->clGetProgramInfo(prog, CL_PROGRAM_NUM_KERNELS, sizeof n, &n, nullptr), CL_SUCCESS);
  EXPECT_EQ(n, 2u);
  cl_kernel ks[2];
  cl_uint got = 0;
  ASSERT_EQ(d->clCreateKernelsInProgram(prog, 2, ks, &got), CL_SUCCESS);
  ASSERT_EQ(got, 2u);
  for (cl_kernel k : ks) {
    kernels.push_back(k);
    char name[32] = {};
    cl_uint args = 0;
    d->clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, nullptr);
    d->clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr);
    EXPECT_EQ(args, std::string(name) == "vadd" ? 4u : 1u) << name;
  }
  cl_int err;
  EXPECT_EQ(d->clCreateKernel(prog, "nope", &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_KERNEL_NAME);
  cl_kernel k = kernel("touch");
  size_t launch = 1;
  // An argument not set: the launch is refused, as OpenCL says.
  EXPECT_EQ(d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &launch, nullptr, 0, nullptr, nullptr),
            CL_INVALID_KERNEL_ARGS);
}

TEST_F(Backing, OutOfMemoryAtMocksCapacityWithAKernelLaunchAsFirstUse) {
  ASSERT_EQ(ctl->configure_devices("gpu-16m:semantics=deferred"), "");
  open();
  ASSERT_EQ(build(kVecAdd), CL_SUCCESS);
  cl_kernel k = kernel("touch");
  std::vector<cl_mem> bufs;
  for (int i = 0; i < 3; ++i) bufs.push_back(buffer(6 << 20));  // deferred: nothing charged yet
  EXPECT_EQ(ctl->snapshot().devices.at(0).outstanding, 0u);
  size_t global = 1024;
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof(cl_mem), &bufs[i]), CL_SUCCESS);
    ASSERT_EQ(d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
              CL_SUCCESS);
  }
  EXPECT_EQ(ctl->snapshot().devices.at(0).outstanding, 12u << 20);
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof(cl_mem), &bufs[2]), CL_SUCCESS);
  EXPECT_EQ(d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            CL_MEM_OBJECT_ALLOCATION_FAILURE);
  ASSERT_EQ(d->clFinish(q), CL_SUCCESS);
  int v[2] = {};
  ASSERT_EQ(d->clEnqueueReadBuffer(q, bufs[1], CL_TRUE, 1020 * 4, sizeof v, v, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(v[0], 1);  // touched once
  EXPECT_EQ(v[1], 1);
}

TEST_F(Backing, HostPointerBuffersSubBuffersAndCompileLink) {
  open();
  cl_int err;
  const char* src = "__kernel void twice(__global int* p) { p[get_global_id(0)] *= 2; }";
  cl_program obj = d->clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  ASSERT_EQ(d->clCompileProgram(obj, 1, &dev, "", 0, nullptr, nullptr, nullptr, nullptr),
            CL_SUCCESS);
  prog = d->clLinkProgram(ctx, 1, &dev, "", 1, &obj, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  d->clReleaseProgram(obj);
  cl_kernel k = kernel("twice");
  std::vector<int> host(1024);
  for (int i = 0; i < 1024; ++i) host[i] = i;
  cl_mem copied =
      d->clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4096, host.data(), &err);
  ASSERT_EQ(err, CL_SUCCESS);
  mems.push_back(copied);
  cl_buffer_region r{2048, 1024};
  cl_mem sub =
      d->clCreateSubBuffer(copied, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  mems.insert(mems.begin(), sub);  // released before its buffer
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof sub, &sub), CL_SUCCESS);
  size_t global = 256;
  ASSERT_EQ(d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  std::vector<int> out(1024);
  ASSERT_EQ(d->clEnqueueReadBuffer(q, copied, CL_TRUE, 0, 4096, out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(out[i], i >= 512 && i < 768 ? 2 * i : i) << i;
  int first = -1;
  ASSERT_EQ(d->clEnqueueReadBuffer(q, sub, CL_TRUE, 0, 4, &first, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(first, 1024);
  // Not an SVM pointer of this runtime.
  EXPECT_EQ(d->clSetKernelArgSVMPointer(k, 0, host.data()), CL_INVALID_ARG_VALUE);
}

// A NULL SVM pointer argument is taken, as POCL and the no-backing mode take it, and reaches the
// kernel as NULL.
TEST_F(Backing, ANullSvmPointerArgumentReachesTheKernel) {
  open();
  const char* src =
      "__kernel void null_or_not(__global int* p, __global int* out) { out[0] = p == 0 ? 7 : 9; }";
  ASSERT_EQ(build(src), CL_SUCCESS);
  cl_kernel k = kernel("null_or_not");
  auto* out = static_cast<int*>(d->clSVMAlloc(ctx, CL_MEM_READ_WRITE, 64, 0));
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(d->clSetKernelArgSVMPointer(k, 0, nullptr), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArgSVMPointer(k, 1, out), CL_SUCCESS);
  size_t global = 1;
  ASSERT_EQ(d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, out, 64, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(out[0], 7);
  ASSERT_EQ(d->clEnqueueSVMUnmap(q, out, 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(d->clFinish(q), CL_SUCCESS);
  d->clSVMFree(ctx, out);
}

TEST_F(Backing, SvmBlocksArePoclsSvmAndKernelsSeeThem) {
  open();
  const char* src = "__kernel void twice(__global int* p) { p[get_global_id(0)] *= 2; }";
  ASSERT_EQ(build(src), CL_SUCCESS);
  cl_kernel k = kernel("twice");
  auto* p = static_cast<int*>(d->clSVMAlloc(ctx, CL_MEM_READ_WRITE, 4096, 0));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(ctl->snapshot().devices.at(0).outstanding, 4096u);
  const int three = 3;
  ASSERT_EQ(d->clEnqueueSVMMemFill(q, p, &three, sizeof three, 4096, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArgSVMPointer(k, 0, p + 512), CL_SUCCESS);  // inside the block
  size_t global = 512;
  ASSERT_EQ(d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, p, 4096, 0, nullptr, nullptr), CL_SUCCESS);
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(p[i], i >= 512 ? 6 : 3) << i;
  ASSERT_EQ(d->clEnqueueSVMUnmap(q, p, 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(d->clFinish(q), CL_SUCCESS);
  d->clSVMFree(ctx, p);
  EXPECT_EQ(ctl->snapshot().devices.at(0).outstanding, 0u);
}

// POCL's CPU device has fine-grain buffer SVM (this machine's POCL 3.1 reports it): so do the
// mock's devices in backing mode, and such a block is used by host and kernel with no map in
// between.
TEST_F(Backing, FineGrainBufferSvmWherePoclHasIt) {
  open();
  cl_device_svm_capabilities caps = 0;
  ASSERT_EQ(d->clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(caps, cl_device_svm_capabilities(CL_DEVICE_SVM_COARSE_GRAIN_BUFFER |
                                             CL_DEVICE_SVM_FINE_GRAIN_BUFFER));
  ASSERT_EQ(build("__kernel void twice(__global int* p) { p[get_global_id(0)] *= 2; }"),
            CL_SUCCESS);
  cl_kernel k = kernel("twice");
  auto* p = static_cast<int*>(
      d->clSVMAlloc(ctx, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, 4096, 0));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(ctl->snapshot().devices.at(0).outstanding, 4096u);
  for (int i = 0; i < 1024; ++i) p[i] = i;  // no map: fine grain
  ASSERT_EQ(d->clSetKernelArgSVMPointer(k, 0, p), CL_SUCCESS);
  size_t global = 1024;
  ASSERT_EQ(d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clFinish(q), CL_SUCCESS);
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(p[i], 2 * i) << i;
  d->clSVMFree(ctx, p);
  EXPECT_EQ(ctl->snapshot().devices.at(0).outstanding, 0u);
  // SVM atomics are not offered.
  EXPECT_EQ(
      d->clSVMAlloc(ctx, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS,
                    4096, 0),
      nullptr);
}

// One run's call log with object ids (process-wide counters) blanked.
std::vector<std::string> seeded_run(const cl_icd_dispatch* d, mockcl::controller& ctl,
                                    cl_device_id dev) {
  ctl.reset();  // the host clock and command ids from zero
  EXPECT_EQ(ctl.configure_backing("pocl"), "");
  EXPECT_EQ(ctl.configure_schedule("lazy,seed=7"), "");
  EXPECT_EQ(ctl.configure_call_log(":memory:"), "");
  cl_int err;
  cl_context ctx = d->clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  cl_command_queue q =
      d->clCreateCommandQueue(ctx, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
  const char* src = kVecAdd;
  cl_program p = d->clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  EXPECT_EQ(d->clBuildProgram(p, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
  cl_kernel k = d->clCreateKernel(p, "touch", &err);
  std::vector<cl_mem> ms;
  for (int i = 0; i < 4; ++i)
    ms.push_back(d->clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, nullptr, &err));
  size_t global = 1024;
  for (int r = 0; r < 3; ++r)
    for (cl_mem m : ms) {
      d->clSetKernelArg(k, 0, sizeof m, &m);
      d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
      const int one = 1;
      d->clEnqueueFillBuffer(q, m, &one, sizeof one, 0, 64, 0, nullptr, nullptr);
    }
  EXPECT_EQ(d->clFinish(q), CL_SUCCESS);
  int v[2] = {};
  d->clEnqueueReadBuffer(q, ms[3], CL_TRUE, 60, sizeof v, v, 0, nullptr, nullptr);
  for (cl_mem m : ms) d->clReleaseMemObject(m);
  d->clReleaseKernel(k);
  d->clReleaseProgram(p);
  d->clReleaseCommandQueue(q);
  d->clReleaseContext(ctx);
  std::vector<std::string> lines = ctl.snapshot().call_log;
  static const std::regex ids("#[0-9]+|\"mems\":\\[[0-9,]*\\]|\"queue\":[0-9]+");
  for (std::string& l : lines) l = std::regex_replace(l, ids, "#");
  lines.push_back("values " + std::to_string(v[0]) + " " + std::to_string(v[1]));
  return lines;
}

TEST_F(Backing, SameSeedSameOrderAndCallLog) {
  open();
  d->clReleaseCommandQueue(q);
  d->clReleaseContext(ctx);
  q = nullptr;
  ctx = nullptr;
  auto a = seeded_run(d, *ctl, dev);
  auto b = seeded_run(d, *ctl, dev);
  EXPECT_GT(a.size(), 40u);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "line " << i;
  // Int 16 is past the fills: touched by the three launches on it.
  EXPECT_EQ(a.back().substr(a.back().size() - 2), " 3") << a.back();
}

// In both modes a buffer never written reads as zeros, even where another buffer's bytes were.
TEST_F(Backing, NeverWrittenBuffersReadAsZerosInBothModes) {
  for (const char* mode : {"pocl", "none"}) {
    ASSERT_EQ(ctl->configure_backing(mode), "") << mode;
    open();
    std::vector<unsigned char> junk(1 << 16, 0xab), out(1 << 16, 0x11);
    for (int round = 0; round < 3; ++round) {
      cl_mem m = buffer(junk.size());
      ASSERT_EQ(
          d->clEnqueueReadBuffer(q, m, CL_TRUE, 0, out.size(), out.data(), 0, nullptr, nullptr),
          CL_SUCCESS);
      for (size_t i = 0; i < out.size(); ++i)
        ASSERT_EQ(out[i], 0) << mode << " round " << round << " byte " << i;
      ASSERT_EQ(
          d->clEnqueueWriteBuffer(q, m, CL_TRUE, 0, junk.size(), junk.data(), 0, nullptr, nullptr),
          CL_SUCCESS);
      d->clReleaseMemObject(m);
      mems.clear();
    }
    d->clReleaseCommandQueue(q);
    d->clReleaseContext(ctx);
    q = nullptr;
    ctx = nullptr;
  }
}

}  // namespace

namespace {

// Rect transfers run on POCL's buffers: a kernel sees what a rect write put there, and rect reads
// and copies (a sub-buffer included) move the bytes a plain read then finds.
TEST_F(Backing, RectTransfersRunOnPoclsBuffers) {
  open();
  ASSERT_EQ(build(kVecAdd), CL_SUCCESS);
  cl_kernel touch = kernel("touch");
  cl_mem a = buffer(8 * 8 * sizeof(int));
  int host[16];
  for (int i = 0; i < 16; ++i) host[i] = i + 1;
  // A 4x4 block of ints at (2, 1) in an 8x8 image of ints.
  const size_t borigin[3] = {2 * sizeof(int), 1, 0}, zero[3] = {0, 0, 0},
               region[3] = {4 * sizeof(int), 4, 1};
  const size_t pitch = 8 * sizeof(int);
  ASSERT_EQ(d->clEnqueueWriteBufferRect(q, a, CL_TRUE, borigin, zero, region, pitch, 0, 0, 0, host,
                                        0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(touch, 0, sizeof a, &a), CL_SUCCESS);
  const size_t global = 64;
  ASSERT_EQ(d->clEnqueueNDRangeKernel(q, touch, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  int back[16] = {};
  ASSERT_EQ(d->clEnqueueReadBufferRect(q, a, CL_TRUE, borigin, zero, region, pitch, 0, 0, 0, back,
                                       0, nullptr, nullptr),
            CL_SUCCESS);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(back[i], host[i] + 1) << i;
  int all[64];
  ASSERT_EQ(d->clEnqueueReadBuffer(q, a, CL_TRUE, 0, sizeof all, all, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(all[0], 1);              // Outside the block: zero, plus the kernel's 1.
  EXPECT_EQ(all[1 * 8 + 2], 1 + 1);  // The block's first element.
  // Copy the block's first row into a sub-buffer at 256 bytes of another buffer.
  cl_mem big = buffer(512);
  cl_buffer_region r{256, 256};
  cl_int err;
  cl_mem sub = d->clCreateSubBuffer(big, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  mems.push_back(sub);
  const size_t row[3] = {4 * sizeof(int), 1, 1}, at4[3] = {4 * sizeof(int), 0, 0};
  ASSERT_EQ(
      d->clEnqueueCopyBufferRect(q, a, sub, borigin, at4, row, pitch, 0, 0, 0, 0, nullptr, nullptr),
      CL_SUCCESS);
  int got[4] = {};
  ASSERT_EQ(d->clEnqueueReadBuffer(q, big, CL_TRUE, 256 + 4 * sizeof(int), sizeof got, got, 0,
                                   nullptr, nullptr),
            CL_SUCCESS);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], host[i] + 1);
  // Within one buffer, the CTS's bufferreadwriterect case (seed 0): a 55 x 23 x 316 byte image,
  // a 43 x 4 x 130 block from (2, 3, 163) to (4, 15, 36). Slices 163-165 hold both, but in rows
  // 3-6 and 15-18, so no byte is shared: it must succeed and run. POCL's overlap check refused it
  // at execution (CL_MEM_COPY_OVERLAP) while mockcl passed origins flattened to one byte offset.
  const size_t w = 55, h = 23, depth = 316;
  std::vector<unsigned char> image(w * h * depth);
  for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<unsigned char>(i * 7 + 3);
  cl_mem img = buffer(image.size());
  ASSERT_EQ(
      d->clEnqueueWriteBuffer(q, img, CL_TRUE, 0, image.size(), image.data(), 0, nullptr, nullptr),
      CL_SUCCESS);
  const size_t from[3] = {2, 3, 163}, to[3] = {4, 15, 36}, block[3] = {43, 4, 130};
  cl_event done;
  ASSERT_EQ(d->clEnqueueCopyBufferRect(q, img, img, from, to, block, w, w * h, w, w * h, 0, nullptr,
                                       &done),
            CL_SUCCESS);
  ASSERT_EQ(d->clWaitForEvents(1, &done), CL_SUCCESS);
  cl_int status = 1;
  ASSERT_EQ(
      d->clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(status, CL_COMPLETE);
  d->clReleaseEvent(done);
  std::vector<unsigned char> expect = image, result(image.size());
  for (size_t z = 0; z < block[2]; ++z)
    for (size_t y = 0; y < block[1]; ++y)
      for (size_t x = 0; x < block[0]; ++x)
        expect[(to[2] + z) * w * h + (to[1] + y) * w + to[0] + x] =
            image[(from[2] + z) * w * h + (from[1] + y) * w + from[0] + x];
  ASSERT_EQ(
      d->clEnqueueReadBuffer(q, img, CL_TRUE, 0, result.size(), result.data(), 0, nullptr, nullptr),
      CL_SUCCESS);
  EXPECT_TRUE(result == expect);
}

}  // namespace

namespace {

// The launch checks use the kernel's own limits, which POCL knows: a required work-group size.
TEST_F(Backing, NDRangeChecksUsePoclsKernelLimits) {
  open();
  ASSERT_EQ(
      build("__kernel __attribute__((reqd_work_group_size(4, 1, 1))) void fixed(__global int* p) {"
            " p[get_global_id(0)] = 1; }"),
      CL_SUCCESS);
  cl_kernel k = kernel("fixed");
  cl_mem a = buffer(64);
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof a, &a), CL_SUCCESS);
  const size_t g = 8, two = 2, four = 4, zero = 0;
  EXPECT_EQ(d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, &two, 0, nullptr, nullptr),
            CL_INVALID_WORK_GROUP_SIZE);
  EXPECT_EQ(d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr),
            CL_INVALID_WORK_GROUP_SIZE);
  EXPECT_EQ(d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, &four, 0, nullptr, nullptr),
            CL_SUCCESS);
  cl_event e;
  ASSERT_EQ(d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &zero, &four, 0, nullptr, &e), CL_SUCCESS);
  ASSERT_EQ(d->clWaitForEvents(1, &e), CL_SUCCESS);  // An empty range completes without POCL.
  d->clReleaseEvent(e);
  int got[2] = {};
  ASSERT_EQ(d->clEnqueueReadBuffer(q, a, CL_TRUE, 0, sizeof got, got, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(got[0], 1);
  // Partial work-groups need CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, which the device reports as
  // POCL's; without it an OpenCL C 2.0 launch whose local size does not divide the global size is
  // refused at the enqueue, not left to fail when POCL runs it (the CTS's enqueued_local_size).
  cl_bool non_uniform = CL_TRUE;
  ASSERT_EQ(d->clGetDeviceInfo(dev, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, sizeof non_uniform,
                               &non_uniform, nullptr),
            CL_SUCCESS);
  d->clReleaseProgram(prog);
  prog = d->clCreateProgramWithSource(ctx, 1, &kVecAdd, nullptr, nullptr);
  ASSERT_EQ(d->clBuildProgram(prog, 1, &dev, "-cl-std=CL2.0", nullptr, nullptr), CL_SUCCESS);
  cl_kernel touch = kernel("touch");
  ASSERT_EQ(d->clSetKernelArg(touch, 0, sizeof a, &a), CL_SUCCESS);
  const size_t seven = 7;
  cl_event launch = nullptr;
  const cl_int r =
      d->clEnqueueNDRangeKernel(q, touch, 1, nullptr, &seven, &two, 0, nullptr, &launch);
  if (non_uniform) {
    ASSERT_EQ(r, CL_SUCCESS);  // Accepted: then it must run, not fail inside POCL.
    ASSERT_EQ(d->clWaitForEvents(1, &launch), CL_SUCCESS);
    d->clReleaseEvent(launch);
  } else {
    EXPECT_EQ(r, CL_INVALID_WORK_GROUP_SIZE);
  }
}

}  // namespace

namespace {

// In backing mode the devices report the OpenCL C language POCL's compiler gives (the
// intersection, language.h), and the queries still agree with each other.
TEST_F(Backing, DeviceQueriesAreConsistentAndPoclsLanguage) {
  ASSERT_EQ(ctl->configure_devices("gpu;cpu;gpu-8g:profile=nvidia"), "");
  ASSERT_EQ(ctl->configure_backing("pocl"), "");
  cl_platform_id p = mockcl::testing::loader_mock_platform();
  cl_device_id devs[3];
  cl_uint n = 0;
  ASSERT_EQ(d->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 3, devs, &n), CL_SUCCESS);
  ASSERT_EQ(n, 3u);
  // POCL's own device, loaded here as mockcl loads it (its .icd names the library).
  const mockcl::testing::direct_device pocl = mockcl::testing::pocl_device();
  const cl_icd_dispatch& pd = *pocl.d;
  const cl_device_id pocl_dev = pocl.device;
  cl_bool pocl_non_uniform = CL_TRUE;
  ASSERT_EQ(pd.clGetDeviceInfo(pocl_dev, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT,
                               sizeof pocl_non_uniform, &pocl_non_uniform, nullptr),
            CL_SUCCESS);
  for (cl_device_id dev : devs) {
    cl_bool non_uniform = !pocl_non_uniform;
    ASSERT_EQ(d->clGetDeviceInfo(dev, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, sizeof non_uniform,
                                 &non_uniform, nullptr),
              CL_SUCCESS);
    EXPECT_EQ(non_uniform, pocl_non_uniform);  // POCL runs the launches, so POCL's answer.
  }
  auto features = [&](cl_device_id dev) {
    const cl_icd_dispatch& t = dev == pocl_dev ? pd : *d;
    size_t sz = 0;
    t.clGetDeviceInfo(dev, CL_DEVICE_OPENCL_C_FEATURES, 0, nullptr, &sz);
    std::vector<cl_name_version> v(sz / sizeof(cl_name_version));
    if (sz) t.clGetDeviceInfo(dev, CL_DEVICE_OPENCL_C_FEATURES, sz, v.data(), nullptr);
    std::vector<std::string> names;
    for (const auto& f : v) names.push_back(f.name);
    return names;
  };
  for (cl_uint i = 0; i < n; ++i) {
    std::vector<std::string> problems = mockcl::testing::device_consistency(*d, p, devs[i]);
    std::string all;
    for (const auto& m : problems) all += m + "\n";
    EXPECT_TRUE(problems.empty()) << all;
    for (const std::string& f : features(devs[i])) {
      const auto pf = features(pocl_dev);
      EXPECT_NE(std::find(pf.begin(), pf.end(), f), pf.end()) << f << " is not POCL's";
    }
    // fp64 and the 64-bit atomics (piglit's int64 atomics tests) are reported exactly when POCL's
    // device has them.
    char ext[2048], pext[4096];
    ASSERT_EQ(d->clGetDeviceInfo(devs[i], CL_DEVICE_EXTENSIONS, sizeof ext, ext, nullptr),
              CL_SUCCESS);
    ASSERT_EQ(pd.clGetDeviceInfo(pocl_dev, CL_DEVICE_EXTENSIONS, sizeof pext, pext, nullptr),
              CL_SUCCESS);
    for (const char* e :
         {"cl_khr_fp64", "cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics"})
      EXPECT_EQ(std::string(ext).find(e) != std::string::npos,
                std::string(pext).find(e) != std::string::npos)
          << e;
  }
}

}  // namespace
