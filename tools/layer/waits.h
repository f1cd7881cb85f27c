// The program's waits for its queued commands, recorded as `wait` events (FORMAT.md "Two moments
// of a free"): clFinish, clWaitForEvents, and the blocking forms of the buffer reads, writes and
// maps and of clEnqueueSVMMemcpy and clEnqueueSVMMap. A wait is written when the call returns
// successfully, and only while a block the program released awaits the driver's free
// (recorder::note_wait): otherwise each costs one relaxed load.
#ifndef CLPOOL_TOOLS_LAYER_WAITS_H_
#define CLPOOL_TOOLS_LAYER_WAITS_H_

#include <CL/cl_icd.h>

#include "tools/layer/recorder.h"

namespace clpool::layer {

// Puts the wrappers into `table`. Each calls what `table` held before (another wrapper of the
// layer, first use's) or, where it held nothing, `target`'s slot; `target_entries` is how many
// slots the loader's table has.
void install_waits(cl_icd_dispatch& table, const cl_icd_dispatch* target, cl_uint target_entries,
                   recorder* rec);

}  // namespace clpool::layer

#endif  // CLPOOL_TOOLS_LAYER_WAITS_H_
