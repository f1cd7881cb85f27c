// layer_driver: an ordinary OpenCL program (it links the ICD loader and knows nothing of the
// layer) that runs one scenario and checks every API result. layer_test runs it under the layer
// with different CLPOOL_LAYER_* settings and then checks the trace it left.
//
//   layer_driver SCENARIO     (lifecycle | deferred | svm | budget | fail_nth | platforms |
//                              first_use | first_use_rect | first_use_svm | svm_at_creation |
//                              first_use_rollback | threads | churn | max_alloc | svm_invalid |
//                              end_<how>, see end())
//
// Exit 0 when every call behaved as the scenario expects; otherwise 1, with the reason on stderr.
// Before exiting it waits until the trace (CLPOOL_LAYER_TRACE, if set) holds as many frees as the
// scenario released, because destructor callbacks may still be running on ICD threads.
#include <CL/cl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

int failures = 0;

#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "layer_driver:%d: check failed: %s\n", __LINE__, #cond); \
      ++failures;                                                                   \
    }                                                                               \
  } while (0)

#define CHECK_CL(expr)                                                               \
  do {                                                                               \
    const cl_int status_ = (expr);                                                   \
    if (status_ != CL_SUCCESS) {                                                     \
      std::fprintf(stderr, "layer_driver:%d: %s -> %d\n", __LINE__, #expr, status_); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

struct cl_env {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
};

cl_env open_first_device() {
  cl_env env;
  cl_uint n = 0;
  const cl_int status = clGetPlatformIDs(1, &env.platform, &n);
  if (status != CL_SUCCESS || n == 0) {
    std::fprintf(stderr, "layer_driver: clGetPlatformIDs failed: %d\n", status);
    std::exit(2);
  }
  CHECK_CL(clGetDeviceIDs(env.platform, CL_DEVICE_TYPE_ALL, 1, &env.device, nullptr));
  cl_int err = CL_SUCCESS;
  env.context = clCreateContext(nullptr, 1, &env.device, nullptr, nullptr, &err);
  CHECK_CL(err);
  env.queue = clCreateCommandQueueWithProperties(env.context, env.device, nullptr, &err);
  CHECK_CL(err);
  return env;
}

void close_env(cl_env& env) {
  CHECK_CL(clFinish(env.queue));
  CHECK_CL(clReleaseCommandQueue(env.queue));
  CHECK_CL(clReleaseContext(env.context));
}

cl_mem buffer(const cl_env& env, cl_mem_flags flags, size_t size) {
  cl_int err = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(env.context, flags, size, nullptr, &err);
  CHECK_CL(err);
  return mem;
}

// Creates a buffer that the scenario expects to be refused with `expected` status.
void expect_buffer_refused(const cl_env& env, size_t size, cl_int expected) {
  cl_int err = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(env.context, CL_MEM_READ_WRITE, size, nullptr, &err);
  CHECK(mem == nullptr);
  if (err != expected) std::fprintf(stderr, "layer_driver: got %d, wanted %d\n", err, expected);
  CHECK(err == expected);
  if (mem != nullptr) clReleaseMemObject(mem);
}

// Creates `size` bytes, never used. Returns true when the device created it (then released at
// once, and "layer_driver: lifecycle: N-byte buffer created" is on stderr); when it refused, the
// status must be a size refusal or an out-of-memory, either of which the layer records.
bool create_or_refuse_huge(const cl_env& env, size_t size) {
  cl_int err = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(env.context, CL_MEM_READ_WRITE, size, nullptr, &err);
  if (mem != nullptr) {
    CHECK(err == CL_SUCCESS);
    std::fprintf(stderr,
                 "layer_driver: lifecycle: %zu-byte buffer created (the device does not enforce "
                 "CL_DEVICE_MAX_MEM_ALLOC_SIZE)\n",
                 size);
    CHECK_CL(clReleaseMemObject(mem));
    return true;
  }
  std::fprintf(stderr, "layer_driver: lifecycle: %zu-byte buffer refused with %d\n", size, err);
  CHECK(err == CL_INVALID_BUFFER_SIZE || err == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
        err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY);
  return false;
}

// Number of `free` events in the trace so far (0 when not recording).
int frees_in_trace() {
  const char* path = std::getenv("CLPOOL_LAYER_TRACE");
  if (path == nullptr) return 0;
  std::ifstream in(path);
  std::string line;
  int frees = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string f[5];
    for (std::string& s : f) fields >> s;
    if (f[4] == "free") ++frees;
  }
  return frees;
}

// Waits (up to 20 s) until the trace holds `n` frees: the callbacks that write them run on ICD
// threads, possibly after the call that caused them has returned.
void wait_for_frees(int n) {
  if (std::getenv("CLPOOL_LAYER_TRACE") == nullptr) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (frees_in_trace() < n) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "layer_driver: timed out waiting for %d frees (have %d)\n", n,
                   frees_in_trace());
      ++failures;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Enqueues a fill of `mem` that cannot start before `gate` completes, so the driver must keep
// `mem` alive past the program's clReleaseMemObject.
cl_event gated_fill(const cl_env& env, cl_mem mem, size_t size, cl_event gate) {
  const cl_uint pattern = 0xabcdef01u;
  cl_event done = nullptr;
  CHECK_CL(
      clEnqueueFillBuffer(env.queue, mem, &pattern, sizeof(pattern), 0, size, 1, &gate, &done));
  return done;
}

cl_event user_event(const cl_env& env) {
  cl_int err = CL_SUCCESS;
  cl_event e = clCreateUserEvent(env.context, &err);
  CHECK_CL(err);
  return e;
}

// Buffers, host buffers, sub-buffers, retain/release, a driver refusal.
void lifecycle() {
  cl_env env = open_first_device();
  cl_mem a = buffer(env, CL_MEM_READ_WRITE, 4096);  // alloc 4096 buffer 0x1
  CHECK_CL(clRetainMemObject(a));
  CHECK_CL(clReleaseMemObject(a));  // still one reference: no free
  cl_mem h = buffer(env, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, 8192);  // alloc host
  cl_buffer_region region{0, 1024};
  cl_int err = CL_SUCCESS;
  cl_mem s = clCreateSubBuffer(a, CL_MEM_READ_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  CHECK_CL(err);                    // alloc 1024 sub 0x4
  CHECK_CL(clReleaseMemObject(s));  // free sub
  CHECK_CL(clReleaseMemObject(a));  // free a
  CHECK_CL(clReleaseMemObject(h));  // free h
  cl_mem b = clCreateBufferWithProperties(env.context, nullptr, CL_MEM_WRITE_ONLY, 2048, nullptr,
                                          &err);  // alloc 2048 buffer 0x2
  CHECK_CL(err);
  CHECK_CL(clReleaseMemObject(b));  // free b
  // Far above any device's largest allocation. A device that enforces CL_DEVICE_MAX_MEM_ALLOC_SIZE
  // refuses it (CL_INVALID_BUFFER_SIZE, or an out-of-memory status), recorded as alloc_failed.
  // One that does not (NVIDIA's driver, which commits memory at first use) creates it: then it is
  // an ordinary alloc and free, and the driver says so on stderr for layer_test.
  const bool huge_created = create_or_refuse_huge(env, size_t{1} << 40);
  // Size 0 is an invalid argument, not out-of-memory: nothing is recorded.
  expect_buffer_refused(env, 0, CL_INVALID_BUFFER_SIZE);
  close_env(env);
  wait_for_frees(huge_created ? 5 : 4);
}

// A released buffer still used by a queued command is freed only after the command ran.
void deferred() {
  cl_env env = open_first_device();
  cl_event gate = user_event(env);
  const size_t size = 1 << 20;
  cl_mem a = buffer(env, CL_MEM_READ_WRITE, size);  // alloc a
  cl_event fill = gated_fill(env, a, size, gate);
  CHECK_CL(clReleaseMemObject(a));                  // the fill still holds a
  cl_mem b = buffer(env, CL_MEM_READ_WRITE, 4096);  // alloc b: must come before free a
  CHECK_CL(clSetUserEventStatus(gate, CL_COMPLETE));
  CHECK_CL(clWaitForEvents(1, &fill));
  CHECK_CL(clReleaseEvent(fill));
  CHECK_CL(clReleaseEvent(gate));
  wait_for_frees(1);                // free a
  CHECK_CL(clReleaseMemObject(b));  // free b
  close_env(env);
  wait_for_frees(2);
}

// The program's moments (FORMAT.md "Two moments of a free"): a release while a queued command
// still holds the buffer, a wait while it awaits the driver's free, and a retained buffer whose
// first release is not the program's last.
void release_wait() {
  cl_env env = open_first_device();
  cl_event gate = user_event(env);
  const size_t size = 1 << 20;
  cl_mem a = buffer(env, CL_MEM_READ_WRITE, size);  // alloc a
  cl_event fill = gated_fill(env, a, size, gate);
  CHECK_CL(clReleaseMemObject(a));  // release a: the fill still holds it
  cl_event done = user_event(env);
  CHECK_CL(clSetUserEventStatus(done, CL_COMPLETE));
  CHECK_CL(clWaitForEvents(1, &done));              // wait: a awaits its free
  cl_mem b = buffer(env, CL_MEM_READ_WRITE, 4096);  // alloc b
  CHECK_CL(clRetainMemObject(b));
  CHECK_CL(clReleaseMemObject(b));  // the program still holds b: no release
  CHECK_CL(clReleaseMemObject(
      b));  // its last reference: free b (during the call, where nothing uses it)
  wait_for_frees(1);
  CHECK_CL(clSetUserEventStatus(gate, CL_COMPLETE));
  wait_for_frees(2);  // free a, once the fill ran
  CHECK_CL(clReleaseEvent(fill));
  CHECK_CL(clReleaseEvent(done));
  CHECK_CL(clReleaseEvent(gate));
  close_env(env);
}

// A buffer the program releases while a sub-buffer of it still reaches its memory: the program's
// release of it is the sub-buffer's.
void sub_release() {
  cl_env env = open_first_device();
  cl_mem a = buffer(env, CL_MEM_READ_WRITE, 1 << 20);  // alloc a
  cl_buffer_region region{0, 4096};
  cl_int err = CL_SUCCESS;
  cl_mem s = clCreateSubBuffer(a, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  CHECK_CL(err);                    // alloc s
  CHECK_CL(clReleaseMemObject(a));  // s still reaches a: no release of a yet
  CHECK_CL(clReleaseMemObject(s));  // s goes (release or free), then a's release, then a's free
  wait_for_frees(2);
  close_env(env);
}

// What the user's clEnqueueSVMFree callback saw.
struct svm_callback_seen {
  int calls = 0;
  cl_context context = nullptr;
};

void CL_CALLBACK user_svm_free(cl_command_queue, cl_uint n, void** pointers, void* user_data) {
  auto* seen = static_cast<svm_callback_seen*>(user_data);
  ++seen->calls;
  // The user's callback is responsible for freeing (OpenCL spec); through the layer this is a
  // clSVMFree of a pointer the layer already recorded as freed, which it must not record twice.
  for (cl_uint i = 0; i < n; ++i) clSVMFree(seen->context, pointers[i]);
}

void svm() {
  cl_env env = open_first_device();
  void* p1 = clSVMAlloc(env.context, CL_MEM_READ_WRITE, 1 << 20, 0);  // alloc p1
  CHECK(p1 != nullptr);
  clSVMFree(env.context, p1);                                       // free p1
  void* p2 = clSVMAlloc(env.context, CL_MEM_READ_WRITE, 65536, 0);  // alloc p2
  CHECK(p2 != nullptr);
  cl_event gate = user_event(env);
  cl_event freed = nullptr;
  CHECK_CL(clEnqueueSVMFree(env.queue, 1, &p2, nullptr, nullptr, 1, &gate, &freed));
  void* p3 = clSVMAlloc(env.context, CL_MEM_READ_WRITE, 4096, 0);  // alloc p3 before free p2
  CHECK(p3 != nullptr);
  CHECK_CL(clSetUserEventStatus(gate, CL_COMPLETE));
  CHECK_CL(clWaitForEvents(1, &freed));  // free p2 on queue 1
  CHECK_CL(clReleaseEvent(freed));
  CHECK_CL(clReleaseEvent(gate));
  wait_for_frees(2);
  void* p4 = clSVMAlloc(env.context, CL_MEM_READ_WRITE, 8192, 0);  // alloc p4
  CHECK(p4 != nullptr);
  svm_callback_seen seen;
  seen.context = env.context;
  CHECK_CL(clEnqueueSVMFree(env.queue, 1, &p4, user_svm_free, &seen, 0, nullptr, nullptr));
  CHECK_CL(clFinish(env.queue));  // free p4 on queue 1
  CHECK(seen.calls == 1);
  wait_for_frees(3);
  clSVMFree(env.context, p3);  // free p3
  close_env(env);
  wait_for_frees(4);
}

// Run with CLPOOL_LAYER_BUDGET=1MiB.
void budget() {
  cl_env env = open_first_device();
  const size_t half = 512 << 10;
  // The device reports the budget as its size, and no larger single allocation.
  cl_ulong global = 0, max_alloc = 0;
  CHECK_CL(
      clGetDeviceInfo(env.device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(global), &global, nullptr));
  CHECK_CL(clGetDeviceInfo(env.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(max_alloc), &max_alloc,
                           nullptr));
  CHECK(global == 2 * half);
  CHECK(max_alloc <= 2 * half);
  cl_mem a = buffer(env, CL_MEM_READ_WRITE, half);                // alloc a
  void* s = clSVMAlloc(env.context, CL_MEM_READ_WRITE, half, 0);  // alloc s (budget full)
  CHECK(s != nullptr);
  expect_buffer_refused(env, 1, CL_MEM_OBJECT_ALLOCATION_FAILURE);     // alloc_failed 1 buffer
  CHECK(clSVMAlloc(env.context, CL_MEM_READ_WRITE, 1, 0) == nullptr);  // alloc_failed 1 svm
  cl_mem h = buffer(env, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, 4 << 20);  // host: not counted
  // a is released but still used by a queued fill: its bytes are not credited yet.
  cl_event gate = user_event(env);
  cl_event fill = gated_fill(env, a, half, gate);
  CHECK_CL(clReleaseMemObject(a));
  expect_buffer_refused(env, half, CL_MEM_OBJECT_ALLOCATION_FAILURE);  // alloc_failed half
  CHECK_CL(clSetUserEventStatus(gate, CL_COMPLETE));
  CHECK_CL(clWaitForEvents(1, &fill));
  CHECK_CL(clReleaseEvent(fill));
  CHECK_CL(clReleaseEvent(gate));
  wait_for_frees(1);                                // free a
  cl_mem c = buffer(env, CL_MEM_READ_WRITE, half);  // fits again: alloc c
  CHECK_CL(clReleaseMemObject(c));                  // free c
  CHECK_CL(clReleaseMemObject(h));                  // free h
  clSVMFree(env.context, s);                        // free s
  close_env(env);
  wait_for_frees(4);
}

// Run with CLPOOL_LAYER_FAIL_NTH=2.
void fail_nth() {
  cl_env env = open_first_device();
  cl_mem a = buffer(env, CL_MEM_READ_WRITE, 100);                     // alloc
  expect_buffer_refused(env, 200, CL_MEM_OBJECT_ALLOCATION_FAILURE);  // alloc_failed 200
  cl_mem c = buffer(env, CL_MEM_READ_WRITE, 300);                     // alloc
  CHECK_CL(clReleaseMemObject(a));
  CHECK_CL(clReleaseMemObject(c));
  close_env(env);
  wait_for_frees(2);
}

// Only lists platforms: used to check that bad settings make the program fail.
void platforms() {
  cl_env env = open_first_device();
  char name[256] = {};
  CHECK_CL(clGetPlatformInfo(env.platform, CL_PLATFORM_NAME, sizeof(name) - 1, name, nullptr));
  std::fprintf(stderr, "layer_driver: platform: %s\n", name);
  // Whether a buffer's destructor callbacks have run when clReleaseMemObject returns (POCL,
  // mockcl) or run later on a driver thread (NVIDIA's driver): OpenCL promises only that they run
  // once the object is deleted. The layer records a free in such a callback, so its order
  // against the program's next calls is the driver's.
  static std::atomic<bool> called{false};
  cl_mem probe = buffer(env, CL_MEM_READ_WRITE, 64);
  CHECK_CL(clSetMemObjectDestructorCallback(
      probe, [](cl_mem, void*) { called.store(true); }, nullptr));
  CHECK_CL(clReleaseMemObject(probe));
  std::fprintf(stderr, "layer_driver: destructor callbacks: %s\n",
               called.load() ? "synchronous" : "deferred");
  close_env(env);
}

// Several threads create and release buffers and SVM blocks at once; the trace must stay valid.
// clSVMAlloc may return NULL for any reason (the spec promises nothing more), and NVIDIA's does so
// now and then when threads allocate at once: a NULL is the driver's answer, which the layer
// passes on and records as alloc_failed, not an error of the program or the layer. The scenario
// prints how many it got, so the test can check that each was recorded.
constexpr int churn_threads = 4;
constexpr int churn_per_thread = 200;

void threads() {
  cl_env env = open_first_device();
  std::vector<std::thread> workers;
  std::atomic<int> svm_refused{0};
  for (int t = 0; t < churn_threads; ++t) {
    workers.emplace_back([&env, &svm_refused, t] {
      for (int i = 0; i < churn_per_thread; ++i) {
        cl_mem mem = buffer(env, CL_MEM_READ_WRITE, 4096 * (t + 1));
        void* p = clSVMAlloc(env.context, CL_MEM_READ_WRITE, 256, 0);
        if (p != nullptr) {
          clSVMFree(env.context, p);
        } else {
          ++svm_refused;
        }
        CHECK_CL(clReleaseMemObject(mem));
      }
    });
  }
  for (std::thread& w : workers) w.join();
  close_env(env);
  std::printf("threads: %d SVM allocations refused by the driver\n", svm_refused.load());
  wait_for_frees(2 * churn_threads * churn_per_thread - svm_refused.load());
}

// Run with CLPOOL_LAYER_BUDGET=8MiB and CLPOOL_LAYER_PROFILE=nvidia: 8 MiB free less 2.625 MiB of
// headroom holds two 2 MiB pages. Creation always succeeds; the first use that does not fit
// fails with CL_MEM_OBJECT_ALLOCATION_FAILURE, whatever the use (write, kernel launch), and the
// same use succeeds once memory is released, as on an NVIDIA GPU with 8 MiB free.
void first_use() {
  cl_env env = open_first_device();
  const size_t two = 2 << 20;
  cl_mem a = buffer(env, CL_MEM_READ_WRITE, two);
  cl_mem b = buffer(env, CL_MEM_READ_WRITE, two);
  cl_mem c = buffer(env, CL_MEM_READ_WRITE, two);  // creation does not charge
  const int pattern = 7;
  CHECK_CL(
      clEnqueueFillBuffer(env.queue, a, &pattern, sizeof pattern, 0, two, 0, nullptr, nullptr));
  CHECK_CL(
      clEnqueueFillBuffer(env.queue, b, &pattern, sizeof pattern, 0, two, 0, nullptr, nullptr));
  std::vector<char> host(two, 1);
  CHECK(clEnqueueWriteBuffer(env.queue, c, CL_TRUE, 0, two, host.data(), 0, nullptr, nullptr) ==
        CL_MEM_OBJECT_ALLOCATION_FAILURE);
  // A kernel launch with c as an argument is a first use too.
  const char* source = "kernel void touch(global int* p) { p[get_global_id(0)] = 1; }";
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(env.context, 1, &source, nullptr, &err);
  CHECK_CL(err);
  CHECK_CL(clBuildProgram(program, 1, &env.device, nullptr, nullptr, nullptr));
  cl_kernel kernel = clCreateKernel(program, "touch", &err);
  CHECK_CL(err);
  CHECK_CL(clSetKernelArg(kernel, 0, sizeof c, &c));
  const size_t global = 16;
  CHECK(clEnqueueNDRangeKernel(env.queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr,
                               nullptr) == CL_MEM_OBJECT_ALLOCATION_FAILURE);
  CHECK_CL(clFinish(env.queue));
  CHECK_CL(clReleaseMemObject(a));  // its page goes back once the driver destroys it
  wait_for_frees(1);
  CHECK_CL(
      clEnqueueNDRangeKernel(env.queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
  CHECK_CL(clFinish(env.queue));
  CHECK_CL(clReleaseKernel(kernel));
  CHECK_CL(clReleaseProgram(program));
  CHECK_CL(clReleaseMemObject(b));
  CHECK_CL(clReleaseMemObject(c));
  close_env(env);
  wait_for_frees(3);
}

// Run like first_use (8 MiB, nvidia: two 2 MiB pages). The rect transfers are first uses too: the
// refusals come from the layer before the driver sees the call; the copy that fits is the driver's.
void first_use_rect() {
  cl_env env = open_first_device();
  const size_t two = 2 << 20;
  cl_mem a = buffer(env, CL_MEM_READ_WRITE, two);
  cl_mem b = buffer(env, CL_MEM_READ_WRITE, two);
  cl_mem c = buffer(env, CL_MEM_READ_WRITE, two);
  const int pattern = 7;
  CHECK_CL(
      clEnqueueFillBuffer(env.queue, a, &pattern, sizeof pattern, 0, two, 0, nullptr, nullptr));
  CHECK_CL(
      clEnqueueFillBuffer(env.queue, b, &pattern, sizeof pattern, 0, two, 0, nullptr, nullptr));
  std::vector<char> host(4096, 1);
  const size_t origin[3] = {0, 0, 0};
  const size_t region[3] = {64, 4, 1};
  CHECK(clEnqueueWriteBufferRect(env.queue, c, CL_TRUE, origin, origin, region, 0, 0, 0, 0,
                                 host.data(), 0, nullptr,
                                 nullptr) == CL_MEM_OBJECT_ALLOCATION_FAILURE);
  CHECK(clEnqueueReadBufferRect(env.queue, c, CL_TRUE, origin, origin, region, 0, 0, 0, 0,
                                host.data(), 0, nullptr,
                                nullptr) == CL_MEM_OBJECT_ALLOCATION_FAILURE);
  CHECK(clEnqueueCopyBufferRect(env.queue, a, c, origin, origin, region, 0, 0, 0, 0, 0, nullptr,
                                nullptr) == CL_MEM_OBJECT_ALLOCATION_FAILURE);
  CHECK_CL(clFinish(env.queue));
  CHECK_CL(clReleaseMemObject(a));
  wait_for_frees(1);
  const cl_int fits = clEnqueueCopyBufferRect(env.queue, b, c, origin, origin, region, 0, 0, 0, 0,
                                              0, nullptr, nullptr);
  std::printf("first_use_rect: copy that fits: %d\n", fits);
  CHECK_CL(fits);
  CHECK_CL(clFinish(env.queue));
  CHECK_CL(clReleaseMemObject(b));
  CHECK_CL(clReleaseMemObject(c));
  close_env(env);
  wait_for_frees(3);
}

// True when the layer's profile (CLPOOL_LAYER_PROFILE; none is `exact`) enforces
// CL_DEVICE_MAX_MEM_ALLOC_SIZE: every built-in profile but nvidia's.
bool profile_enforces_max_alloc() {
  const char* profile = std::getenv("CLPOOL_LAYER_PROFILE");
  return profile == nullptr || std::string(profile) != "nvidia";
}

// Run with CLPOOL_LAYER_BUDGET=8MiB, and CLPOOL_LAYER_PROFILE unset, pocl or nvidia. The layer
// reports the budget as CL_DEVICE_MAX_MEM_ALLOC_SIZE. A buffer above it is an invalid size where
// the profile enforces that limit (CL_INVALID_BUFFER_SIZE, as OpenCL requires); on nvidia's it is
// created, and its first use finds no room (CL_MEM_OBJECT_ALLOCATION_FAILURE).
void max_alloc() {
  cl_env env = open_first_device();
  const size_t limit = 8 << 20, big = 16 << 20;
  cl_ulong reported = 0;
  CHECK_CL(clGetDeviceInfo(env.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(reported), &reported,
                           nullptr));
  CHECK(reported == limit);
  int frees = 0;
  if (profile_enforces_max_alloc()) {
    expect_buffer_refused(env, big, CL_INVALID_BUFFER_SIZE);  // alloc_failed big (-61)
  } else {
    cl_mem m = buffer(env, CL_MEM_READ_WRITE, big);  // alloc big
    const int pattern = 1;
    const cl_int status =
        clEnqueueFillBuffer(env.queue, m, &pattern, sizeof pattern, 0, big, 0, nullptr, nullptr);
    if (status != CL_MEM_OBJECT_ALLOCATION_FAILURE)
      std::fprintf(stderr, "layer_driver: first use of the big buffer gave %d\n", status);
    CHECK(status == CL_MEM_OBJECT_ALLOCATION_FAILURE);
    CHECK_CL(clReleaseMemObject(m));  // free big
    wait_for_frees(++frees);
  }
  // Up to the limit is no size refusal: the budget decides (it fits).
  cl_mem m = buffer(env, CL_MEM_READ_WRITE, 1 << 20);  // alloc 1 MiB
  CHECK_CL(clReleaseMemObject(m));                     // free 1 MiB
  close_env(env);
  wait_for_frees(++frees);
}

// clSVMAlloc requests with invalid arguments (OpenCL 3.0, clSVMAlloc): never recorded as
// out-of-memory. With CLPOOL_LAYER_BUDGET=8MiB the layer answers NULL itself (16 MiB is above the
// budget the layer reports as the limit), with CLPOOL_LAYER_PROFILE unset or nvidia: nvidia's does
// not enforce the limit, so there the block is an out-of-memory, recorded as alloc_failed.
// Without a budget the driver answers each (the block above the limit is 1 TiB, above its
// CL_DEVICE_MAX_MEM_ALLOC_SIZE): one it allocates anyway (POCL takes an unknown flag bit) is freed.
void svm_invalid() {
  cl_env env = open_first_device();
  const bool budget = std::getenv("CLPOOL_LAYER_BUDGET") != nullptr;
  const size_t big = budget ? size_t{16} << 20 : size_t{1} << 40;
  const auto refused = [&](cl_svm_mem_flags flags, size_t size, cl_uint alignment) {
    void* p = clSVMAlloc(env.context, flags, size, alignment);
    CHECK(!budget || p == nullptr);
    if (p != nullptr) clSVMFree(env.context, p);
  };
  refused(CL_MEM_READ_WRITE, 0, 0);  // size 0
  refused(CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 4096, 0);
  refused(CL_MEM_READ_WRITE | CL_MEM_SVM_ATOMICS, 4096, 0);
  refused(CL_MEM_READ_WRITE | (cl_svm_mem_flags{1} << 40), 4096, 0);  // an unknown flag
  refused(CL_MEM_READ_WRITE, 4096, 3);                                // alignment 3
  refused(CL_MEM_READ_WRITE, big, 0);
  void* s = clSVMAlloc(env.context, CL_MEM_READ_WRITE, 1 << 20, 0);  // alloc 1 MiB svm
  CHECK(s != nullptr);
  clSVMFree(env.context, s);  // free
  close_env(env);
}

// Run with an 8 MiB budget and the nvidia profile (buffers at first use, SVM blocks at creation):
// the third 2 MiB block does not fit and clSVMAlloc itself returns NULL; the blocks it did give
// are used freely, and one freed makes room for another.
void svm_at_creation() {
  cl_env env = open_first_device();
  const size_t two = 2 << 20;
  char* s1 = static_cast<char*>(clSVMAlloc(env.context, CL_MEM_READ_WRITE, two, 0));
  char* s2 = static_cast<char*>(clSVMAlloc(env.context, CL_MEM_READ_WRITE, two, 0));
  CHECK(s1 != nullptr && s2 != nullptr);
  CHECK(clSVMAlloc(env.context, CL_MEM_READ_WRITE, two, 0) == nullptr);
  const int pattern = 7;
  CHECK_CL(clEnqueueSVMMemFill(env.queue, s1, &pattern, sizeof pattern, two, 0, nullptr, nullptr));
  CHECK_CL(clEnqueueSVMMemcpy(env.queue, CL_TRUE, s2, s1, two, 0, nullptr, nullptr));
  clSVMFree(env.context, s1);
  char* s3 = static_cast<char*>(clSVMAlloc(env.context, CL_MEM_READ_WRITE, two, 0));
  CHECK(s3 != nullptr);
  clSVMFree(env.context, s2);
  clSVMFree(env.context, s3);
  close_env(env);
}

// Run like first_use, with a profile whose svm_oom_at is first_use. SVM blocks are charged by
// their first SVM command or kernel launch, also through a pointer into the block.
void first_use_svm() {
  cl_env env = open_first_device();
  const size_t two = 2 << 20;
  char* s1 = static_cast<char*>(clSVMAlloc(env.context, CL_MEM_READ_WRITE, two, 0));
  char* s2 = static_cast<char*>(clSVMAlloc(env.context, CL_MEM_READ_WRITE, two, 0));
  char* s3 = static_cast<char*>(clSVMAlloc(env.context, CL_MEM_READ_WRITE, two, 0));
  CHECK(s1 != nullptr && s2 != nullptr && s3 != nullptr);  // allocation does not charge
  const int pattern = 7;
  CHECK_CL(clEnqueueSVMMemFill(env.queue, s1, &pattern, sizeof pattern, two, 0, nullptr, nullptr));
  CHECK_CL(clEnqueueSVMMemcpy(env.queue, CL_TRUE, s2 + 4096, s1, 4096, 0, nullptr, nullptr));
  // The device is full: every first use of s3 fails, whatever the command or the offset.
  const int full = CL_MEM_OBJECT_ALLOCATION_FAILURE;
  CHECK(clEnqueueSVMMemcpy(env.queue, CL_TRUE, s3, s1, 4096, 0, nullptr, nullptr) == full);
  CHECK(clEnqueueSVMMemFill(env.queue, s3 + 8192, &pattern, sizeof pattern, 4096, 0, nullptr,
                            nullptr) == full);
  CHECK(clEnqueueSVMMap(env.queue, CL_TRUE, CL_MAP_WRITE, s3, 4096, 0, nullptr, nullptr) == full);
  const void* to_migrate[] = {s3};
  CHECK(clEnqueueSVMMigrateMem(env.queue, 1, to_migrate, nullptr, 0, 0, nullptr, nullptr) == full);
  const char* source = "kernel void touch(global int* p) { p[get_global_id(0)] = 1; }";
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(env.context, 1, &source, nullptr, &err);
  CHECK_CL(err);
  CHECK_CL(clBuildProgram(program, 1, &env.device, nullptr, nullptr, nullptr));
  cl_kernel kernel = clCreateKernel(program, "touch", &err);
  CHECK_CL(err);
  CHECK_CL(clSetKernelArgSVMPointer(kernel, 0, s3 + 64));
  const size_t global = 16;
  CHECK(clEnqueueNDRangeKernel(env.queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr,
                               nullptr) == full);
  CHECK_CL(clFinish(env.queue));
  clSVMFree(env.context, s1);  // its page goes back
  CHECK_CL(
      clEnqueueNDRangeKernel(env.queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
  CHECK_CL(clFinish(env.queue));
  CHECK_CL(clReleaseKernel(kernel));
  CHECK_CL(clReleaseProgram(program));
  clSVMFree(env.context, s2);
  clSVMFree(env.context, s3);
  close_env(env);
}

// Run like first_use. An enqueue the driver rejects for another reason used no memory: the charge
// it made is given back, so another buffer fits afterwards.
void first_use_rollback() {
  cl_env env = open_first_device();
  const size_t two = 2 << 20;
  cl_mem a = buffer(env, CL_MEM_READ_WRITE, two);
  cl_mem b = buffer(env, CL_MEM_READ_WRITE, two);
  cl_mem c = buffer(env, CL_MEM_READ_WRITE, two);
  const int pattern = 7;
  CHECK_CL(
      clEnqueueFillBuffer(env.queue, a, &pattern, sizeof pattern, 0, two, 0, nullptr, nullptr));
  // b fits, but the write runs past its end: the driver refuses (CL_INVALID_VALUE).
  std::vector<char> host(2 * two, 1);
  const cl_int invalid =
      clEnqueueWriteBuffer(env.queue, b, CL_TRUE, 0, 2 * two, host.data(), 0, nullptr, nullptr);
  CHECK(invalid == CL_INVALID_VALUE);
  // So b holds nothing, and c takes the last page.
  CHECK_CL(
      clEnqueueFillBuffer(env.queue, c, &pattern, sizeof pattern, 0, two, 0, nullptr, nullptr));
  CHECK(clEnqueueWriteBuffer(env.queue, b, CL_TRUE, 0, two, host.data(), 0, nullptr, nullptr) ==
        CL_MEM_OBJECT_ALLOCATION_FAILURE);
  CHECK_CL(clFinish(env.queue));
  CHECK_CL(clReleaseMemObject(a));
  CHECK_CL(clReleaseMemObject(b));
  CHECK_CL(clReleaseMemObject(c));
  close_env(env);
  wait_for_frees(3);
}

// Times N clCreateBuffer + clReleaseMemObject pairs (N from CHURN_PAIRS, default 100000) and
// prints the cost per pair on stdout: a measurement of the layer's overhead, not a test.
void churn() {
  cl_env env = open_first_device();
  const char* n_text = std::getenv("CHURN_PAIRS");
  const long n = n_text != nullptr ? std::atol(n_text) : 100000;
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) CHECK_CL(clReleaseMemObject(buffer(env, CL_MEM_READ_WRITE, 4096)));
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::printf("churn: %ld create+release pairs, %.0f ns per pair\n", n, ns / n);
  close_env(env);
}

// --- Endings: the trace must hold every event recorded before the program ended, however it
// ended. Each records ending_pairs create+release pairs (a trace of more than one 1 MiB chunk of
// the layer's memory-mapped file), waits until the last free is in the trace, prints "recorded",
// and then ends as its name says.
constexpr int ending_pairs = 15000;

void record_pairs(const cl_env& env) {
  for (int i = 0; i < ending_pairs; ++i) {
    CHECK_CL(clReleaseMemObject(buffer(env, CL_MEM_READ_WRITE, 4096 + i)));
  }
  wait_for_frees(ending_pairs);
  std::printf("recorded\n");
  std::fflush(stdout);
}

// A buffer that a gated fill keeps alive past the program's release: its free is recorded only
// when the gate opens, from a static object's destructor, after main returned. The destructor
// callback may then run on a driver thread. static_holder was constructed before main, so it is
// destroyed after the layer's atexit handler ran (registered at the first OpenCL call): the free
// comes after the layer stopped writing through its memory map. mockcl tears itself down at exit
// before that point, so over mockcl only a local static (constructed after the first OpenCL
// call, destroyed before the layer's handler and mockcl's teardown) can still call it.
struct freed_during_static_destruction {
  cl_env env;
  cl_event gate = nullptr;
  cl_event fill = nullptr;

  void arm() {
    env = open_first_device();
    gate = user_event(env);
    const size_t size = 12345 * 4;
    cl_mem mem = buffer(env, CL_MEM_READ_WRITE, size);
    fill = gated_fill(env, mem, size, gate);
    CHECK_CL(clReleaseMemObject(mem));  // still held by the fill
  }

  ~freed_during_static_destruction() {
    if (gate == nullptr) return;
    CHECK_CL(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK_CL(clWaitForEvents(1, &fill));
    wait_for_frees(ending_pairs + 1);
    std::printf("freed during static destruction\n");
    std::fflush(stdout);
  }
};
freed_during_static_destruction static_holder;

// SCENARIO is end_<how>: return, exit_thread, _exit, abort, segv, sigkill, static_destruction,
// local_static_destruction, wait (prints "recorded" once the pairs are in the trace, then sleeps
// for a minute: killed by whoever runs it).
int end(const std::string& how) {
  cl_env env = open_first_device();
  if (how == "exit_thread") {
    // exit() on another thread while the main thread waits: the atexit handlers run there.
    std::thread worker([&env] {
      record_pairs(env);
      std::exit(failures == 0 ? 3 : 1);
    });
    worker.join();
    return 1;  // not reached
  }
  if (how == "static_destruction") static_holder.arm();
  if (how == "local_static_destruction") {
    static freed_during_static_destruction local_holder;
    local_holder.arm();
  }
  record_pairs(env);
  if (how == "return" || how.find("static_destruction") != std::string::npos) {
    return failures == 0 ? 0 : 1;
  }
  if (how == "_exit") _exit(4);
  if (how == "abort") std::abort();
  if (how == "segv") {
    volatile int* volatile nowhere = nullptr;
    *nowhere = 1;  // a real fault, not a raised signal
  }
  if (how == "sigkill") raise(SIGKILL);
  if (how == "wait") {
    // Recorded, then waits to be killed: what a launcher killed mid-run leaves behind.
    std::printf("recorded\n");
    std::fflush(stdout);
    for (int i = 0; i < 600; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return 5;
  }
  std::fprintf(stderr, "layer_driver: unknown ending %s\n", how.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(
        stderr,
        "usage: layer_driver "
        "lifecycle|deferred|svm|budget|fail_nth|platforms|first_use|first_use_rect|"
        "first_use_svm|svm_at_creation|first_use_rollback|threads|churn|max_alloc|svm_invalid|"
        "end_<how>\n");
    return 2;
  }
  const std::string scenario = argv[1];
  if (scenario == "lifecycle") {
    lifecycle();
  } else if (scenario == "deferred") {
    deferred();
  } else if (scenario == "sub_release") {
    sub_release();
  } else if (scenario == "release_wait") {
    release_wait();
  } else if (scenario == "svm") {
    svm();
  } else if (scenario == "budget") {
    budget();
  } else if (scenario == "fail_nth") {
    fail_nth();
  } else if (scenario == "platforms") {
    platforms();
  } else if (scenario == "first_use") {
    first_use();
  } else if (scenario == "first_use_rect") {
    first_use_rect();
  } else if (scenario == "first_use_svm") {
    first_use_svm();
  } else if (scenario == "svm_at_creation") {
    svm_at_creation();
  } else if (scenario == "first_use_rollback") {
    first_use_rollback();
  } else if (scenario == "threads") {
    threads();
  } else if (scenario == "churn") {
    churn();
  } else if (scenario == "max_alloc") {
    max_alloc();
  } else if (scenario == "svm_invalid") {
    svm_invalid();
  } else if (scenario.rfind("end_", 0) == 0) {
    return end(scenario.substr(4));
  } else {
    std::fprintf(stderr, "layer_driver: unknown scenario %s\n", scenario.c_str());
    return 2;
  }
  return failures == 0 ? 0 : 1;
}
