// A fresh in-process mockcl for one fuzzer input: the runtime reset and configured (devices,
// schedule), a context on device 0, in-order queues (and optionally one out-of-order queue), and
// a program with one kernel `use` taking one argument (a buffer or an SVM pointer). The fuzzer's
// own calls go through the in-process dispatch table `d`; the pool's (clCreateBuffer, ...) reach
// the same runtime through the handles' dispatch pointers. Destroying the world releases
// everything it made.
#ifndef CLPOOL_FUZZ_MOCKCL_WORLD_H_
#define CLPOOL_FUZZ_MOCKCL_WORLD_H_

#include <CL/cl.h>
#include <CL/cl_icd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "mockcl/config/config.h"
#include "mockcl/runtime/control.h"

namespace clpool::fuzz {

// CLPOOL_FUZZ_TRACE=1 prints each operation as it runs.
inline bool trace_mode() {
  static const bool trace = [] {
    const char* v = std::getenv("CLPOOL_FUZZ_TRACE");
    return v != nullptr && v[0] != '\0' && v[0] != '0';
  }();
  return trace;
}

struct mockcl_world {
  const cl_icd_dispatch* d = mockcl::dispatch();
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  std::vector<cl_command_queue> queues;  // in-order
  cl_command_queue out_of_order = nullptr;
  cl_program program = nullptr;
  cl_kernel kernel = nullptr;

  // `fail` reports a setup failure (it must not return).
  mockcl_world(const std::function<void(const std::string&)>& fail,
               const std::vector<mockcl::device_config>& devices, int in_order_queues,
               const std::string& schedule, bool with_out_of_order_queue = false) {
    mockcl::controller& ctl = mockcl::control();
    ctl.reset();
    std::string err = ctl.configure_devices(devices);
    if (err.empty()) err = ctl.configure_schedule(schedule);
    // No backing device: kernels stay timed no-ops, SVM arguments work (mockcl/README.md).
    if (err.empty()) err = ctl.configure_backing("none");
    if (!err.empty()) fail("mockcl configuration refused: " + err);
    auto check = [&](cl_int s, const char* call) {
      if (s != CL_SUCCESS) fail(std::string(call) + " failed: " + std::to_string(s));
    };
    cl_platform_id platform = mockcl::platform();
    check(d->clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
    cl_int s = CL_SUCCESS;
    context = d->clCreateContext(nullptr, 1, &device, nullptr, nullptr, &s);
    check(s, "clCreateContext");
    for (int i = 0; i < in_order_queues; ++i) {
      queues.push_back(d->clCreateCommandQueueWithProperties(context, device, nullptr, &s));
      check(s, "clCreateCommandQueueWithProperties");
    }
    if (with_out_of_order_queue) {
      const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES,
                                           CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
      out_of_order = d->clCreateCommandQueueWithProperties(context, device, props, &s);
      check(s, "clCreateCommandQueueWithProperties(out-of-order)");
    }
    const char* source = "__kernel void use(__global uchar* a) { a[0] = 1; }";
    program = d->clCreateProgramWithSource(context, 1, &source, nullptr, &s);
    check(s, "clCreateProgramWithSource");
    check(d->clBuildProgram(program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
    kernel = d->clCreateKernel(program, "use", &s);
    check(s, "clCreateKernel");
  }
  mockcl_world(const mockcl_world&) = delete;
  mockcl_world& operator=(const mockcl_world&) = delete;

  ~mockcl_world() {
    if (kernel != nullptr) d->clReleaseKernel(kernel);
    if (program != nullptr) d->clReleaseProgram(program);
    for (cl_command_queue q : queues) {
      d->clFinish(q);
      d->clReleaseCommandQueue(q);
    }
    if (out_of_order != nullptr) {
      d->clFinish(out_of_order);
      d->clReleaseCommandQueue(out_of_order);
    }
    if (context != nullptr) d->clReleaseContext(context);
  }

  cl_command_queue queue(int i) const { return queues.at(static_cast<std::size_t>(i)); }
};

}  // namespace clpool::fuzz

#endif  // CLPOOL_FUZZ_MOCKCL_WORLD_H_
