/* A frame-processing loop in plain C and OpenCL whose out-of-memory has one obvious cause:
 * cache_put() keeps a device copy of every processed frame and nothing evicts it. Each frame
 * also gets a scratch buffer, released at once.
 *
 *     growing_cache_c [FRAMES]
 *
 * Record it with `clpool record --out c.trace -- growing_cache_c`, replay it with
 * `clpool_replay c.trace --capacity 32MiB`: the report names cache_put as the site holding the
 * memory. Built with -rdynamic, so that the layer's symbolizer (dladdr) can name its functions;
 * without it, frames show as offsets in the executable. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

enum { frame_bytes = 1 << 20, max_frames = 4096 };

static cl_mem cache[max_frames];
static int cached;

/* The bug: every frame's copy is kept. */
__attribute__((noinline)) void cache_put(cl_context ctx, cl_command_queue q, cl_mem frame) {
  cl_int err = CL_SUCCESS;
  cl_mem copy = clCreateBuffer(ctx, CL_MEM_READ_WRITE, frame_bytes, NULL, &err);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "cache_put: clCreateBuffer failed: %d\n", err);
    exit(1);
  }
  clEnqueueCopyBuffer(q, frame, copy, 0, 0, frame_bytes, 0, NULL, NULL);
  cache[cached++] = copy;
}

__attribute__((noinline)) void process_frame(cl_context ctx, cl_command_queue q, cl_mem frame) {
  cl_int err = CL_SUCCESS;
  cl_mem scratch = clCreateBuffer(ctx, CL_MEM_READ_WRITE, frame_bytes / 2, NULL, &err);
  if (err != CL_SUCCESS) exit(1);
  const int zero = 0;
  clEnqueueFillBuffer(q, scratch, &zero, sizeof zero, 0, frame_bytes / 2, 0, NULL, NULL);
  cache_put(ctx, q, frame);
  clFinish(q);
  clReleaseMemObject(scratch);
}

int main(int argc, char** argv) {
  const int frames = argc > 1 ? atoi(argv[1]) : 48;
  if (frames < 1 || frames > max_frames) {
    fprintf(stderr, "usage: growing_cache_c [FRAMES (1-%d)]\n", max_frames);
    return 2;
  }
  cl_platform_id platform;
  cl_device_id device;
  cl_int err = CL_SUCCESS;
  if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) {
    fprintf(stderr, "growing_cache_c: no OpenCL device\n");
    return 1;
  }
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
  cl_mem frame = clCreateBuffer(ctx, CL_MEM_READ_WRITE, frame_bytes, NULL, &err);
  for (int i = 0; i < frames; ++i) process_frame(ctx, q, frame);
  printf("processed %d frames; the cache holds %d\n", frames, cached);
  for (int i = 0; i < cached; ++i) clReleaseMemObject(cache[i]);
  clReleaseMemObject(frame);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return 0;
}
