// Buffer commands (read, write, copy, fill, map, unmap, migrate), kernel launches, markers
// and barriers. Each validates, charges deferred buffers at first use (an allocation failure
// is the enqueue's error), then hands a command to the scheduler.
#include <algorithm>
#include <cstring>
#include <string>

#include "mockcl/api/enqueue_checks.h"
#include "mockcl/api/mem_flags.h"
#include "mockcl/backing/compute_shape.h"
#include "mockcl/runtime/runtime.h"
#include "mockcl/runtime/use_scope.h"

namespace mockcl {
namespace {

cl_int rw_buffer(api_call& c, bool write, cl_command_queue h, cl_mem buf, cl_bool blocking,
                 size_t offset, size_t size, const void* ptr, cl_uint n, const cl_event* wait,
                 cl_event* out) {
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  _cl_mem* m;
  if ((s = check_mem(q, buf, offset, size, m))) return c.ret(s);
  c.handle("mem", m);
  c.arg("offset", offset);
  c.arg("size", size);
  if (!ptr || size == 0) return c.ret(CL_INVALID_VALUE);
  if (host_access_refused(m->flags, write)) return c.ret(CL_INVALID_OPERATION);
  if ((s = rt().use_mem(m, q))) return c.ret(s);
  _cl_event* ev = write ? rt().new_command(q, CL_COMMAND_WRITE_BUFFER, "write",
                                           entry_point::clEnqueueWriteBuffer, n, wait)
                        : rt().new_command(q, CL_COMMAND_READ_BUFFER, "read",
                                           entry_point::clEnqueueReadBuffer, n, wait);
  add_mem(ev, m);
  ev->host = const_cast<void*>(ptr);
  ev->offset = offset;
  ev->bytes = size;
  return c.ret(finish_command(c, ev, out, blocking));
}

cl_int CL_API_CALL EnqueueReadBuffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset,
                                     size_t size, void* ptr, cl_uint n, const cl_event* wait,
                                     cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueReadBuffer);
  return rw_buffer(c, false, q, b, blocking, offset, size, ptr, n, wait, out);
}

cl_int CL_API_CALL EnqueueWriteBuffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset,
                                      size_t size, const void* ptr, cl_uint n, const cl_event* wait,
                                      cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueWriteBuffer);
  return rw_buffer(c, true, q, b, blocking, offset, size, ptr, n, wait, out);
}

// Where a buffer's bytes are (for both copies' overlap checks): its root and its offset in it.
struct bytes_place {
  const _cl_mem* root;
  size_t offset;
};
bytes_place place_of(const _cl_mem* m) {
  return m->parent ? bytes_place{m->parent, m->offset} : bytes_place{m, 0};
}

cl_int CL_API_CALL EnqueueCopyBuffer(cl_command_queue h, cl_mem src, cl_mem dst, size_t src_off,
                                     size_t dst_off, size_t size, cl_uint n, const cl_event* wait,
                                     cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueCopyBuffer);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  _cl_mem *ms, *md;
  if ((s = check_mem(q, src, src_off, size, ms)) || (s = check_mem(q, dst, dst_off, size, md)))
    return c.ret(s);
  if (size == 0) return c.ret(CL_INVALID_VALUE);
  // Overlap in the root buffer's bytes: the same buffer, two sub-buffers of one buffer (OpenCL
  // 3.0), or a sub-buffer and its buffer (which POCL refuses too), as the rect form checks.
  const bytes_place ps = place_of(ms), pd = place_of(md);
  const size_t from = src_off + ps.offset, to = dst_off + pd.offset;
  if (ps.root == pd.root && from < to + size && to < from + size) return c.ret(CL_MEM_COPY_OVERLAP);
  if ((s = rt().use_mems(ms, md, q))) return c.ret(s);
  _cl_event* ev = rt().new_command(q, CL_COMMAND_COPY_BUFFER, "copy",
                                   entry_point::clEnqueueCopyBuffer, n, wait);
  add_mem(ev, ms);
  add_mem(ev, md);
  ev->src_offset = src_off;
  ev->offset = dst_off;
  ev->bytes = size;
  return c.ret(finish_command(c, ev, out, false));
}

// A rect side of buffer m: pitches valid (rect.h) and the region inside the buffer.
cl_int check_rect_side(const _cl_mem* m, rect_side& side, const size_t region[3]) {
  if (cl_int s = rect_normalize(side, region)) return s;
  size_t first, end;
  if (!rect_extent(side, region, first, end) || end > m->size) return CL_INVALID_VALUE;
  return CL_SUCCESS;
}

rect_side make_rect_side(const size_t* origin, size_t row_pitch, size_t slice_pitch) {
  rect_side s;
  for (int i = 0; i < 3; ++i) s.origin[i] = origin[i];
  s.row_pitch = row_pitch;
  s.slice_pitch = slice_pitch;
  return s;
}

// clEnqueueReadBufferRect / WriteBufferRect: the buffer side and the host side.
cl_int rw_buffer_rect(api_call& c, bool write, cl_command_queue h, cl_mem buf, cl_bool blocking,
                      const size_t* buffer_origin, const size_t* host_origin, const size_t* region,
                      size_t buffer_row_pitch, size_t buffer_slice_pitch, size_t host_row_pitch,
                      size_t host_slice_pitch, const void* ptr, cl_uint n, const cl_event* wait,
                      cl_event* out) {
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  _cl_mem* m;
  if ((s = check_mem(q, buf, 0, 0, m))) return c.ret(s);
  c.handle("mem", m);
  if (!ptr || !buffer_origin || !host_origin || !region) return c.ret(CL_INVALID_VALUE);
  rect_side dev = make_rect_side(buffer_origin, buffer_row_pitch, buffer_slice_pitch);
  rect_side host = make_rect_side(host_origin, host_row_pitch, host_slice_pitch);
  if ((s = check_rect_side(m, dev, region)) || (s = rect_normalize(host, region))) return c.ret(s);
  if (host_access_refused(m->flags, write)) return c.ret(CL_INVALID_OPERATION);
  if ((s = rt().use_mem(m, q))) return c.ret(s);
  _cl_event* ev = write ? rt().new_command(q, CL_COMMAND_WRITE_BUFFER_RECT, "write_rect",
                                           entry_point::clEnqueueWriteBufferRect, n, wait)
                        : rt().new_command(q, CL_COMMAND_READ_BUFFER_RECT, "read_rect",
                                           entry_point::clEnqueueReadBufferRect, n, wait);
  add_mem(ev, m);
  ev->host = const_cast<void*>(ptr);
  for (int i = 0; i < 3; ++i) ev->region[i] = region[i];
  ev->rect_src = write ? host : dev;
  ev->rect_dst = write ? dev : host;
  ev->bytes = region[0] * region[1] * region[2];
  c.arg("size", ev->bytes);
  return c.ret(finish_command(c, ev, out, blocking));
}

cl_int CL_API_CALL EnqueueReadBufferRect(cl_command_queue q, cl_mem b, cl_bool blocking,
                                         const size_t* buffer_origin, const size_t* host_origin,
                                         const size_t* region, size_t buffer_row_pitch,
                                         size_t buffer_slice_pitch, size_t host_row_pitch,
                                         size_t host_slice_pitch, void* ptr, cl_uint n,
                                         const cl_event* wait, cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueReadBufferRect);
  return rw_buffer_rect(c, false, q, b, blocking, buffer_origin, host_origin, region,
                        buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr,
                        n, wait, out);
}

cl_int CL_API_CALL EnqueueWriteBufferRect(cl_command_queue q, cl_mem b, cl_bool blocking,
                                          const size_t* buffer_origin, const size_t* host_origin,
                                          const size_t* region, size_t buffer_row_pitch,
                                          size_t buffer_slice_pitch, size_t host_row_pitch,
                                          size_t host_slice_pitch, const void* ptr, cl_uint n,
                                          const cl_event* wait, cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueWriteBufferRect);
  return rw_buffer_rect(c, true, q, b, blocking, buffer_origin, host_origin, region,
                        buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr,
                        n, wait, out);
}

cl_int CL_API_CALL EnqueueCopyBufferRect(cl_command_queue h, cl_mem src, cl_mem dst,
                                         const size_t* src_origin, const size_t* dst_origin,
                                         const size_t* region, size_t src_row_pitch,
                                         size_t src_slice_pitch, size_t dst_row_pitch,
                                         size_t dst_slice_pitch, cl_uint n, const cl_event* wait,
                                         cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueCopyBufferRect);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  _cl_mem *ms, *md;
  if ((s = check_mem(q, src, 0, 0, ms)) || (s = check_mem(q, dst, 0, 0, md))) return c.ret(s);
  if (!src_origin || !dst_origin || !region) return c.ret(CL_INVALID_VALUE);
  rect_side from = make_rect_side(src_origin, src_row_pitch, src_slice_pitch);
  rect_side to = make_rect_side(dst_origin, dst_row_pitch, dst_slice_pitch);
  if ((s = check_rect_side(ms, from, region)) || (s = check_rect_side(md, to, region)))
    return c.ret(s);
  // The same buffer: one geometry for both sides (OpenCL 3.0).
  if (ms == md && (from.row_pitch != to.row_pitch || from.slice_pitch != to.slice_pitch))
    return c.ret(CL_INVALID_VALUE);
  // Overlap in the root buffer's bytes: the same buffer, or two sub-buffers of one buffer.
  const bytes_place ps = place_of(ms), pd = place_of(md);
  if (ps.root == pd.root && rect_overlap(from, ps.offset, to, pd.offset, region))
    return c.ret(CL_MEM_COPY_OVERLAP);
  if ((s = rt().use_mems(ms, md, q))) return c.ret(s);
  _cl_event* ev = rt().new_command(q, CL_COMMAND_COPY_BUFFER_RECT, "copy_rect",
                                   entry_point::clEnqueueCopyBufferRect, n, wait);
  add_mem(ev, ms);
  add_mem(ev, md);
  for (int i = 0; i < 3; ++i) ev->region[i] = region[i];
  ev->rect_src = from;
  ev->rect_dst = to;
  ev->bytes = region[0] * region[1] * region[2];
  return c.ret(finish_command(c, ev, out, false));
}

cl_int CL_API_CALL EnqueueFillBuffer(cl_command_queue h, cl_mem buf, const void* pattern,
                                     size_t pattern_size, size_t offset, size_t size, cl_uint n,
                                     const cl_event* wait, cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueFillBuffer);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  _cl_mem* m;
  if ((s = check_mem(q, buf, offset, size, m))) return c.ret(s);
  c.handle("mem", m);
  c.arg("size", size);
  if (!pattern || pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)) ||
      offset % pattern_size || size % pattern_size)
    return c.ret(CL_INVALID_VALUE);
  if ((s = rt().use_mem(m, q))) return c.ret(s);
  _cl_event* ev = rt().new_command(q, CL_COMMAND_FILL_BUFFER, "fill",
                                   entry_point::clEnqueueFillBuffer, n, wait);
  add_mem(ev, m);
  ev->pattern.assign(static_cast<const unsigned char*>(pattern),
                     static_cast<const unsigned char*>(pattern) + pattern_size);
  ev->offset = offset;
  ev->bytes = size;
  return c.ret(finish_command(c, ev, out, false));
}

void* CL_API_CALL EnqueueMapBuffer(cl_command_queue h, cl_mem buf, cl_bool blocking,
                                   cl_map_flags flags, size_t offset, size_t size, cl_uint n,
                                   const cl_event* wait, cl_event* out, cl_int* err) {
  api_call c(rt(), entry_point::clEnqueueMapBuffer);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.fail<void*>(err, s);
  _cl_mem* m;
  if ((s = check_mem(q, buf, offset, size, m))) return c.fail<void*>(err, s);
  c.handle("mem", m);
  if (size == 0) return c.fail<void*>(err, CL_INVALID_VALUE);
  if ((s = check_map_flags(m->flags, flags))) return c.fail<void*>(err, s);
  if ((s = rt().use_mem(m, q))) return c.fail<void*>(err, s);
  // maps=copy, and in backing mode an object made with CL_MEM_USE_HOST_PTR: the host gets its own
  // copy (or that memory), filled when the map executes (maps.cc). A maps=shared device in backing
  // mode: POCL's mapping of the twin, the buffer's bytes. In none mode: the mock's bytes.
  const bool copy_device = rt().devices[q->device->index].cfg.maps == map_mode::copy;
  unsigned char* host_at = mock_runtime::use_host_ptr_at(m, offset);
  const bool backing = rt().pocl && !copy_device && !host_at;
  const bool copy = !backing && (copy_device || rt().pocl);
  unsigned char* b = copy || backing ? nullptr : rt().bytes_of(m);
  if (!copy && !backing && !b) return c.fail<void*>(err, CL_MAP_FAILURE);
  void* p = b ? b + offset : nullptr;
  if (backing && !(p = rt().map_backing(m, flags, offset, size, s))) return c.fail<void*>(err, s);
  if (copy && !(p = rt().map_copy(m, flags, offset, size, host_at)))
    return c.fail<void*>(err, CL_OUT_OF_HOST_MEMORY);
  _cl_event* ev =
      rt().new_command(q, CL_COMMAND_MAP_BUFFER, "map", entry_point::clEnqueueMapBuffer, n, wait);
  add_mem(ev, m);
  ev->offset = offset;
  ev->bytes = size;
  if (copy || backing) ev->host = p;
  if (b) m->shared_maps.push_back(p);
  ++m->map_count;
  s = finish_command(c, ev, out, blocking);
  if (err) *err = s;
  c.ret(s);
  if (s != CL_SUCCESS) {  // the caller has no pointer to unmap
    --m->map_count;
    if (copy || backing) rt().cancel_map(m, p);
    if (b) m->shared_maps.erase(std::find(m->shared_maps.begin(), m->shared_maps.end(), p));
  }
  return s == CL_SUCCESS ? p : nullptr;
}

cl_int CL_API_CALL EnqueueUnmapMemObject(cl_command_queue h, cl_mem buf, void* ptr, cl_uint n,
                                         const cl_event* wait, cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueUnmapMemObject);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  _cl_mem* m;
  if ((s = check_mem(q, buf, 0, 0, m, true))) return c.ret(s);
  // A mapping is named by exactly the pointer its map returned: a maps=copy one (or backing
  // mode's) by its host copy, a shared one by the pointer into the mock's bytes.
  const bool copy = m->map_count > 0 && rt().begin_unmap(m, ptr);
  if (!copy) {
    const auto shared = std::find(m->shared_maps.begin(), m->shared_maps.end(), ptr);
    if (shared == m->shared_maps.end()) return c.ret(CL_INVALID_VALUE);
    m->shared_maps.erase(shared);
  }
  --m->map_count;
  _cl_event* ev = rt().new_command(q, CL_COMMAND_UNMAP_MEM_OBJECT, "unmap",
                                   entry_point::clEnqueueUnmapMemObject, n, wait);
  add_mem(ev, m);
  if (copy) ev->host = ptr;
  return c.ret(finish_command(c, ev, out, false));
}

cl_int CL_API_CALL EnqueueMigrateMemObjects(cl_command_queue h, cl_uint num, const cl_mem* list,
                                            cl_mem_migration_flags flags, cl_uint n,
                                            const cl_event* wait, cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueMigrateMemObjects);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  if (num == 0 || !list) return c.ret(CL_INVALID_VALUE);
  if (flags & ~(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED))
    return c.ret(CL_INVALID_VALUE);
  std::vector<_cl_mem*> ms;
  for (cl_uint i = 0; i < num; ++i) {
    _cl_mem* m;
    if ((s = check_mem(q, list[i], 0, 0, m, true))) return c.ret(s);
    c.handle("mem", m);
    ms.push_back(m);
  }
  if (!(flags & CL_MIGRATE_MEM_OBJECT_HOST)) {
    use_scope scope(rt(), q);
    for (_cl_mem* m : ms)
      if ((s = scope.mem(m))) return c.ret(s);
    scope.keep();
  }
  _cl_event* ev = rt().new_command(q, CL_COMMAND_MIGRATE_MEM_OBJECTS, "migrate",
                                   entry_point::clEnqueueMigrateMemObjects, n, wait);
  for (_cl_mem* m : ms) add_mem(ev, m);
  ev->to_host = flags & CL_MIGRATE_MEM_OBJECT_HOST;
  return c.ret(finish_command(c, ev, out, false));
}

// clEnqueueNDRangeKernel's geometry rules (OpenCL 3.0): dimensions, sizes, offsets, and the
// work-group size against the device (compute_shape.h: POCL's device's in backing mode) and the
// kernel (POCL's limits in backing mode). A global size of 0 is valid since 2.1 (the launch does
// nothing).
cl_int check_ndrange(const compute_shape& device, _cl_kernel* k, cl_uint dims, const size_t* offset,
                     const size_t* global, const size_t* local) {
  if (dims < 1 || dims > 3) return CL_INVALID_WORK_DIMENSION;
  if (!global) return CL_INVALID_GLOBAL_WORK_SIZE;
  for (cl_uint i = 0; i < dims; ++i) {
    size_t end;
    if (offset && __builtin_add_overflow(offset[i], global[i], &end))
      return CL_INVALID_GLOBAL_OFFSET;
  }
  const size_t kernel_max = k->max_work_group;
  const size_t* reqd = k->reqd_work_group;
  const bool has_reqd = reqd[0] != 0;
  if (!local) return has_reqd ? CL_INVALID_WORK_GROUP_SIZE : CL_SUCCESS;
  const bool uniform = k->uniform_work_groups;
  size_t items = 1;
  for (cl_uint i = 0; i < dims; ++i) {
    if (local[i] > device.max_work_items[i]) return CL_INVALID_WORK_ITEM_SIZE;
    if (local[i] == 0) return CL_INVALID_WORK_GROUP_SIZE;
    if (uniform && global[i] % local[i] != 0) return CL_INVALID_WORK_GROUP_SIZE;
    if (has_reqd && local[i] != reqd[i]) return CL_INVALID_WORK_GROUP_SIZE;
    if (__builtin_mul_overflow(items, local[i], &items)) return CL_INVALID_WORK_GROUP_SIZE;
  }
  return items > kernel_max ? CL_INVALID_WORK_GROUP_SIZE : CL_SUCCESS;
}

cl_int launch(api_call& c, entry_point e, cl_command_type type, cl_command_queue h, cl_kernel kh,
              cl_uint dims, const size_t* offset, const size_t* global, const size_t* local,
              cl_uint n, const cl_event* wait, cl_event* out) {
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  _cl_kernel* k = rt().kernel(kh);
  if (!k) return c.ret(CL_INVALID_KERNEL);
  c.handle("kernel", k);
  if (k->program->context != q->context) return c.ret(CL_INVALID_CONTEXT);
  if (type == CL_COMMAND_NDRANGE_KERNEL &&
      (s = check_ndrange(device_shape(rt().devices[q->device->index].cfg.gpu), k, dims, offset,
                         global, local)))
    return c.ret(s);
  std::vector<_cl_mem*> ms;
  std::vector<svm_allocation*> blocks;
  for (const kernel_arg& a : k->args) {
    if (!a.set) return c.ret(CL_INVALID_KERNEL_ARGS);
    if (a.mem) {
      _cl_mem* m = rt().mem(a.mem);
      if (!m) return c.ret(CL_INVALID_KERNEL_ARGS);  // Released after clSetKernelArg.
      ms.push_back(m);
    }
    if (a.svm) {
      svm_allocation* b = rt().find_svm(a.svm);
      if (!b || b->freed) return c.ret(CL_INVALID_KERNEL_ARGS);
      blocks.push_back(b);
    }
    if (a.sampler && !rt().sampler(a.sampler))
      return c.ret(CL_INVALID_KERNEL_ARGS);  // Released since.
  }
  {
    use_scope scope(rt(), q);
    for (_cl_mem* m : ms)
      if ((s = scope.mem(m))) return c.ret(s);
    for (svm_allocation* b : blocks)
      if ((s = scope.svm(b))) return c.ret(s);
    scope.keep();
  }
  _cl_event* ev = rt().new_command(q, type, "kernel", e, n, wait);
  for (_cl_mem* m : ms) add_mem(ev, m);
  for (svm_allocation* b : blocks) {
    ++b->pending;
    ev->svm.push_back({reinterpret_cast<uint64_t>(b->data()), b->size});
  }
  ev->svm_counted = true;
  if (rt().pocl) {  // Backing mode: what POCL will run, as it is now.
    ev->kernel = k;
    rt().retain_internal(k);
    ev->args = k->args;
    for (const kernel_arg& a : ev->args)
      if (a.sampler) rt().retain_internal(a.sampler);  // Dropped with the event (runtime.cc).
    ev->dims = dims;
    const size_t one = 1;
    for (cl_uint i = 0; i < dims; ++i) {
      ev->work[i] = offset ? offset[i] : 0;
      ev->work[3 + i] = global ? global[i] : one;
      ev->work[6 + i] = local ? local[i] : one;
    }
    ev->has_offset = offset != nullptr;
    ev->has_local = local != nullptr || type == CL_COMMAND_TASK;
  }
  return c.ret(finish_command(c, ev, out, false));
}

cl_int CL_API_CALL EnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims,
                                        const size_t* offset, const size_t* global,
                                        const size_t* local, cl_uint n, const cl_event* wait,
                                        cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueNDRangeKernel);
  return launch(c, entry_point::clEnqueueNDRangeKernel, CL_COMMAND_NDRANGE_KERNEL, q, k, dims,
                offset, global, local, n, wait, out);
}

cl_int CL_API_CALL EnqueueTask(cl_command_queue q, cl_kernel k, cl_uint n, const cl_event* wait,
                               cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueTask);
  return launch(c, entry_point::clEnqueueTask, CL_COMMAND_TASK, q, k, 1, nullptr, nullptr, nullptr,
                n, wait, out);
}

cl_int sync_command(api_call& c, entry_point e, cl_command_type type, const char* kind,
                    cl_command_queue h, cl_uint n, const cl_event* wait, cl_event* out) {
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  _cl_event* ev = rt().new_command(q, type, kind, e, n, wait);
  return c.ret(finish_command(c, ev, out, false));
}

cl_int CL_API_CALL EnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n, const cl_event* wait,
                                             cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueMarkerWithWaitList);
  return sync_command(c, entry_point::clEnqueueMarkerWithWaitList, CL_COMMAND_MARKER, "marker", q,
                      n, wait, out);
}

cl_int CL_API_CALL EnqueueBarrierWithWaitList(cl_command_queue q, cl_uint n, const cl_event* wait,
                                              cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueBarrierWithWaitList);
  return sync_command(c, entry_point::clEnqueueBarrierWithWaitList, CL_COMMAND_BARRIER, "barrier",
                      q, n, wait, out);
}

cl_int CL_API_CALL EnqueueMarker(cl_command_queue q, cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueMarker);
  if (!out) return c.ret(CL_INVALID_VALUE);
  return sync_command(c, entry_point::clEnqueueMarker, CL_COMMAND_MARKER, "marker", q, 0, nullptr,
                      out);
}

cl_int CL_API_CALL EnqueueBarrier(cl_command_queue q) {
  api_call c(rt(), entry_point::clEnqueueBarrier);
  return sync_command(c, entry_point::clEnqueueBarrier, CL_COMMAND_BARRIER, "barrier", q, 0,
                      nullptr, nullptr);
}

cl_int CL_API_CALL EnqueueWaitForEvents(cl_command_queue q, cl_uint n, const cl_event* wait) {
  api_call c(rt(), entry_point::clEnqueueWaitForEvents);
  if (n == 0 || !wait) return c.ret(CL_INVALID_VALUE);
  // 1.1 semantics: later commands wait for these events, i.e. a barrier with a wait list.
  return sync_command(c, entry_point::clEnqueueWaitForEvents, CL_COMMAND_BARRIER, "wait_for_events",
                      q, n, wait, nullptr);
}

}  // namespace

void fill_enqueue(cl_icd_dispatch& d) {
  d.clEnqueueReadBuffer = EnqueueReadBuffer;
  d.clEnqueueWriteBuffer = EnqueueWriteBuffer;
  d.clEnqueueCopyBuffer = EnqueueCopyBuffer;
  d.clEnqueueReadBufferRect = EnqueueReadBufferRect;
  d.clEnqueueWriteBufferRect = EnqueueWriteBufferRect;
  d.clEnqueueCopyBufferRect = EnqueueCopyBufferRect;
  d.clEnqueueFillBuffer = EnqueueFillBuffer;
  d.clEnqueueMapBuffer = EnqueueMapBuffer;
  d.clEnqueueUnmapMemObject = EnqueueUnmapMemObject;
  d.clEnqueueMigrateMemObjects = EnqueueMigrateMemObjects;
  d.clEnqueueNDRangeKernel = EnqueueNDRangeKernel;
  d.clEnqueueTask = EnqueueTask;
  d.clEnqueueMarkerWithWaitList = EnqueueMarkerWithWaitList;
  d.clEnqueueBarrierWithWaitList = EnqueueBarrierWithWaitList;
  d.clEnqueueMarker = EnqueueMarker;
  d.clEnqueueBarrier = EnqueueBarrier;
  d.clEnqueueWaitForEvents = EnqueueWaitForEvents;
}

}  // namespace mockcl
