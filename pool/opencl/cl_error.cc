#include "pool/opencl/cl_error.h"

#include <string>
#include <utility>

namespace clpool::opencl {

const char* status_name(cl_int status) noexcept { return common::status_name(status); }

std::string describe_failure(cl_int status, const std::string& call, const std::string& detail) {
  std::string text = call + " failed: " + status_name(status) + " (" + std::to_string(status) + ")";
  if (!detail.empty()) text += ": " + detail;
  return text;
}

cl_error::cl_error(cl_int status, std::string call, const std::string& detail)
    : clpool::pool_error(describe_failure(status, call, detail)),
      status_(status),
      call_(std::move(call)) {}

void throw_if_allocation_failed(cl_int status, const char* call, const std::string& detail) {
  clpool::allocator_refusal refusal;
  if (!allocation_succeeded(status, call, detail, refusal)) {
    throw clpool::allocator_out_of_memory(refusal.status, refusal.message);
  }
}

bool allocation_succeeded(cl_int status, const char* call, const std::string& detail,
                          clpool::allocator_refusal& refusal) {
  if (status == CL_SUCCESS) return true;
  if (!is_out_of_memory_status(status)) throw cl_error(status, call, detail);
  refusal.status = status;
  refusal.message = describe_failure(status, call, detail);
  return false;
}

void throw_if_failed(cl_int status, const char* call, const std::string& detail) {
  if (status != CL_SUCCESS) throw cl_error(status, call, detail);
}

}  // namespace clpool::opencl
