// What every enqueue entry point on memory objects checks before it makes a command, written once
// for the buffer commands (api_enqueue.cc), the image commands (api_image_enqueue.cc) and the SVM
// commands (api_svm.cc).
#ifndef MOCKCL_API_ENQUEUE_CHECKS_H_
#define MOCKCL_API_ENQUEUE_CHECKS_H_

#include "mockcl/runtime/runtime.h"

namespace mockcl {

// The shared prologue: fault, queue (named in the call log), wait list. Returns the queue or
// sets `status`.
_cl_command_queue* enqueue_prologue(mock_runtime::api_call& c, cl_command_queue h, cl_uint n,
                                    const cl_event* wait, cl_int& status);

// A buffer argument of a command on q: valid, same context, range inside it. An image is no
// buffer, except to the commands that take any memory object (unmap, migrate).
cl_int check_mem(_cl_command_queue* q, cl_mem h, size_t offset, size_t bytes, _cl_mem*& out,
                 bool any_mem = false);

// The command uses `m`: it holds it until the command is done.
void add_mem(_cl_event* ev, _cl_mem* m);

}  // namespace mockcl

#endif  // MOCKCL_API_ENQUEUE_CHECKS_H_
