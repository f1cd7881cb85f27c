// Test helper: cross-checks what a device reports (through any dispatch table) against itself, as
// the Khronos CTS's consistency and feature-macro tests do: extensions against their queries and
// the OpenCL C features, capabilities against the mandated minimum, unsupported features against
// their zero-valued queries, version strings against numeric versions. Returns one message per
// inconsistency (none: consistent).
#ifndef MOCKCL_CONSISTENCY_H_
#define MOCKCL_CONSISTENCY_H_

#include <CL/cl_icd.h>

#include <string>
#include <vector>

namespace mockcl::testing {

std::vector<std::string> device_consistency(const cl_icd_dispatch& d, cl_platform_id platform,
                                            cl_device_id device);

}  // namespace mockcl::testing

#endif  // MOCKCL_CONSISTENCY_H_
