// First-use charging: with a profile whose device commits memory at first use
// (CLPOOL_LAYER_PROFILE=nvidia), a buffer is charged to the layer's budget by the first enqueue
// that uses it, and that enqueue fails with the profile's status (-4) when it does not fit,
// before the driver sees it: the program takes the error path it would take on the smaller GPU.
//
// The enqueues that use a buffer: read, write, fill, copy (both buffers), their rect forms, map,
// migrate (not to the host), and kernel launches (NDRange, task), whose buffers are the cl_mem
// arguments set with clSetKernelArg. A sub-buffer's use charges its parent. SVM blocks are
// charged the same way by SVM memcpy (both ends), fill, map, migrate (not to the host) and by
// launches of kernels with the block as a clSetKernelArgSVMPointer argument; a pointer into a
// block charges the block. An enqueue that the driver then rejects (an invalid argument, say)
// gives back what it charged: the GPU never used the memory.
#ifndef CLPOOL_TOOLS_LAYER_FIRST_USE_H_
#define CLPOOL_TOOLS_LAYER_FIRST_USE_H_

#include <CL/cl_icd.h>

#include "tools/layer/recorder.h"

namespace clpool::layer {

// Puts the wrappers into `table`; they call `target` and charge through `rec`.
void install_first_use(cl_icd_dispatch& table, const cl_icd_dispatch* target, recorder* rec);

// The buffer `mem` is `block` (owned by its destructor callback, alive as long as `mem` is), or,
// for a sub-buffer, its parent's block.
void remember_mem(cl_mem mem, block_info* block);
void remember_sub_buffer(cl_mem sub, cl_mem parent);
// `mem` is destroyed: forget it (before its block is freed).
void forget_mem(cl_mem mem) noexcept;

}  // namespace clpool::layer

#endif  // CLPOOL_TOOLS_LAYER_FIRST_USE_H_
