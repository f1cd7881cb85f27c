/* A small OpenCL program for clpool sweep's tests, with one way to meet an out-of-memory per mode:
 *
 *   sweep_victim MODE      MODE: handles, recovers, crashes, crashes_later, hangs, leaks,
 *                                leaks_at_exit_, silent, uses_freed
 *
 * It makes three buffers (1, 2 and 3 MiB), fills each through a mapping (its first use), reads
 * them back and prints their checksum, then releases everything. What it does when a buffer
 * cannot be made or used is its MODE: reports it and exits 1 (handles); gives up the biggest
 * buffer it holds and tries again smaller, printing the same checksum (recovers); writes through
 * the NULL mapping (crashes); keeps going and writes through it at the end (crashes_later); waits
 * for a completion that never comes (hangs); exits 1 without releasing what it holds (leaks), or
 * the same through _exit(1), which runs no exit handlers, as its clean run ends (leaks_at_exit_);
 * leaves that buffer out of the checksum and exits 0 (silent); reads host memory it has freed and
 * exits 1 (uses_freed: AddressSanitizer's finding in an ASan build, unseen in another). Plain C,
 * as a user's program is. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char* mode;
static cl_context ctx;
static cl_command_queue queue;

static int is(const char* m) { return strcmp(mode, m) == 0; }

/* A buffer of `bytes`, filled with `value` through a mapping; NULL when it cannot be made or
 * used (then *status says why). */
cl_mem make_filled(size_t bytes, unsigned char value, cl_int* status, unsigned char** mapped_out) {
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, status);
  unsigned char* p = (unsigned char*)clEnqueueMapBuffer(
      queue, b, CL_TRUE, CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, b != NULL ? status : &(cl_int){0});
  *mapped_out = p;
  if (p == NULL) {
    if (is("crashes")) memset(p, value, bytes); /* assumes the mapping worked */
    if (b != NULL) clReleaseMemObject(b);
    return NULL;
  }
  memset(p, value, bytes);
  clEnqueueUnmapMemObject(queue, b, p, 0, NULL, NULL);
  clFinish(queue);
  return b;
}

unsigned long checksum(cl_mem b, size_t bytes) {
  unsigned char* host = (unsigned char*)malloc(bytes);
  unsigned long sum = 0;
  if (clEnqueueReadBuffer(queue, b, CL_TRUE, 0, bytes, host, 0, NULL, NULL) == CL_SUCCESS) {
    for (size_t i = 0; i < bytes; i += 4096) sum += host[i];
  }
  free(host);
  return sum;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(
        stderr,
        "usage: sweep_victim "
        "handles|recovers|crashes|crashes_later|hangs|leaks|leaks_at_exit_|silent|uses_freed\n");
    return 2;
  }
  mode = argv[1];
  if (!is("handles") && !is("recovers") && !is("crashes") && !is("crashes_later") && !is("hangs") &&
      !is("leaks") && !is("leaks_at_exit_") && !is("silent") && !is("uses_freed")) {
    fprintf(stderr, "sweep_victim: unknown mode '%s'\n", mode);
    return 2;
  }
  cl_platform_id platform;
  cl_device_id device;
  cl_int status;
  if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) {
    fprintf(stderr, "sweep_victim: no OpenCL device\n");
    return 3;
  }
  ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
  queue = clCreateCommandQueueWithProperties(ctx, device, NULL, &status);
  cl_mem held[3] = {NULL, NULL, NULL};
  size_t sizes[3] = {1 << 20, 2 << 20, 3 << 20};
  unsigned char* lost_mapping = NULL;
  int lost = -1;
  for (int i = 0; i < 3; ++i) {
    unsigned char* mapped;
    held[i] = make_filled(sizes[i], (unsigned char)(i + 1), &status, &mapped);
    if (held[i] != NULL) continue;
    if (is("handles")) {
      fprintf(stderr, "sweep_victim: out of device memory (status %d) for buffer %d\n", status, i);
      for (int j = 0; j < i; ++j) clReleaseMemObject(held[j]);
      clReleaseCommandQueue(queue);
      clReleaseContext(ctx);
      return 1;
    }
    if (is("recovers")) {
      for (int j = i - 1; j >= 0 && held[i] == NULL; --j) { /* give up a bigger one, try again */
        if (held[j] == NULL) continue;
        clReleaseMemObject(held[j]);
        held[j] = NULL;
        held[i] = make_filled(sizes[i], (unsigned char)(i + 1), &status, &mapped);
        if (held[i] != NULL)
          held[j] = make_filled(sizes[j], (unsigned char)(j + 1), &status, &mapped);
      }
      if (held[i] == NULL)
        held[i] = make_filled(sizes[i], (unsigned char)(i + 1), &status, &mapped);
      if (held[i] == NULL) return 1;
      continue;
    }
    if (is("hangs")) {
      for (;;) pause(); /* waits for a completion that never comes */
    }
    if (is("uses_freed")) {
      volatile char* message = (volatile char*)malloc(64);
      free((void*)message);
      /* The defect this mode commits on purpose; GCC 12 rightly warns of it. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuse-after-free"
#endif
      fprintf(stderr, "sweep_victim: out of device memory (%d)\n",
              message[0]); /* read after free */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
      for (int j = 0; j < i; ++j) clReleaseMemObject(held[j]);
      return 1;
    }
    if (is("leaks")) {
      fprintf(stderr, "sweep_victim: out of device memory; giving up\n");
      return 1; /* without releasing held[] */
    }
    if (is("leaks_at_exit_")) {
      fprintf(stderr, "sweep_victim: out of device memory; giving up at once\n");
      _exit(1); /* no exit handlers: the layer never writes its count at exit */
    }
    lost = i;
    lost_mapping = mapped;
  }
  unsigned long sum = 0;
  for (int i = 0; i < 3; ++i) {
    if (held[i] != NULL) sum += checksum(held[i], sizes[i]);
  }
  if (is("crashes_later") && lost >= 0)
    lost_mapping[0] = 1; /* the summary step trusts every buffer */
  printf("checksum %lu\n", sum);
  for (int i = 0; i < 3; ++i) {
    if (held[i] != NULL) clReleaseMemObject(held[i]);
  }
  clReleaseCommandQueue(queue);
  clReleaseContext(ctx);
  if (is("leaks_at_exit_")) {
    fflush(stdout);
    _exit(0); /* its fault-free run ends without exit handlers too */
  }
  return 0;
}
