// A program outside the Bazel tree that uses an installed clpool (tools/install_test.sh builds it
// with pkg-config and with CMake): a pool over a malloc allocator, then a buffer_pool on the
// first OpenCL device (the installed mockcl ICD in the test). Prints "consumer: ok" and exits 0.
#include <clpool/pool/memory_pool.h>
#include <clpool/pool/opencl/buffer_pool.h>

#include <cstdio>
#include <cstdlib>
#include <new>

namespace {

struct malloc_allocator {
  using handle_type = void*;
  handle_type allocate(std::uint64_t bytes) {
    void* p = std::malloc(bytes);
    if (p == nullptr) throw clpool::allocator_out_of_memory(-1, "malloc failed");
    return p;
  }
  void deallocate(handle_type h, std::uint64_t) noexcept { std::free(h); }
};

int fail(const char* what) {
  std::fprintf(stderr, "consumer: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  clpool::memory_pool<malloc_allocator> pool;
  {
    auto a = pool.allocate(1 << 20);
    if (a.handle() == nullptr) return fail("no block");
  }
  if (pool.held_bytes() == 0) return fail("the released block was not held for reuse");
  const std::uint64_t managed = pool.managed_bytes();
  { auto again = pool.allocate(1 << 20); }
  if (pool.managed_bytes() != managed) return fail("the second request did not reuse the block");

  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) {
    return fail("no OpenCL device");
  }
  cl_int err = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) return fail("clCreateContext failed");
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
  if (err != CL_SUCCESS) return fail("clCreateCommandQueueWithProperties failed");
  {
    clpool::opencl::buffer_pool<> buffers{clpool::opencl::immediate_buffer_allocator(queue)};
    {
      auto b = buffers.allocate(4 << 20, queue);
      if (b.mem() == nullptr) return fail("no buffer");
    }
    if (buffers.held_bytes() < (4u << 20)) return fail("the buffer was not held for reuse");
  }
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  std::printf("consumer: ok\n");
  return 0;
}
