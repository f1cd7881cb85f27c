// The probe's device_port on a real OpenCL device: one context and one in-order queue; a buffer
// is "allocated" when clCreateBuffer succeeded, its first use (clEnqueueMigrateMemObjects,
// content undefined: no data moves) succeeded, and that command's event ended without error
// after clFinish. Whichever of the three says no is where the device reports running out.
#ifndef CLPOOL_TOOLS_PROBE_CL_PORT_H_
#define CLPOOL_TOOLS_PROBE_CL_PORT_H_

#include <CL/cl.h>

#include <optional>
#include <string>
#include <vector>

#include "tools/probe/measure.h"

namespace clpool::probe {

// What each first-use call (migrate, write, fill, kernel) said for a buffer the device had no room
// for (evidence of where out-of-memory appears); filled at the first refusal at first use or
// execution.
struct first_use_call {
  std::string call;
  cl_int enqueue_status = 0;
  cl_int event_status = 0;  // after clFinish
};

class cl_port final : public device_port {
 public:
  // Throws probe_failure when no context or queue can be made on `device`.
  explicit cl_port(cl_device_id device);
  ~cl_port() override;  // releases every buffer still held, the queue and the context
  cl_port(const cl_port&) = delete;
  cl_port& operator=(const cl_port&) = delete;

  attempt allocate(std::uint64_t bytes) override;
  void release(std::size_t id) override;
  attempt create_untouched(std::uint64_t bytes) override;
  // clSVMAlloc, then clEnqueueSVMMemFill over the block and clFinish, then clSVMFree; nothing on
  // a device without coarse-grain buffer SVM.
  std::optional<attempt> svm_once(std::uint64_t bytes) override;

  const std::vector<first_use_call>& first_use_calls() const { return first_use_; }

 private:
  enum class use { migrate, write, fill, kernel };
  // Enqueues `how` on `m`, waits, and returns {enqueue status, event status}.
  std::pair<cl_int, cl_int> first_use(cl_mem m, use how);
  void record_first_use_calls(std::uint64_t bytes);
  // A one-work-item kernel writing the buffer's first byte; null (with the status in
  // kernel_status_) where the device cannot build it.
  cl_kernel touch_kernel();

  cl_context ctx_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::vector<cl_mem> mems_;  // by id; null once released
  std::vector<first_use_call> first_use_;
  bool recorded_ = false;
  cl_program program_ = nullptr;
  cl_kernel kernel_ = nullptr;
  cl_int kernel_status_ = CL_SUCCESS;
  bool svm_ = false;  // the device has coarse-grain buffer SVM
};

}  // namespace clpool::probe

#endif  // CLPOOL_TOOLS_PROBE_CL_PORT_H_
