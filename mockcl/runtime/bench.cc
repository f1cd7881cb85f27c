// clCreateBuffer + clReleaseMemObject per pair, in-process and through the system ICD loader.
// Run: bazel run --config=opt //mockcl:bench
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "mockcl/runtime/control.h"
#include "mockcl/testing.h"

namespace {

struct Env {
  const cl_icd_dispatch* d;
  cl_context ctx;
};

Env make(const cl_icd_dispatch* d, cl_platform_id p) {
  cl_device_id dev;
  d->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr);
  cl_int err;
  cl_context ctx = d->clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) std::abort();
  return {d, ctx};
}

void pair(benchmark::State& state, const Env& e) {
  for (auto _ : state) {
    cl_int err;
    cl_mem m = e.d->clCreateBuffer(e.ctx, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    benchmark::DoNotOptimize(m);
    e.d->clReleaseMemObject(m);
  }
}

void BM_CreateRelease_InProcess(benchmark::State& state) {
  static Env e = make(mockcl::dispatch(), mockcl::platform());
  pair(state, e);
}
BENCHMARK(BM_CreateRelease_InProcess);

void BM_CreateRelease_ThroughLoader(benchmark::State& state) {
  static Env e = [] {
    cl_platform_id p = mockcl::testing::loader_mock_platform();
    if (!p) std::abort();
    return make(mockcl::testing::loader_dispatch(), p);
  }();
  pair(state, e);
}
BENCHMARK(BM_CreateRelease_ThroughLoader);

}  // namespace

int main(int argc, char** argv) {
  // No backing device: the no-compute mode is the one measured (before any CL call).
  setenv("MOCKCL_BACKING", "none", 1);
  const char* so = std::getenv("LIBMOCKCL_SO");
  mockcl::testing::use_mock_only(mockcl::testing::mock_so_path(so ? so : "mockcl/libmockcl.so"));
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
