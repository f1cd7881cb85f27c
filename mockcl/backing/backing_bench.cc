// mockcl's backing device against POCL directly, both through the system ICD loader, side by side
// in one run (issue 43's speed targets): a kernel launch + clFinish of a 64-item kernel, the same
// launch + clWaitForEvents on its event, a blocking 4 KiB write + read, and a map + unmap of a
// whole 128 MiB buffer (read/write map, written through, unmapped, finished).
// Run: bazel run --config=opt //mockcl:backing_bench
// A library other than the built one (an older mockcl, to compare): LIBMOCKCL_SO=PATH.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mockcl/testing.h"

namespace {

constexpr size_t kMapBytes = size_t{128} << 20;

struct Device {
  const cl_icd_dispatch* d;
  cl_context ctx;
  cl_command_queue q;
  cl_kernel k;
  cl_mem small;  // 64 ints, the kernel's argument
  cl_mem big;    // kMapBytes, made at its first map
};

cl_platform_id platform_named(const char* name) {
  const cl_icd_dispatch* d = mockcl::testing::loader_dispatch();
  cl_uint n = 0;
  d->clGetPlatformIDs(0, nullptr, &n);
  std::vector<cl_platform_id> ps(n);
  d->clGetPlatformIDs(n, ps.data(), nullptr);
  for (cl_platform_id p : ps) {
    char got[256] = {};
    d->clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof got, got, nullptr);
    if (std::strcmp(got, name) == 0) return p;
  }
  std::abort();
}

Device make(const char* platform) {
  const cl_icd_dispatch* d = mockcl::testing::loader_dispatch();
  cl_device_id dev;
  if (d->clGetDeviceIDs(platform_named(platform), CL_DEVICE_TYPE_ALL, 1, &dev, nullptr) !=
      CL_SUCCESS)
    std::abort();
  cl_int err;
  cl_context ctx = d->clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  cl_command_queue q = d->clCreateCommandQueue(ctx, dev, 0, &err);
  const char* src = "__kernel void inc(__global int* p) { p[get_global_id(0)] += 1; }";
  cl_program prog = d->clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  if (d->clBuildProgram(prog, 1, &dev, "", nullptr, nullptr) != CL_SUCCESS) std::abort();
  cl_kernel k = d->clCreateKernel(prog, "inc", &err);
  cl_mem m = d->clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * sizeof(int), nullptr, &err);
  if (err != CL_SUCCESS || d->clSetKernelArg(k, 0, sizeof m, &m) != CL_SUCCESS) std::abort();
  return {d, ctx, q, k, m, nullptr};
}

Device& mockcl_device() {
  static Device dev = make("mockcl");
  return dev;
}
Device& pocl_device() {
  static Device dev = make("Portable Computing Language");
  return dev;
}

void launch_finish(benchmark::State& state, Device& v) {
  const size_t global = 64;
  for (auto _ : state) {
    v.d->clEnqueueNDRangeKernel(v.q, v.k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
    v.d->clFinish(v.q);
  }
}

void launch_wait(benchmark::State& state, Device& v) {
  const size_t global = 64;
  for (auto _ : state) {
    cl_event e = nullptr;
    v.d->clEnqueueNDRangeKernel(v.q, v.k, 1, nullptr, &global, nullptr, 0, nullptr, &e);
    v.d->clWaitForEvents(1, &e);
    v.d->clReleaseEvent(e);
  }
}

void write_read(benchmark::State& state, Device& v) {
  std::vector<char> host(4096, 1);
  for (auto _ : state) {
    v.d->clEnqueueWriteBuffer(v.q, v.small, CL_TRUE, 0, 256, host.data(), 0, nullptr, nullptr);
    v.d->clEnqueueReadBuffer(v.q, v.small, CL_TRUE, 0, 256, host.data(), 0, nullptr, nullptr);
  }
}

void map_unmap(benchmark::State& state, Device& v) {
  cl_int err;
  if (!v.big) v.big = v.d->clCreateBuffer(v.ctx, CL_MEM_READ_WRITE, kMapBytes, nullptr, &err);
  for (auto _ : state) {
    void* p = v.d->clEnqueueMapBuffer(v.q, v.big, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, kMapBytes,
                                      0, nullptr, nullptr, &err);
    if (!p) std::abort();
    static_cast<char*>(p)[0] += 1;
    v.d->clEnqueueUnmapMemObject(v.q, v.big, p, 0, nullptr, nullptr);
    v.d->clFinish(v.q);
  }
}

void BM_KernelLaunchFinish_MockclBacking(benchmark::State& s) { launch_finish(s, mockcl_device()); }
void BM_KernelLaunchFinish_PoclDirect(benchmark::State& s) { launch_finish(s, pocl_device()); }
void BM_KernelLaunchWaitEvent_MockclBacking(benchmark::State& s) {
  launch_wait(s, mockcl_device());
}
void BM_KernelLaunchWaitEvent_PoclDirect(benchmark::State& s) { launch_wait(s, pocl_device()); }
void BM_WriteRead256B_MockclBacking(benchmark::State& s) { write_read(s, mockcl_device()); }
void BM_WriteRead256B_PoclDirect(benchmark::State& s) { write_read(s, pocl_device()); }
void BM_MapUnmap128MiB_MockclBacking(benchmark::State& s) { map_unmap(s, mockcl_device()); }
void BM_MapUnmap128MiB_PoclDirect(benchmark::State& s) { map_unmap(s, pocl_device()); }
BENCHMARK(BM_KernelLaunchFinish_MockclBacking);
BENCHMARK(BM_KernelLaunchFinish_PoclDirect);
BENCHMARK(BM_KernelLaunchWaitEvent_MockclBacking);
BENCHMARK(BM_KernelLaunchWaitEvent_PoclDirect);
BENCHMARK(BM_WriteRead256B_MockclBacking);
BENCHMARK(BM_WriteRead256B_PoclDirect);
BENCHMARK(BM_MapUnmap128MiB_MockclBacking)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MapUnmap128MiB_PoclDirect)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  setenv("MOCKCL_BACKING", "pocl", 1);    // before any CL call
  setenv("MOCKCL_DEVICES", "gpu-1g", 0);  // room for the 128 MiB buffer (max alloc 256 MiB)
  const char* so = std::getenv("LIBMOCKCL_SO");
  mockcl::testing::use_mock_and_pocl(
      mockcl::testing::mock_so_path(so ? so : "mockcl/libmockcl.so"));
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
