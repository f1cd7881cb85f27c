#include "mockcl/api/mem_flags.h"

namespace mockcl {
namespace {
bool multiple_bits(cl_mem_flags f) { return f & (f - 1); }
}  // namespace

cl_int derived_mem_flags(cl_mem_flags parent, cl_mem_flags given, cl_mem_flags& out) {
  if (given & ~kKnownMemFlags) return CL_INVALID_VALUE;
  if (given & kHostPtrFlags) return CL_INVALID_VALUE;
  const cl_mem_flags access = given & kMemAccessFlags, host_access = given & kHostAccessFlags;
  if (multiple_bits(access) || multiple_bits(host_access)) return CL_INVALID_VALUE;
  // An object created without access bits is read-write.
  const cl_mem_flags parent_access =
      (parent & kMemAccessFlags) ? parent & kMemAccessFlags : CL_MEM_READ_WRITE;
  if (access && parent_access != CL_MEM_READ_WRITE && access != parent_access)
    return CL_INVALID_VALUE;
  // Host access may narrow (to CL_MEM_HOST_NO_ACCESS from anything) but never widen or switch.
  const cl_mem_flags parent_host = parent & kHostAccessFlags;
  if ((host_access & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY)) && parent_host &&
      host_access != parent_host)
    return CL_INVALID_VALUE;
  out = (access ? access : parent & kMemAccessFlags) | (host_access ? host_access : parent_host) |
        (parent & kHostPtrFlags);
  return CL_SUCCESS;
}

}  // namespace mockcl
