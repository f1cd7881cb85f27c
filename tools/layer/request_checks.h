// What the layer checks of a creation's arguments itself, against the limits it reports for the
// context's devices (with a budget, clGetDeviceInfo caps CL_DEVICE_MAX_MEM_ALLOC_SIZE at it), so
// that an invalid request is never counted as an out-of-memory nor charged to the budget.
#ifndef CLPOOL_TOOLS_LAYER_REQUEST_CHECKS_H_
#define CLPOOL_TOOLS_LAYER_REQUEST_CHECKS_H_

#include <CL/cl_icd.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "device_model/device_memory.h"

namespace clpool::layer {

// A device's CL_DEVICE_GLOBAL_MEM_SIZE or CL_DEVICE_MAX_MEM_ALLOC_SIZE as the layer reports it
// under a budget: the driver's answer, capped at the budget. The one rule for the layer's
// clGetDeviceInfo and for the checks below, so that a request is judged by the limit the program
// was told.
constexpr std::uint64_t reported_under_budget(std::uint64_t driver, std::uint64_t budget) {
  return std::min(driver, budget);
}

// CL_DEVICE_MAX_MEM_ALLOC_SIZE of the context's devices as the layer reports it (the driver's,
// capped at `cap`): the largest of them (`largest`: clCreateBuffer's rule, invalid above it for
// every device) or the smallest (clSVMAlloc's, invalid above it for any). Nothing when the
// driver does not answer (the layer then leaves the question to the driver).
std::optional<std::uint64_t> context_max_alloc(const cl_icd_dispatch& target, cl_context context,
                                               bool largest, std::uint64_t cap);

// What clSVMAlloc(context, flags, size, alignment) is by OpenCL 3.0's rules for it.
struct svm_request {
  // Invalid arguments: size 0; an unknown flag, two access flags, CL_MEM_SVM_ATOMICS without
  // CL_MEM_SVM_FINE_GRAIN_BUFFER, or a fine-grain flag a device of the context does not support;
  // an alignment that is not a power of two; a context the driver does not know.
  bool invalid = false;
  // Otherwise valid, but above the smallest reported CL_DEVICE_MAX_MEM_ALLOC_SIZE (capped at
  // `cap`) where `profile` enforces that limit: that limit. A refusal for its size, which the
  // layer records as it records a buffer's (common/cl_status.h is_size_refusal).
  std::optional<std::uint64_t> above_max_alloc;
  bool valid() const noexcept { return !invalid && !above_max_alloc; }
};
svm_request check_svm_request(const cl_icd_dispatch& target, cl_context context,
                              cl_svm_mem_flags flags, std::uint64_t size, cl_uint alignment,
                              const device_model::device_profile& profile, std::uint64_t cap);

}  // namespace clpool::layer

#endif  // CLPOOL_TOOLS_LAYER_REQUEST_CHECKS_H_
