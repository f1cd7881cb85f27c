/* stage: the example program of clpool sweep (README.md, "Every out-of-memory, tried one by one").
 * It stages a data set on the first OpenCL device in chunks, as a loader does: a result buffer,
 * then per chunk a staging buffer filled through a mapping and copied into the result; then it
 * reads the result back and prints its checksum.
 *
 *     stage [CHUNKS]      CHUNKS of 4 MiB each (default 3)
 *
 * BUILD builds it twice. `stage` checks every status and, on any failure, says so, releases what
 * it holds and exits 1. `stage_unchecked` (-DUNCHECKED_MAP) trusts clEnqueueMapBuffer, as much
 * code does: on a device that commits memory at first use (NVIDIA's), the map of a new buffer is
 * where an out-of-memory shows up, and it writes through the NULL mapping there. Plain C, linked
 * with -rdynamic so that clpool can name its functions. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES ((size_t)4 << 20)

static cl_context ctx;
static cl_command_queue queue;

static int failed(cl_int status, const char* what) {
  if (status == CL_SUCCESS) return 0;
  fprintf(stderr, "stage: %s failed: %d\n", what, status);
  return 1;
}

/* Copies chunk `i` (every byte i + 1) into `result` through a staging buffer; 0 on success. */
int upload_chunk(cl_mem result, int i) {
  cl_int status;
  cl_mem staging = clCreateBuffer(ctx, CL_MEM_READ_WRITE, CHUNK_BYTES, NULL, &status);
  if (failed(status, "clCreateBuffer (staging)")) return 1;
  unsigned char* p =
      (unsigned char*)clEnqueueMapBuffer(queue, staging, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0,
                                         CHUNK_BYTES, 0, NULL, NULL, &status);
#ifndef UNCHECKED_MAP
  if (failed(status, "clEnqueueMapBuffer (staging)")) {
    clReleaseMemObject(staging);
    return 1;
  }
#endif
  memset(p, i + 1, CHUNK_BYTES);
  status = clEnqueueUnmapMemObject(queue, staging, p, 0, NULL, NULL);
  if (status == CL_SUCCESS) {
    status = clEnqueueCopyBuffer(queue, staging, result, 0, (size_t)i * CHUNK_BYTES, CHUNK_BYTES, 0,
                                 NULL, NULL);
  }
  if (status == CL_SUCCESS) status = clFinish(queue);
  clReleaseMemObject(staging);
  return failed(status, "copying the chunk");
}

int main(int argc, char** argv) {
  const int chunks = argc > 1 ? atoi(argv[1]) : 3;
  if (argc > 2 || chunks < 1 || chunks > 64) {
    fprintf(stderr, "usage: stage [CHUNKS]   (1 to 64 chunks of 4 MiB)\n");
    return 2;
  }
  cl_platform_id platform;
  cl_device_id device;
  cl_int status;
  if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) {
    fprintf(stderr, "stage: no OpenCL device\n");
    return 3;
  }
  ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
  if (failed(status, "clCreateContext")) return 3;
  queue = clCreateCommandQueueWithProperties(ctx, device, NULL, &status);
  if (failed(status, "clCreateCommandQueueWithProperties")) return 3;

  const size_t bytes = (size_t)chunks * CHUNK_BYTES;
  cl_mem result = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &status);
  int rc = failed(status, "clCreateBuffer (result)");
  for (int i = 0; rc == 0 && i < chunks; ++i) rc = upload_chunk(result, i);
  unsigned char* host = rc == 0 ? (unsigned char*)malloc(bytes) : NULL;
  if (rc == 0 && host == NULL) rc = 1;
  if (rc == 0) {
    rc = failed(clEnqueueReadBuffer(queue, result, CL_TRUE, 0, bytes, host, 0, NULL, NULL),
                "clEnqueueReadBuffer (result)");
  }
  if (rc == 0) {
    unsigned long sum = 0;
    for (size_t at = 0; at < bytes; at += 4096) sum += host[at];
    printf("checksum %lu\n", sum);
  } else {
    fprintf(stderr, "stage: out of device memory, or another failure above: nothing staged\n");
  }
  free(host);
  if (result != NULL) clReleaseMemObject(result);
  clReleaseCommandQueue(queue);
  clReleaseContext(ctx);
  return rc;
}
