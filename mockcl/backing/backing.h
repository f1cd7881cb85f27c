// The backing device (MOCKCL_BACKING=pocl): POCL, loaded by mockcl itself with dlopen, runs the
// kernels and holds the buffers' bytes, while mockcl stays the platform the application sees and
// keeps its own accounting, scheduler, events, faults and logs. Internal to //mockcl.
//
// Every POCL object (like every ICD object) starts with its dispatch table; mockcl calls POCL only
// through it (`pocl->d->clX(...)`), so POCL's exported symbols never meet the loader's. Each mock
// object that needs one gets its POCL twin lazily (objects.h: `pocl_*` fields): a POCL context per
// mock context, a queue per mock queue, a buffer per mock buffer at its first use (zero-filled),
// a program per program, a kernel per kernel. POCL runs a command when mockcl's scheduler executes
// it (mock_runtime::execute), blocking until POCL has finished, so mockcl's order is the order.
#ifndef MOCKCL_BACKING_BACKING_H_
#define MOCKCL_BACKING_BACKING_H_

#include <CL/cl_icd.h>
#include <time.h>

#include <cstdint>
#include <memory>
#include <string>

#include "mockcl/backing/compute_shape.h"
#include "mockcl/compiler/language.h"

namespace mockcl {

struct pocl_library {
  // Loads POCL's ICD. `icd`: a .icd file (its one line names the library), the library itself,
  // or "" for /etc/OpenCL/vendors/pocl.icd. Null, with `error` set, if it cannot.
  static std::unique_ptr<pocl_library> load(const std::string& icd, std::string& error);
  // What load() checks before it maps anything: the library `icd` names (its path or bare name),
  // or "" with `error` set if the .icd cannot be read, the path is no usable shared library or is
  // mockcl itself. A bare name is the system loader's to find, so only load() can refuse it.
  static std::string locate(const std::string& icd, std::string& error);
  const cl_icd_dispatch* d = nullptr;  // POCL's table, shared by all its objects.
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;  // POCL's first device; every mock device maps to it.
  // What mock devices report about OpenCL C in backing mode: the mock's set intersected with
  // POCL's device (language.h), read once at load.
  language_caps language;
  // What mock devices report about their compute resources in backing mode (compute_shape.h):
  // POCL's device's, read once at load.
  compute_shape shape;
  // POCL's device's CL_DEVICE_SVM_CAPABILITIES, read once at load: where it has fine-grain buffer
  // SVM, mock devices that have SVM report and allocate it too (api_svm.cc).
  cl_device_svm_capabilities svm_caps = 0;
};

// The clock POCL 3.1 stamps its events with (CLOCK_MONOTONIC_RAW, in ns), which backing mode's
// profiling information and host timers use, so that the mock's QUEUED and SUBMIT and POCL's START
// and END compare. A START or END outside the mock's own bracket of the command is not used
// (mock_runtime::execute), should another POCL use another clock.
inline uint64_t pocl_clock_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
}

// The table of any ICD object.
template <typename T>
const cl_icd_dispatch* table_of(T* h) {
  return *reinterpret_cast<const cl_icd_dispatch* const*>(h);
}

}  // namespace mockcl

#endif  // MOCKCL_BACKING_BACKING_H_
