// The backing device's images and samplers (api_image.cc): their POCL twins, made at creation
// (an image's format and geometry are POCL's to validate, and its element size is POCL's answer),
// and the image commands POCL runs when mockcl's scheduler executes them. Members of mock_runtime;
// the lock is held, and POCL is waited for before returning, as for buffers (backing.cc).
#include "mockcl/api/mem_flags.h"
#include "mockcl/backing/backing.h"
#include "mockcl/runtime/runtime.h"

namespace mockcl {
namespace {

_cl_mem* root_of(_cl_mem* m) { return m->parent ? m->parent : m; }

// A buffer side of an image<->buffer copy: its root's twin and the offset in it.
cl_mem buffer_side(mock_runtime& rt, _cl_mem* m, size_t& offset, cl_int& err) {
  cl_mem pm = rt.pocl_buffer(root_of(m), err);
  if (m->parent) offset += m->offset;
  return pm;
}

}  // namespace

cl_mem mock_runtime::pocl_create_image(_cl_context* ctx, cl_mem_flags flags,
                                       const cl_image_format* format, const cl_image_desc* desc,
                                       _cl_mem* buffer, void* host_ptr, cl_int& err) {
  cl_context pc = pocl_context(ctx, err);
  if (!pc) return nullptr;
  cl_image_desc d = *desc;
  if (buffer) {  // An image on a buffer's bytes: POCL's on the buffer's twin.
    d.mem_object = pocl_buffer(buffer, err);
    if (!d.mem_object) return nullptr;
  }
  // Host access stays mockcl's business, as for buffers: POCL's twin lets mockcl read and write
  // it (a map for writing first reads the image; a host-write-only image must still be mapped).
  cl_mem pm = pocl->d->clCreateImage(pc, flags & ~kHostAccessFlags, format, &d, host_ptr, &err);
  if (!pm || buffer || (flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR))) return pm;
  // A never-written image reads as zeros, as a buffer does (POCL's fresh memory is not cleared);
  // zero bits are a zero color in every channel type.
  const cl_uint zero[4] = {0, 0, 0, 0};
  size_t ext[3], origin[3] = {0, 0, 0};
  image_extent(*desc, ext);
  err = pocl->d->clEnqueueFillImage(ctx->pocl_q, pm, zero, origin, ext, 0, nullptr, nullptr);
  if (err == CL_SUCCESS) err = pocl->d->clFinish(ctx->pocl_q);
  if (err != CL_SUCCESS) {
    pocl->d->clReleaseMemObject(pm);
    return nullptr;
  }
  return pm;
}

cl_sampler mock_runtime::pocl_create_sampler(_cl_context* ctx, const cl_sampler_properties* props,
                                             cl_int& err) {
  cl_context pc = pocl_context(ctx, err);
  if (!pc) return nullptr;
  return pocl->d->clCreateSamplerWithProperties(pc, props, &err);
}

cl_int mock_runtime::pocl_image_rw(_cl_mem* m, _cl_command_queue* q, bool write,
                                   const size_t origin[3], const size_t region[3], size_t row_pitch,
                                   size_t slice_pitch, void* host) {
  cl_int err;
  cl_command_queue pq = pocl_queue(q, err);
  if (!pq) return err;
  return write ? pocl->d->clEnqueueWriteImage(pq, m->pocl_mem, CL_TRUE, origin, region, row_pitch,
                                              slice_pitch, host, 0, nullptr, nullptr)
               : pocl->d->clEnqueueReadImage(pq, m->pocl_mem, CL_TRUE, origin, region, row_pitch,
                                             slice_pitch, host, 0, nullptr, nullptr);
}

bool mock_runtime::is_image_command(cl_command_type t) {
  switch (t) {
    case CL_COMMAND_READ_IMAGE:
    case CL_COMMAND_WRITE_IMAGE:
    case CL_COMMAND_COPY_IMAGE:
    case CL_COMMAND_FILL_IMAGE:
    case CL_COMMAND_COPY_IMAGE_TO_BUFFER:
    case CL_COMMAND_COPY_BUFFER_TO_IMAGE:
      return true;
    default:
      return false;
  }
}

// Origins: rect_src.origin (the image read from) and rect_dst.origin (the image written); the
// host's pitches in rect_src (read, write); a buffer side's offset in ev->offset.
cl_int mock_runtime::pocl_image_command(_cl_event* ev, cl_command_queue pq) {
  const cl_icd_dispatch& d = *pocl->d;
  _cl_mem* a = ev->mems[0];
  _cl_mem* b = ev->mems.size() > 1 ? ev->mems[1] : nullptr;
  cl_int err = CL_SUCCESS;
  size_t offset = ev->offset;
  switch (ev->command_type) {
    case CL_COMMAND_READ_IMAGE:
      return pocl_image_rw(a, ev->queue, false, ev->rect_src.origin, ev->region,
                           ev->rect_src.row_pitch, ev->rect_src.slice_pitch, ev->host);
    case CL_COMMAND_WRITE_IMAGE:
      return pocl_image_rw(a, ev->queue, true, ev->rect_dst.origin, ev->region,
                           ev->rect_src.row_pitch, ev->rect_src.slice_pitch, ev->host);
    case CL_COMMAND_COPY_IMAGE:
      err = d.clEnqueueCopyImage(pq, a->pocl_mem, b->pocl_mem, ev->rect_src.origin,
                                 ev->rect_dst.origin, ev->region, 0, nullptr, nullptr);
      break;
    case CL_COMMAND_FILL_IMAGE:
      err = d.clEnqueueFillImage(pq, a->pocl_mem, ev->pattern.data(), ev->rect_dst.origin,
                                 ev->region, 0, nullptr, nullptr);
      break;
    case CL_COMMAND_COPY_IMAGE_TO_BUFFER: {
      cl_mem pb = buffer_side(*this, b, offset, err);
      if (!pb) return err;
      err = d.clEnqueueCopyImageToBuffer(pq, a->pocl_mem, pb, ev->rect_src.origin, ev->region,
                                         offset, 0, nullptr, nullptr);
      break;
    }
    case CL_COMMAND_COPY_BUFFER_TO_IMAGE: {
      cl_mem pa = buffer_side(*this, a, offset, err);
      if (!pa) return err;
      err = d.clEnqueueCopyBufferToImage(pq, pa, b->pocl_mem, offset, ev->rect_dst.origin,
                                         ev->region, 0, nullptr, nullptr);
      break;
    }
    default:
      return CL_SUCCESS;
  }
  if (err == CL_SUCCESS) err = d.clFinish(pq);
  return err;
}

}  // namespace mockcl
