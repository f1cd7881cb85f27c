#include "tools/layer/waits.h"

#include <algorithm>
#include <cstring>

namespace clpool::layer {
namespace {

recorder* rec = nullptr;
// What the wrappers call: the layer's table as it was before install_waits, with the loader's
// (the driver's) slots where the layer wraps nothing. Never destroyed.
cl_icd_dispatch next{};

cl_int waited(cl_int status, cl_command_queue queue = nullptr) {
  if (status == CL_SUCCESS) {
    try {
      rec->note_wait(queue);
    } catch (...) {
    }
  }
  return status;
}

cl_int waited_if(cl_bool blocking, cl_int status) { return blocking ? waited(status) : status; }

cl_int CL_API_CALL finish(cl_command_queue q) { return waited(next.clFinish(q), q); }

cl_int CL_API_CALL wait_for_events(cl_uint n, const cl_event* events) {
  return waited(next.clWaitForEvents(n, events));
}

cl_int CL_API_CALL enqueue_read_buffer(cl_command_queue q, cl_mem b, cl_bool blocking,
                                       size_t offset, size_t size, void* ptr, cl_uint n,
                                       const cl_event* wait, cl_event* event) {
  return waited_if(blocking,
                   next.clEnqueueReadBuffer(q, b, blocking, offset, size, ptr, n, wait, event));
}

cl_int CL_API_CALL enqueue_write_buffer(cl_command_queue q, cl_mem b, cl_bool blocking,
                                        size_t offset, size_t size, const void* ptr, cl_uint n,
                                        const cl_event* wait, cl_event* event) {
  return waited_if(blocking,
                   next.clEnqueueWriteBuffer(q, b, blocking, offset, size, ptr, n, wait, event));
}

cl_int CL_API_CALL enqueue_read_buffer_rect(cl_command_queue q, cl_mem b, cl_bool blocking,
                                            const size_t* buffer_origin, const size_t* host_origin,
                                            const size_t* region, size_t buffer_row_pitch,
                                            size_t buffer_slice_pitch, size_t host_row_pitch,
                                            size_t host_slice_pitch, void* ptr, cl_uint n,
                                            const cl_event* wait, cl_event* event) {
  return waited_if(
      blocking, next.clEnqueueReadBufferRect(q, b, blocking, buffer_origin, host_origin, region,
                                             buffer_row_pitch, buffer_slice_pitch, host_row_pitch,
                                             host_slice_pitch, ptr, n, wait, event));
}

cl_int CL_API_CALL enqueue_write_buffer_rect(cl_command_queue q, cl_mem b, cl_bool blocking,
                                             const size_t* buffer_origin, const size_t* host_origin,
                                             const size_t* region, size_t buffer_row_pitch,
                                             size_t buffer_slice_pitch, size_t host_row_pitch,
                                             size_t host_slice_pitch, const void* ptr, cl_uint n,
                                             const cl_event* wait, cl_event* event) {
  return waited_if(
      blocking, next.clEnqueueWriteBufferRect(q, b, blocking, buffer_origin, host_origin, region,
                                              buffer_row_pitch, buffer_slice_pitch, host_row_pitch,
                                              host_slice_pitch, ptr, n, wait, event));
}

void* CL_API_CALL enqueue_map_buffer(cl_command_queue q, cl_mem b, cl_bool blocking,
                                     cl_map_flags flags, size_t offset, size_t size, cl_uint n,
                                     const cl_event* wait, cl_event* event, cl_int* errcode_ret) {
  cl_int status = CL_SUCCESS;
  void* mapped =
      next.clEnqueueMapBuffer(q, b, blocking, flags, offset, size, n, wait, event, &status);
  if (mapped != nullptr) waited_if(blocking, status);
  if (errcode_ret != nullptr) *errcode_ret = status;
  return mapped;
}

cl_int CL_API_CALL enqueue_svm_memcpy(cl_command_queue q, cl_bool blocking, void* dst,
                                      const void* src, size_t size, cl_uint n, const cl_event* wait,
                                      cl_event* event) {
  return waited_if(blocking, next.clEnqueueSVMMemcpy(q, blocking, dst, src, size, n, wait, event));
}

cl_int CL_API_CALL enqueue_svm_map(cl_command_queue q, cl_bool blocking, cl_map_flags flags,
                                   void* ptr, size_t size, cl_uint n, const cl_event* wait,
                                   cl_event* event) {
  return waited_if(blocking, next.clEnqueueSVMMap(q, blocking, flags, ptr, size, n, wait, event));
}

}  // namespace

void install_waits(cl_icd_dispatch& table, const cl_icd_dispatch* target, cl_uint target_entries,
                   recorder* r) {
  rec = r;
  // The loader's slots (only as many as its table has), then the layer's own wrappers over them.
  constexpr std::size_t slots = sizeof(cl_icd_dispatch) / sizeof(void*);
  void* const* from_target = reinterpret_cast<void* const*>(target);
  void* const* from_layer = reinterpret_cast<void* const*>(&table);
  void* to[slots] = {};
  for (std::size_t i = 0; i < slots; ++i) {
    to[i] = from_layer[i] != nullptr ? from_layer[i]
            : i < target_entries     ? from_target[i]
                                     : nullptr;
  }
  std::memcpy(&next, to, sizeof next);
  table.clFinish = finish;
  table.clWaitForEvents = wait_for_events;
  table.clEnqueueReadBuffer = enqueue_read_buffer;
  table.clEnqueueWriteBuffer = enqueue_write_buffer;
  table.clEnqueueReadBufferRect = enqueue_read_buffer_rect;
  table.clEnqueueWriteBufferRect = enqueue_write_buffer_rect;
  table.clEnqueueMapBuffer = enqueue_map_buffer;
  table.clEnqueueSVMMemcpy = enqueue_svm_memcpy;
  table.clEnqueueSVMMap = enqueue_svm_map;
}

}  // namespace clpool::layer
