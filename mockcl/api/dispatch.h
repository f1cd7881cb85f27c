// The mock's ICD dispatch table: every slot filled. Slots the mock does not implement (images,
// pipes, GL/D3D interop, ...) answer CL_INVALID_OPERATION (or NULL with *errcode_ret set), so a
// client calling them gets an error, never a crash.
#ifndef MOCKCL_API_DISPATCH_H_
#define MOCKCL_API_DISPATCH_H_

#include <CL/cl_icd.h>

namespace mockcl {

// The process-wide table, built once; every handle's first member points at it.
const cl_icd_dispatch* dispatch_table();

}  // namespace mockcl

#endif  // MOCKCL_API_DISPATCH_H_
