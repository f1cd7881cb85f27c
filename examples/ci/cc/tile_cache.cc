// A tile renderer in C++ and plain OpenCL, the C++ example of clpool's CI tools (README.md, "Use it
// in CI"): it renders --tiles tiles of 16 MiB and keeps the results in a cache so that a tile asked
// for again is not rendered again. The cache keeps every tile unless --cache-limit bounds it, which
// is the bug the clpool_memory_test targets in BUILD catch (tile_cache_oom_test: out of memory on
// a 256 MiB card; tile_cache_over_limit_test: above its 128 MiB limit); tile_cache_memory_test runs
// it with the bound and passes.
//
//     tile_cache [--tiles N] [--cache-limit N] [--abort-on-error]
//
// --abort-on-error: abort() on a failed OpenCL call instead of exiting 3, as many programs do (no
// exit handler runs: the report must still name the sites).
//
// Linked with -rdynamic, so that the layer can name its functions in a report.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>

// Not in an anonymous namespace: -rdynamic exports only functions with external linkage.
constexpr size_t tile_bytes = 16u << 20;
static bool abort_on_error = false;

static void check(cl_int err, const char* what) {
  if (err != CL_SUCCESS) {
    std::fprintf(stderr, "tile_cache: %s failed: %d\n", what, err);
    if (abort_on_error) std::abort();
    std::exit(3);
  }
}

// A buffer on the device now: created, then migrated (as PyOpenCL's ImmediateAllocator does), so
// that a device which commits memory at first use runs out here. Inlined, so that the site of
// each buffer is its caller.
__attribute__((always_inline)) inline cl_mem device_buffer(cl_context ctx, cl_command_queue q,
                                                           size_t bytes) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  check(err, "clCreateBuffer");
  check(clEnqueueMigrateMemObjects(q, 1, &m, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, nullptr,
                                   nullptr),
        "clEnqueueMigrateMemObjects");
  return m;
}

class TileCache {
 public:
  explicit TileCache(size_t limit) : limit_(limit) {}
  ~TileCache() {
    for (cl_mem m : tiles_) clReleaseMemObject(m);
  }
  // Keeps the tile; with a limit, the oldest goes first.
  __attribute__((noinline)) void put(cl_context ctx, cl_command_queue q, cl_mem tile) {
    cl_mem copy = device_buffer(ctx, q, tile_bytes);
    check(clEnqueueCopyBuffer(q, tile, copy, 0, 0, tile_bytes, 0, nullptr, nullptr), "copy");
    tiles_.push_back(copy);
    while (limit_ != 0 && tiles_.size() > limit_) {
      clReleaseMemObject(tiles_.front());
      tiles_.pop_front();
    }
  }

 private:
  size_t limit_;  // 0: keep everything (the bug)
  std::deque<cl_mem> tiles_;
};

__attribute__((noinline)) void render_tile(cl_context ctx, cl_command_queue q, TileCache& cache,
                                           int i) {
  cl_mem tile = device_buffer(ctx, q, tile_bytes);
  const int value = i;
  check(clEnqueueFillBuffer(q, tile, &value, sizeof value, 0, 4096, 0, nullptr, nullptr), "fill");
  cache.put(ctx, q, tile);
  check(clFinish(q), "clFinish");
  clReleaseMemObject(tile);
}

int main(int argc, char** argv) {
  int tiles = 24;
  size_t cache_limit = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--tiles") == 0 && i + 1 < argc) {
      tiles = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--cache-limit") == 0 && i + 1 < argc) {
      cache_limit = static_cast<size_t>(std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--abort-on-error") == 0) {
      abort_on_error = true;
    } else {
      std::fprintf(stderr, "usage: tile_cache [--tiles N] [--cache-limit N] [--abort-on-error]\n");
      return 2;
    }
  }
  cl_platform_id platform;
  cl_uint n = 0;
  check(clGetPlatformIDs(1, &platform, &n), "clGetPlatformIDs");
  cl_device_id device;
  check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
  cl_int err = CL_SUCCESS;
  cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, nullptr, &err);
  check(err, "clCreateCommandQueueWithProperties");
  {
    TileCache cache(cache_limit);
    for (int i = 0; i < tiles; ++i) render_tile(ctx, q, cache, i);
  }
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  std::printf("tile_cache: rendered %d tiles\n", tiles);
  return 0;
}
