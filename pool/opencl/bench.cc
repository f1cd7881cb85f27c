// Benchmarks of the OpenCL pools on the first OpenCL device the loader finds (POCL here):
// a pool hit versus an immediate (forced) allocation, and the SVM pool's hit paths.
//
//   bazel run --config=opt //pool/opencl:bench
//
// Each iteration is one allocation and its release.
#include <CL/cl.h>
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "pool/opencl/buffer_pool.h"
#include "pool/opencl/cl_error.h"
#include "pool/opencl/svm_pool.h"

namespace clpool::opencl {
namespace {

constexpr std::uint64_t kBytes = 1 << 20;

struct device {
  context_ref context;
  queue_ref queue;
  queue_ref other;
  bool svm = false;

  device() {
    cl_platform_id platform = nullptr;
    cl_device_id dev = nullptr;
    throw_if_failed(clGetPlatformIDs(1, &platform, nullptr), "clGetPlatformIDs");
    throw_if_failed(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr),
                    "clGetDeviceIDs");
    cl_int status = CL_SUCCESS;
    context = context_ref::adopt(clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &status));
    throw_if_failed(status, "clCreateContext");
    queue =
        queue_ref::adopt(clCreateCommandQueueWithProperties(context.get(), dev, nullptr, &status));
    throw_if_failed(status, "clCreateCommandQueueWithProperties");
    other =
        queue_ref::adopt(clCreateCommandQueueWithProperties(context.get(), dev, nullptr, &status));
    throw_if_failed(status, "clCreateCommandQueueWithProperties");
    svm = (device_svm_capabilities(dev) & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) != 0;
    std::fprintf(stderr, "device: %s / %s\n", platform_name(platform).c_str(),
                 device_name(dev).c_str());
  }
};

device& dev() {
  static device d;
  return d;
}

// clCreateBuffer + clEnqueueMigrateMemObjects + clReleaseMemObject: what every pool miss costs.
void BM_ImmediateAllocation(benchmark::State& state) {
  immediate_buffer_allocator a(dev().queue.get());
  std::int64_t n = 0;
  for (auto _ : state) {
    buffer_block b = a.allocate(kBytes);
    a.deallocate(b, kBytes);
    if (++n % 64 == 0) clFinish(dev().queue.get());
  }
  clFinish(dev().queue.get());
}
BENCHMARK(BM_ImmediateAllocation);

// clCreateBuffer + clReleaseMemObject only (lazy on POCL: nothing is really allocated).
void BM_DeferredAllocation(benchmark::State& state) {
  deferred_buffer_allocator a(dev().context.get());
  for (auto _ : state) {
    buffer_block b = a.allocate(kBytes);
    a.deallocate(b, kBytes);
  }
}
BENCHMARK(BM_DeferredAllocation);

// A buffer_pool hit: allocate a held block and give it back.
void BM_BufferPoolHit(benchmark::State& state) {
  buffer_pool<> pool{immediate_buffer_allocator(dev().queue.get())};
  pool.allocate(kBytes).release();
  for (auto _ : state) {
    pooled_buffer<> b = pool.allocate(kBytes);
    benchmark::DoNotOptimize(b.mem());
  }
  if (pool.pool().statistics().misses != 1) state.SkipWithError("not all hits");
}
BENCHMARK(BM_BufferPoolHit);

// The core memory_pool's hit, without the OpenCL wrapper (the floor for BM_BufferPoolHit).
void BM_CorePoolHit(benchmark::State& state) {
  memory_pool<immediate_buffer_allocator> pool{immediate_buffer_allocator(dev().queue.get())};
  pool.allocate(kBytes).release();
  for (auto _ : state) {
    auto b = pool.allocate(kBytes);
    benchmark::DoNotOptimize(b.handle().mem);
  }
}
BENCHMARK(BM_CorePoolHit);

// The same with cross-queue safety on and the block bound to one queue each time.
void BM_BufferPoolHitSafeSameQueue(benchmark::State& state) {
  buffer_pool<> pool{immediate_buffer_allocator(dev().queue.get()), {.cross_queue_safety = true}};
  pool.allocate(kBytes, dev().queue.get()).release();
  for (auto _ : state) {
    pooled_buffer<> b = pool.allocate(kBytes, dev().queue.get());
    benchmark::DoNotOptimize(b.mem());
  }
}
BENCHMARK(BM_BufferPoolHitSafeSameQueue);

// clSVMAlloc + clSVMFree: what every SVM pool miss costs.
void BM_SvmAllocation(benchmark::State& state) {
  if (!dev().svm) return state.SkipWithError("no SVM");
  svm_allocator a(dev().context.get());
  for (auto _ : state) {
    svm_block b = a.allocate(kBytes);
    a.deallocate(b, kBytes);
  }
}
BENCHMARK(BM_SvmAllocation);

// svm_pool hit, unbound (host use).
void BM_SvmPoolHitUnbound(benchmark::State& state) {
  if (!dev().svm) return state.SkipWithError("no SVM");
  svm_pool pool{svm_allocator(dev().context.get())};
  pool.allocate(kBytes).release();
  for (auto _ : state) {
    pooled_svm p = pool.allocate(kBytes);
    benchmark::DoNotOptimize(p.ptr());
  }
}
BENCHMARK(BM_SvmPoolHitUnbound);

// svm_pool hit bound to the queue it was last used on (no ordering command needed).
void BM_SvmPoolHitSameQueue(benchmark::State& state) {
  if (!dev().svm) return state.SkipWithError("no SVM");
  svm_pool pool{svm_allocator(dev().context.get())};
  pool.allocate(kBytes, dev().queue.get()).release();
  for (auto _ : state) {
    pooled_svm p = pool.allocate(kBytes, dev().queue.get());
    benchmark::DoNotOptimize(p.ptr());
  }
}
BENCHMARK(BM_SvmPoolHitSameQueue);

// svm_pool hit alternating between two queues: a marker on the old queue, a barrier on the new.
void BM_SvmPoolHitCrossQueue(benchmark::State& state) {
  if (!dev().svm) return state.SkipWithError("no SVM");
  svm_pool pool{svm_allocator(dev().context.get())};
  cl_command_queue queues[2] = {dev().queue.get(), dev().other.get()};
  pool.allocate(kBytes, queues[0]).release();
  std::int64_t n = 0;
  for (auto _ : state) {
    pooled_svm p = pool.allocate(kBytes, queues[++n & 1]);
    benchmark::DoNotOptimize(p.ptr());
    if (n % 64 == 0) {
      clFinish(queues[0]);
      clFinish(queues[1]);
    }
  }
  clFinish(queues[0]);
  clFinish(queues[1]);
}
BENCHMARK(BM_SvmPoolHitCrossQueue);

}  // namespace
}  // namespace clpool::opencl

BENCHMARK_MAIN();
