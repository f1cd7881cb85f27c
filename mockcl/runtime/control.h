// mockcl's public C++ API: the in-process mock OpenCL runtime and its control interface.
//
// In-process tests call the mock through `dispatch()` (a cl_icd_dispatch whose slots are the
// mock's entry points) starting from `platform()`. The same runtime, built as
// //mockcl:libmockcl.so, is an ICD for the system loader; //mockcl:testing gives a Control
// for that instance with exactly the same behaviour (see testing.h).
#ifndef MOCKCL_RUNTIME_CONTROL_H_
#define MOCKCL_RUNTIME_CONTROL_H_

#include <CL/cl_icd.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mockcl/config/config.h"
#include "mockcl/runtime/snapshot.h"

namespace mockcl {

// The in-process mock's dispatch table: every slot filled (unimplemented ones return
// CL_INVALID_OPERATION). Valid for the process lifetime.
const cl_icd_dispatch* dispatch();

// The in-process mock's only platform (also what dispatch()->clGetPlatformIDs returns).
cl_platform_id platform();

// Configures the mock, reads its accounting, and resets it between tests. Every method that
// returns std::string returns "" on success, else a message saying what was wrong; the spec
// strings use the grammar of the environment variables (see README.md and config.h).
class controller {
 public:
  virtual ~controller() = default;
  // Replaces the device list (MOCKCL_DEVICES grammar). Refused while any context, queue,
  // buffer, event, program, kernel or SVM block is alive.
  virtual std::string configure_devices(std::string_view spec) = 0;
  // The same from structs.
  std::string configure_devices(const std::vector<device_config>& devices) {
    return configure_devices(format_devices(devices));
  }
  // Replaces the fault rules (MOCKCL_FAULTS grammar); "" removes them all. Nth-call and
  // exec counters start from zero at installation.
  virtual std::string configure_faults(std::string_view spec) = 0;
  // Adds one fault rule, keeping the others.
  virtual std::string add_fault(std::string_view rule) = 0;
  // Sets the scheduling mode, out-of-order seed and kernel duration (MOCKCL_SCHEDULE grammar).
  virtual std::string configure_schedule(std::string_view spec) = 0;
  // Sets the JSON-lines call log: a file path (appended), ":memory:" (kept for snapshot()),
  // or "" (off, the default).
  virtual std::string configure_call_log(std::string_view path) = 0;
  // Sets the backing device (MOCKCL_BACKING grammar: "pocl" or "none"). Refused while contexts
  // live. "pocl" loads POCL's ICD at once (MOCKCL_POCL_ICD, else /etc/OpenCL/vendors/pocl.icd).
  virtual std::string configure_backing(std::string_view mode) = 0;
  // Destroys every remaining object (stale handles then read as released), restores the
  // configuration read from the environment at start-up, and zeroes counters, peaks, the
  // command log, the call log kept in memory and the reports.
  virtual void reset() = 0;
  // The current accounting.
  virtual accounting_snapshot snapshot() = 0;
  // The stable id of a handle (context, queue, mem, event, program, kernel, device) or of an
  // SVM pointer (any address inside the block); the ids in command_record. 0 if unknown.
  virtual uint64_t object_id(const void* handle) = 0;
  // One device's memory, from its ledger (the device model): bytes committed (in the profile's
  // pages), their peak since the last reset, and the sum of the committed requests' sizes. All
  // zero for an index that names no device. Cheap: no snapshot is built.
  struct device_memory_use {
    uint64_t committed = 0, peak = 0, requested = 0;
  };
  virtual device_memory_use memory_use(int device) = 0;
};

// The control of the in-process runtime.
controller& control();

}  // namespace mockcl

#endif  // MOCKCL_RUNTIME_CONTROL_H_
