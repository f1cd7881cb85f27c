// The layer's wrappers of the calls that create and free device memory: clCreateBuffer,
// clCreateBufferWithProperties, clCreateSubBuffer and clSVMAlloc (each a recorder ticket: refused
// by the budget or an injected failure before the driver sees it, else committed or aborted by
// the driver's answer), and the frees that follow each block to the driver's destruction of it:
// a cl_mem's destructor callback, clSVMFree, clEnqueueSVMFree's callback; while recording, also
// the program's own references (clRetainMemObject, clReleaseMemObject) for its `release` events.
#ifndef CLPOOL_TOOLS_LAYER_ALLOCATIONS_H_
#define CLPOOL_TOOLS_LAYER_ALLOCATIONS_H_

#include <CL/cl_icd.h>

#include "tools/layer/recorder.h"

namespace clpool::layer {

// Puts the wrappers into `table`, as far as `rec` needs them (the frees only when it watches
// them, the references only when it records); they call `target` and record through `rec`.
void install_allocations(cl_icd_dispatch& table, const cl_icd_dispatch* target, recorder* rec);

}  // namespace clpool::layer

#endif  // CLPOOL_TOOLS_LAYER_ALLOCATIONS_H_
