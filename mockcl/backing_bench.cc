// A kernel launch (clEnqueueNDRangeKernel + clFinish of a 64-item kernel) on mockcl's backing
// device against the same launch on POCL directly, both through the system ICD loader.
// Run: bazel run --config=opt //mockcl:backing_bench
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mockcl/testing.h"

namespace {

struct Launch {
  const cl_icd_dispatch* d;
  cl_command_queue q;
  cl_kernel k;
};

Launch make(cl_platform_id p) {
  const cl_icd_dispatch* d = mockcl::testing::loader_dispatch();
  cl_device_id dev;
  if (d->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr) != CL_SUCCESS) std::abort();
  cl_int err;
  cl_context ctx = d->clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  cl_command_queue q = d->clCreateCommandQueue(ctx, dev, 0, &err);
  const char* src = "__kernel void inc(__global int* p) { p[get_global_id(0)] += 1; }";
  cl_program prog = d->clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  if (d->clBuildProgram(prog, 1, &dev, "", nullptr, nullptr) != CL_SUCCESS) std::abort();
  cl_kernel k = d->clCreateKernel(prog, "inc", &err);
  cl_mem m = d->clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * sizeof(int), nullptr, &err);
  if (err != CL_SUCCESS || d->clSetKernelArg(k, 0, sizeof m, &m) != CL_SUCCESS) std::abort();
  return {d, q, k};
}

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

void run(benchmark::State& state, const Launch& l) {
  const size_t global = 64;
  for (auto _ : state) {
    l.d->clEnqueueNDRangeKernel(l.q, l.k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
    l.d->clFinish(l.q);
  }
}

void BM_KernelLaunch_MockclBacking(benchmark::State& state) {
  static Launch l = make(platform_named("mockcl"));
  run(state, l);
}
BENCHMARK(BM_KernelLaunch_MockclBacking);

void BM_KernelLaunch_PoclDirect(benchmark::State& state) {
  static Launch l = make(platform_named("Portable Computing Language"));
  run(state, l);
}
BENCHMARK(BM_KernelLaunch_PoclDirect);

}  // namespace

int main(int argc, char** argv) {
  setenv("MOCKCL_BACKING", "pocl", 1);  // before any CL call
  const char* so = std::getenv("LIBMOCKCL_SO");
  mockcl::testing::use_mock_and_pocl(mockcl::testing::mock_so_path(so ? so : "mockcl/libmockcl.so"));
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
