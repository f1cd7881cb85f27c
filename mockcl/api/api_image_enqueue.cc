// Image commands (backing mode with images, api_image.cc): read, write, copy, fill, map, and the
// copies between images and buffers. Each validates what mockcl can (handles, contexts, regions
// inside the images, formats of a copy, host access), charges a deferred image or buffer at first
// use, then hands a command to the scheduler; POCL runs it when it executes (backing_image.cc).
#include <cstring>

#include "mockcl/api/enqueue_checks.h"
#include "mockcl/api/mem_flags.h"
#include "mockcl/runtime/runtime.h"

namespace mockcl {
namespace {

// An image of a command on q: origin + region inside it, no empty axis.
cl_int check_image(_cl_command_queue* q, cl_mem h, const size_t* origin, const size_t* region,
                   _cl_mem*& out) {
  out = rt().mem(h);
  if (!out || !out->is_image()) return CL_INVALID_MEM_OBJECT;
  if (out->context != q->context) return CL_INVALID_CONTEXT;
  if (!origin || !region) return CL_INVALID_VALUE;
  size_t ext[3];
  image_extent(out->desc, ext);
  for (int i = 0; i < 3; ++i)
    if (region[i] == 0 || origin[i] > ext[i] || region[i] > ext[i] - origin[i])
      return CL_INVALID_VALUE;
  return CL_SUCCESS;
}

size_t region_bytes(const _cl_mem* m, const size_t* region) {
  return m->element_size * region[0] * region[1] * region[2];
}

void set3(size_t out[3], const size_t* in) {
  for (int i = 0; i < 3; ++i) out[i] = in[i];
}

cl_int rw_image(api_call& c, bool write, cl_command_queue h, cl_mem img, cl_bool blocking,
                const size_t* origin, const size_t* region, size_t row_pitch, size_t slice_pitch,
                const void* ptr, cl_uint n, const cl_event* wait, cl_event* out) {
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  _cl_mem* m;
  if ((s = check_image(q, img, origin, region, m))) return c.ret(s);
  c.handle("mem", m);
  if (!ptr) return c.ret(CL_INVALID_VALUE);
  // The host's pitches: 0 means tight; a given one at least the tight one (OpenCL 3.0).
  const size_t row = m->element_size * region[0];
  if (row_pitch != 0 && row_pitch < row) return c.ret(CL_INVALID_VALUE);
  const size_t rows = row_pitch ? row_pitch : row;
  const bool has_slices = region[2] > 1 || m->desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  const size_t slice_rows = m->desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1 : region[1];
  if (slice_pitch != 0 && has_slices && slice_pitch < rows * slice_rows)
    return c.ret(CL_INVALID_VALUE);
  if (host_access_refused(m->flags, write)) return c.ret(CL_INVALID_OPERATION);
  if ((s = rt().use_mem(m, q))) return c.ret(s);
  _cl_event* ev = write ? rt().new_command(q, CL_COMMAND_WRITE_IMAGE, "write_image",
                                           entry_point::clEnqueueWriteImage, n, wait)
                        : rt().new_command(q, CL_COMMAND_READ_IMAGE, "read_image",
                                           entry_point::clEnqueueReadImage, n, wait);
  add_mem(ev, m);
  ev->host = const_cast<void*>(ptr);
  set3(ev->region, region);
  set3(write ? ev->rect_dst.origin : ev->rect_src.origin, origin);
  ev->rect_src.row_pitch = row_pitch;
  ev->rect_src.slice_pitch = slice_pitch;
  ev->bytes = region_bytes(m, region);
  c.arg("size", ev->bytes);
  return c.ret(finish_command(c, ev, out, blocking));
}

cl_int CL_API_CALL EnqueueReadImage(cl_command_queue q, cl_mem img, cl_bool blocking,
                                    const size_t* origin, const size_t* region, size_t row_pitch,
                                    size_t slice_pitch, void* ptr, cl_uint n, const cl_event* wait,
                                    cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueReadImage);
  return rw_image(c, false, q, img, blocking, origin, region, row_pitch, slice_pitch, ptr, n, wait,
                  out);
}

cl_int CL_API_CALL EnqueueWriteImage(cl_command_queue q, cl_mem img, cl_bool blocking,
                                     const size_t* origin, const size_t* region, size_t row_pitch,
                                     size_t slice_pitch, const void* ptr, cl_uint n,
                                     const cl_event* wait, cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueWriteImage);
  return rw_image(c, true, q, img, blocking, origin, region, row_pitch, slice_pitch, ptr, n, wait,
                  out);
}

bool same_format(const _cl_mem* a, const _cl_mem* b) {
  return a->format.image_channel_order == b->format.image_channel_order &&
         a->format.image_channel_data_type == b->format.image_channel_data_type;
}

// Two regions of one image overlap when they overlap on every axis.
bool overlap(const size_t* a, const size_t* b, const size_t* region) {
  for (int i = 0; i < 3; ++i)
    if (a[i] >= b[i] + region[i] || b[i] >= a[i] + region[i]) return false;
  return true;
}

cl_int CL_API_CALL EnqueueCopyImage(cl_command_queue h, cl_mem src, cl_mem dst,
                                    const size_t* src_origin, const size_t* dst_origin,
                                    const size_t* region, cl_uint n, const cl_event* wait,
                                    cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueCopyImage);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  _cl_mem *ms, *md;
  if ((s = check_image(q, src, src_origin, region, ms)) ||
      (s = check_image(q, dst, dst_origin, region, md)))
    return c.ret(s);
  if (!same_format(ms, md)) return c.ret(CL_IMAGE_FORMAT_MISMATCH);
  if (ms == md && overlap(src_origin, dst_origin, region)) return c.ret(CL_MEM_COPY_OVERLAP);
  if ((s = rt().use_mems(ms, md, q))) return c.ret(s);
  _cl_event* ev = rt().new_command(q, CL_COMMAND_COPY_IMAGE, "copy_image",
                                   entry_point::clEnqueueCopyImage, n, wait);
  add_mem(ev, ms);
  add_mem(ev, md);
  set3(ev->region, region);
  set3(ev->rect_src.origin, src_origin);
  set3(ev->rect_dst.origin, dst_origin);
  ev->bytes = region_bytes(ms, region);
  return c.ret(finish_command(c, ev, out, false));
}

cl_int CL_API_CALL EnqueueFillImage(cl_command_queue h, cl_mem img, const void* color,
                                    const size_t* origin, const size_t* region, cl_uint n,
                                    const cl_event* wait, cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueFillImage);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  _cl_mem* m;
  if ((s = check_image(q, img, origin, region, m))) return c.ret(s);
  if (!color) return c.ret(CL_INVALID_VALUE);
  if ((s = rt().use_mem(m, q))) return c.ret(s);
  _cl_event* ev = rt().new_command(q, CL_COMMAND_FILL_IMAGE, "fill_image",
                                   entry_point::clEnqueueFillImage, n, wait);
  add_mem(ev, m);
  // The fill color: four 32-bit components (float, int or uint as the format's type says).
  ev->pattern.assign(static_cast<const unsigned char*>(color),
                     static_cast<const unsigned char*>(color) + 16);
  set3(ev->region, region);
  set3(ev->rect_dst.origin, origin);
  ev->bytes = region_bytes(m, region);
  return c.ret(finish_command(c, ev, out, false));
}

cl_int CL_API_CALL EnqueueCopyImageToBuffer(cl_command_queue h, cl_mem src, cl_mem dst,
                                            const size_t* src_origin, const size_t* region,
                                            size_t dst_offset, cl_uint n, const cl_event* wait,
                                            cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueCopyImageToBuffer);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  _cl_mem *ms, *md;
  if ((s = check_image(q, src, src_origin, region, ms))) return c.ret(s);
  if ((s = check_mem(q, dst, dst_offset, region_bytes(ms, region), md))) return c.ret(s);
  if ((s = rt().use_mems(ms, md, q))) return c.ret(s);
  _cl_event* ev = rt().new_command(q, CL_COMMAND_COPY_IMAGE_TO_BUFFER, "copy_image_to_buffer",
                                   entry_point::clEnqueueCopyImageToBuffer, n, wait);
  add_mem(ev, ms);
  add_mem(ev, md);
  set3(ev->region, region);
  set3(ev->rect_src.origin, src_origin);
  ev->offset = dst_offset;
  ev->bytes = region_bytes(ms, region);
  return c.ret(finish_command(c, ev, out, false));
}

cl_int CL_API_CALL EnqueueCopyBufferToImage(cl_command_queue h, cl_mem src, cl_mem dst,
                                            size_t src_offset, const size_t* dst_origin,
                                            const size_t* region, cl_uint n, const cl_event* wait,
                                            cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueCopyBufferToImage);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  _cl_mem *ms, *md;
  if ((s = check_image(q, dst, dst_origin, region, md))) return c.ret(s);
  if ((s = check_mem(q, src, src_offset, region_bytes(md, region), ms))) return c.ret(s);
  if ((s = rt().use_mems(ms, md, q))) return c.ret(s);
  _cl_event* ev = rt().new_command(q, CL_COMMAND_COPY_BUFFER_TO_IMAGE, "copy_buffer_to_image",
                                   entry_point::clEnqueueCopyBufferToImage, n, wait);
  add_mem(ev, ms);
  add_mem(ev, md);
  set3(ev->region, region);
  set3(ev->rect_dst.origin, dst_origin);
  ev->offset = src_offset;
  ev->bytes = region_bytes(md, region);
  return c.ret(finish_command(c, ev, out, false));
}

// The host gets its own tightly pitched copy of the region, read from POCL when the map executes
// and written back at the unmap of a write mapping (maps.cc), as buffers' maps in backing mode.
void* CL_API_CALL EnqueueMapImage(cl_command_queue h, cl_mem img, cl_bool blocking,
                                  cl_map_flags flags, const size_t* origin, const size_t* region,
                                  size_t* row_pitch, size_t* slice_pitch, cl_uint n,
                                  const cl_event* wait, cl_event* out, cl_int* err) {
  api_call c(rt(), entry_point::clEnqueueMapImage);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.fail<void*>(err, s);
  _cl_mem* m;
  if ((s = check_image(q, img, origin, region, m))) return c.fail<void*>(err, s);
  c.handle("mem", m);
  if (!row_pitch) return c.fail<void*>(err, CL_INVALID_VALUE);
  const cl_mem_object_type t = m->desc.image_type;
  const bool sliced = t == CL_MEM_OBJECT_IMAGE3D || t == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                      t == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  if (sliced && !slice_pitch) return c.fail<void*>(err, CL_INVALID_VALUE);
  if ((s = check_map_flags(m->flags, flags))) return c.fail<void*>(err, s);
  if ((s = rt().use_mem(m, q))) return c.fail<void*>(err, s);
  // A copy of its own has tight pitches; an image made with CL_MEM_USE_HOST_PTR (or on a buffer
  // made with it) is mapped in place, with the pitches of that memory (OpenCL 3.0: the pointer is
  // derived from host_ptr).
  size_t row = m->element_size * region[0];
  size_t slice = t == CL_MEM_OBJECT_IMAGE1D_ARRAY ? row : row * region[1];
  unsigned char* at = mock_runtime::use_host_ptr_at(m, 0);
  if (at) {
    row = m->desc.image_row_pitch ? m->desc.image_row_pitch : m->element_size * m->desc.image_width;
    slice = m->desc.image_slice_pitch          ? m->desc.image_slice_pitch
            : t == CL_MEM_OBJECT_IMAGE1D_ARRAY ? row
                                               : row * m->desc.image_height;
    at += origin[0] * m->element_size + (t == CL_MEM_OBJECT_IMAGE1D_ARRAY
                                             ? origin[1] * slice
                                             : origin[1] * row + origin[2] * slice);
  }
  void* p = rt().map_copy(m, flags, 0, region_bytes(m, region), at);
  if (!p) return c.fail<void*>(err, CL_OUT_OF_HOST_MEMORY);
  host_mapping& mp = m->maps.back();
  mp.image = true;
  set3(mp.origin, origin);
  set3(mp.region, region);
  mp.row_pitch = row;
  mp.slice_pitch = sliced ? slice : 0;
  *row_pitch = row;
  if (slice_pitch) *slice_pitch = sliced ? slice : 0;
  _cl_event* ev = rt().new_command(q, CL_COMMAND_MAP_IMAGE, "map_image",
                                   entry_point::clEnqueueMapImage, n, wait);
  add_mem(ev, m);
  ev->host = p;
  ev->bytes = region_bytes(m, region);
  ++m->map_count;
  s = finish_command(c, ev, out, blocking);
  if (err) *err = s;
  c.ret(s);
  if (s != CL_SUCCESS) {  // The caller has no pointer to unmap.
    --m->map_count;
    rt().cancel_map(m, p);
  }
  return s == CL_SUCCESS ? p : nullptr;
}

}  // namespace

void fill_image_enqueue(cl_icd_dispatch& d) {
  d.clEnqueueReadImage = EnqueueReadImage;
  d.clEnqueueWriteImage = EnqueueWriteImage;
  d.clEnqueueCopyImage = EnqueueCopyImage;
  d.clEnqueueFillImage = EnqueueFillImage;
  d.clEnqueueCopyImageToBuffer = EnqueueCopyImageToBuffer;
  d.clEnqueueCopyBufferToImage = EnqueueCopyBufferToImage;
  d.clEnqueueMapImage = EnqueueMapImage;
}

}  // namespace mockcl
