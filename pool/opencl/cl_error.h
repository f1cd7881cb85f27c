// Typed errors for the OpenCL side of clpool, and the rule that sorts OpenCL statuses into
// "out of memory" (the pool frees held memory and retries) and "everything else" (reported at
// once).
#ifndef CLPOOL_POOL_OPENCL_CL_ERROR_H_
#define CLPOOL_POOL_OPENCL_CL_ERROR_H_

// Installed headers are used outside Bazel: pick OpenCL 3.0 unless the includer chose.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <string>

#include "common/cl_status.h"
#include "pool/allocator.h"
#include "pool/errors.h"

namespace clpool::opencl {

// Returns the symbolic name of an OpenCL status, e.g. "CL_INVALID_BUFFER_SIZE" for -61, for every
// status defined by the OpenCL 3.0 headers and the common extension codes. Unknown codes give
// "CL_UNKNOWN_ERROR". Never returns nullptr.
const char* status_name(cl_int status) noexcept;

// True for the statuses that mean "no room": CL_MEM_OBJECT_ALLOCATION_FAILURE (-4),
// CL_OUT_OF_RESOURCES (-5) and CL_OUT_OF_HOST_MEMORY (-6). The rule lives in the device model
// (common/cl_status.h), shared with the layer and the replay tool.
using common::is_out_of_memory_status;

// An OpenCL call failed with a status that is not out-of-memory (or the failure happened where a
// retry cannot help). Carries the status, its name and the call that failed.
// what() reads e.g. "clCreateBuffer failed: CL_INVALID_BUFFER_SIZE (-61): 2 GiB above max alloc".
class cl_error : public clpool::pool_error {
 public:
  cl_error(cl_int status, std::string call, const std::string& detail = {});

  cl_int status() const noexcept { return status_; }
  const char* name() const noexcept { return status_name(status_); }
  const std::string& call() const noexcept { return call_; }

 private:
  cl_int status_;
  std::string call_;
};

// The caller misused the API: an out-of-order queue given to bind_to_queue, a queue from another
// context, flags a pool cannot honour, a bad alignment. Nothing was changed.
class invalid_use : public clpool::argument_error {
 public:
  using clpool::argument_error::argument_error;
};

// The device (or every device of the context) lacks a feature the call needs, e.g. SVM.
class unsupported_feature : public clpool::pool_error {
 public:
  using clpool::pool_error::pool_error;
};

// Builds the text "CALL failed: NAME (STATUS)[: DETAIL]".
std::string describe_failure(cl_int status, const std::string& call, const std::string& detail);

// Throws for a failed allocation-related call: allocator_out_of_memory for the out-of-memory
// statuses (so the pool frees held memory and retries), cl_error for every other status. Does
// nothing for CL_SUCCESS.
void throw_if_allocation_failed(cl_int status, const char* call, const std::string& detail = {});

// throw_if_allocation_failed() for allocators that report out-of-memory by value
// (clpool::allocator_reports_oom_by_value): true for CL_SUCCESS; false, with `refusal` holding the
// status and the text allocator_out_of_memory would carry, for the out-of-memory statuses; throws
// cl_error for every other status.
bool allocation_succeeded(cl_int status, const char* call, const std::string& detail,
                          clpool::allocator_refusal& refusal);

// Throws cl_error for any status other than CL_SUCCESS.
void throw_if_failed(cl_int status, const char* call, const std::string& detail = {});

}  // namespace clpool::opencl

#endif  // CLPOOL_POOL_OPENCL_CL_ERROR_H_
