#include "mockcl/api/enqueue_checks.h"

namespace mockcl {

_cl_command_queue* enqueue_prologue(mock_runtime::api_call& c, cl_command_queue h, cl_uint n,
                                    const cl_event* wait, cl_int& status) {
  mock_runtime& rt = c.runtime();
  if ((status = c.fault())) return nullptr;
  _cl_command_queue* q = rt.queue(h);
  if (!q) {
    status = CL_INVALID_COMMAND_QUEUE;
    return nullptr;
  }
  c.handle("queue", q);
  if ((status = rt.check_wait_list(n, wait, q->context))) return nullptr;
  return q;
}

cl_int check_mem(_cl_command_queue* q, cl_mem h, size_t offset, size_t bytes, _cl_mem*& out,
                 bool any_mem) {
  out = mock_runtime::get().mem(h);
  if (!out || (out->is_image() && !any_mem)) return CL_INVALID_MEM_OBJECT;
  if (out->context != q->context) return CL_INVALID_CONTEXT;
  if (offset > out->size || bytes > out->size - offset) return CL_INVALID_VALUE;
  return CL_SUCCESS;
}

void add_mem(_cl_event* ev, _cl_mem* m) {
  ev->mems.push_back(m);
  mock_runtime::get().retain_internal(m);
}

}  // namespace mockcl
