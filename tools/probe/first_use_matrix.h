// Where a device reports running out of memory, call by call: each kind of first use (read, write,
// fill, copy from and to, the rect forms, map, migrate, kernel launches with a buffer or an SVM
// argument, SVM fill, copy, map and migrate) and creation itself, on a fresh buffer larger than
// the device has free. Each case also runs on a buffer that fits (the control: the call works
// when memory is not the question) and ends by checking that the context is still usable.
//
// The same cases on a real GPU, on mockcl under a profile and through the layer's budget say
// whether the two models fail the same call with the same status as the driver (issue 41's
// first item; tools/probe/README.md, "Which call fails").
#ifndef CLPOOL_TOOLS_PROBE_FIRST_USE_MATRIX_H_
#define CLPOOL_TOOLS_PROBE_FIRST_USE_MATRIX_H_

#include <CL/cl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace clpool::probe {

// One case's outcome. Statuses are OpenCL's (0 = CL_SUCCESS); `not_run` where a step did not
// happen (creation failed, so nothing was enqueued; the enqueue failed, so there is no event).
// (Not 1: an event still running would read CL_RUNNING, 1.)
inline constexpr cl_int not_run = 1000;

struct first_use_case {
  std::string name;   // "read", "svm_kernel", ...
  std::string call;   // the call under test, e.g. "clEnqueueReadBuffer"
  cl_int create = 0;  // clCreateBuffer's or clSVMAlloc's status (CL_OUT_OF_RESOURCES for NULL)
  cl_int enqueue = not_run;   // the call's own status
  cl_int finish = not_run;    // clFinish after it
  cl_int event = not_run;     // the command's event status after clFinish (negative: failed)
  bool control = false;       // the same call on a buffer that fits succeeded throughout
  bool usable_after = false;  // a 1 MiB buffer could be created and migrated afterwards
  std::string note;           // why a case could not run (no SVM, no compiler), else empty
};

struct first_use_sizes {
  std::uint64_t big = 0;    // more than the device has free
  std::uint64_t small = 0;  // fits: the control's size, and the partner buffer of copies
};

// Runs every case on `device` (a context and an in-order queue of its own). Throws
// std::runtime_error when no context, queue or partner buffer can be made.
std::vector<first_use_case> run_first_use_matrix(cl_device_id device, const first_use_sizes& s);

// Which call failed, in a word: "create", "enqueue", "finish", "event" or "none".
std::string failing_step(const first_use_case& c);

// Tab-separated, one line per case after a header line: name, call, create, enqueue, finish,
// event, failing step, control (ok or FAILED), usable_after (yes or NO), note. Statuses as
// numbers; "-" for not_run.
std::string format_first_use_tsv(const std::vector<first_use_case>& cases);

}  // namespace clpool::probe

#endif  // CLPOOL_TOOLS_PROBE_FIRST_USE_MATRIX_H_
