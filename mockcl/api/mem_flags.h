// The rules on a memory object's cl_mem_flags that more than one entry point applies: which bits
// exist, what an object made from another one (a sub-buffer, an image on a buffer) inherits, and
// which host accesses its flags refuse.
#ifndef MOCKCL_API_MEM_FLAGS_H_
#define MOCKCL_API_MEM_FLAGS_H_

#include <CL/cl.h>

namespace mockcl {

// The access flags of a buffer or SVM block; at most one may be given (none: read-write).
inline constexpr cl_mem_flags kMemAccessFlags =
    CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
// The host-access flags; at most one may be given (none: the host may read and write).
inline constexpr cl_mem_flags kHostAccessFlags =
    CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
// The host-pointer flags.
inline constexpr cl_mem_flags kHostPtrFlags =
    CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;
// Every flag a buffer may be created with.
inline constexpr cl_mem_flags kKnownMemFlags = kMemAccessFlags | kHostAccessFlags | kHostPtrFlags;

// The flags of an object made from `parent`'s bytes (OpenCL 3.0: clCreateSubBuffer, and
// clCreateImage with a mem_object): the device-access and host-access bits `given`, each only if
// compatible with the parent's, else the parent's; and always the parent's host-pointer bits,
// which `given` may not hold. CL_INVALID_VALUE otherwise (`out` untouched).
cl_int derived_mem_flags(cl_mem_flags parent, cl_mem_flags given, cl_mem_flags& out);

// OpenCL 3.0: a host read of an object whose flags say host-write-only or no-access (or a host
// write to a host-read-only or no-access one) is CL_INVALID_OPERATION. Objects made from another
// one carry its host access in their own flags (derived_mem_flags), so their flags suffice.
inline bool host_access_refused(cl_mem_flags flags, bool write) {
  return (flags & CL_MEM_HOST_NO_ACCESS) ||
         (flags & (write ? CL_MEM_HOST_READ_ONLY : CL_MEM_HOST_WRITE_ONLY));
}

// clEnqueueMap{Buffer,Image}'s map flags on an object with `flags` (OpenCL 3.0): only the three
// map bits, CL_MAP_WRITE_INVALIDATE_REGION alone (CL_INVALID_VALUE otherwise); a read map of a
// host-write-only or no-access object, or a write map of a host-read-only or no-access one, is
// CL_INVALID_OPERATION.
inline cl_int check_map_flags(cl_mem_flags flags, cl_map_flags map) {
  if (map & ~(CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) return CL_INVALID_VALUE;
  if ((map & CL_MAP_WRITE_INVALIDATE_REGION) && (map & (CL_MAP_READ | CL_MAP_WRITE)))
    return CL_INVALID_VALUE;
  if ((map & CL_MAP_READ) && host_access_refused(flags, /*write=*/false))
    return CL_INVALID_OPERATION;
  if ((map & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) &&
      host_access_refused(flags, /*write=*/true))
    return CL_INVALID_OPERATION;
  return CL_SUCCESS;
}

}  // namespace mockcl

#endif  // MOCKCL_API_MEM_FLAGS_H_
