// Images and samplers. They exist only on a backing device that has them (MOCKCL_BACKING=pocl and
// POCL's CL_DEVICE_IMAGE_SUPPORT, language.h: `images`): POCL holds an image's texels and samples
// them, while mockcl validates, charges each image to the device model like a buffer of
// width * height * depth * array size * element size bytes (at creation, or at first use on a
// deferred device), injects faults, orders the commands in its scheduler and keeps the object
// graph (an image holds its context, an image on a buffer that buffer, a sampler its context).
// Without images every entry point here answers CL_INVALID_OPERATION (no image formats).
#include <cstring>
#include <vector>

#include "mockcl/api/mem_flags.h"
#include "mockcl/api/retain_release.h"
#include "mockcl/runtime/runtime.h"

namespace mockcl {
namespace {

bool images_on() { return rt().pocl && device_language().images; }

}  // namespace

void image_extent(const cl_image_desc& d, size_t out[3]) {
  out[0] = d.image_width;
  out[1] = out[2] = 1;
  switch (d.image_type) {
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
      out[1] = d.image_array_size;
      break;
    case CL_MEM_OBJECT_IMAGE2D:
      out[1] = d.image_height;
      break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
      out[1] = d.image_height;
      out[2] = d.image_array_size;
      break;
    case CL_MEM_OBJECT_IMAGE3D:
      out[1] = d.image_height;
      out[2] = d.image_depth;
      break;
    default:
      break;
  }
}

namespace {

// What POCL would let through or answer with a buffer's status: an unknown type, or an axis of
// the type with no extent (OpenCL 3.0: CL_INVALID_IMAGE_DESCRIPTOR).
cl_int check_desc(const cl_image_desc& d) {
  switch (d.image_type) {
    case CL_MEM_OBJECT_IMAGE1D:
    case CL_MEM_OBJECT_IMAGE1D_BUFFER:
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
    case CL_MEM_OBJECT_IMAGE2D:
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
    case CL_MEM_OBJECT_IMAGE3D:
      break;
    default:
      return CL_INVALID_IMAGE_DESCRIPTOR;
  }
  size_t ext[3];
  image_extent(d, ext);
  return ext[0] && ext[1] && ext[2] ? CL_SUCCESS : CL_INVALID_IMAGE_DESCRIPTOR;
}

// A sampler's properties (OpenCL 3.0): each key at most once, each value one the key allows.
cl_int check_sampler_properties(const cl_sampler_properties* p) {
  bool seen[3] = {};
  for (; p && *p; p += 2) {
    const cl_sampler_properties v = p[1];
    int key;
    bool ok;
    switch (p[0]) {
      case CL_SAMPLER_NORMALIZED_COORDS:
        key = 0;
        ok = v == CL_TRUE || v == CL_FALSE;
        break;
      case CL_SAMPLER_ADDRESSING_MODE:
        key = 1;
        ok = v == CL_ADDRESS_NONE || v == CL_ADDRESS_CLAMP_TO_EDGE || v == CL_ADDRESS_CLAMP ||
             v == CL_ADDRESS_REPEAT || v == CL_ADDRESS_MIRRORED_REPEAT;
        break;
      case CL_SAMPLER_FILTER_MODE:
        key = 2;
        ok = v == CL_FILTER_NEAREST || v == CL_FILTER_LINEAR;
        break;
      default:
        return CL_INVALID_VALUE;
    }
    if (!ok || seen[key]) return CL_INVALID_VALUE;
    seen[key] = true;
  }
  return CL_SUCCESS;
}

// The backing device's limits for the type (OpenCL 3.0: CL_INVALID_IMAGE_SIZE beyond them; POCL
// would answer CL_INVALID_OPERATION).
cl_int check_limits(const cl_image_desc& d) {
  const pocl_library& p = *rt().pocl;
  auto limit = [&](cl_device_info param) {
    size_t v = 0;
    return p.d->clGetDeviceInfo(p.device, param, sizeof v, &v, nullptr) == CL_SUCCESS ? v : 0;
  };
  const bool three = d.image_type == CL_MEM_OBJECT_IMAGE3D;
  const bool array =
      d.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY || d.image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY;
  size_t max[3] = {limit(three ? CL_DEVICE_IMAGE3D_MAX_WIDTH : CL_DEVICE_IMAGE2D_MAX_WIDTH),
                   limit(three ? CL_DEVICE_IMAGE3D_MAX_HEIGHT : CL_DEVICE_IMAGE2D_MAX_HEIGHT),
                   three ? limit(CL_DEVICE_IMAGE3D_MAX_DEPTH) : 1};
  if (d.image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER) max[0] = limit(CL_DEVICE_IMAGE_MAX_BUFFER_SIZE);
  if (d.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY) max[1] = limit(CL_DEVICE_IMAGE_MAX_ARRAY_SIZE);
  if (d.image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY) max[2] = limit(CL_DEVICE_IMAGE_MAX_ARRAY_SIZE);
  if (!array && !three && d.image_type != CL_MEM_OBJECT_IMAGE2D) max[1] = 1;
  size_t ext[3];
  image_extent(d, ext);
  for (int i = 0; i < 3; ++i)
    if (ext[i] > max[i]) return CL_INVALID_IMAGE_SIZE;
  return CL_SUCCESS;
}

// OpenCL's channel orders and types (CL_INVALID_IMAGE_FORMAT_DESCRIPTOR otherwise), and among
// them those POCL supports for the type and flags (CL_IMAGE_FORMAT_NOT_SUPPORTED otherwise, where
// POCL itself would answer CL_INVALID_OPERATION).
cl_int check_format(cl_context pc, cl_mem_flags flags, cl_mem_object_type type,
                    const cl_image_format& f) {
  if (f.image_channel_order < CL_R || f.image_channel_order > CL_ABGR ||
      f.image_channel_data_type < CL_SNORM_INT8 ||
      f.image_channel_data_type > CL_UNORM_INT_101010_2)
    return CL_INVALID_IMAGE_FORMAT_DESCRIPTOR;
  const cl_icd_dispatch& d = *rt().pocl->d;
  // Only the access bits: the host-pointer flags do not change what POCL supports.
  const cl_mem_flags given = flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY);
  const cl_mem_flags access = given ? given : CL_MEM_READ_WRITE;  // None given: read-write.
  cl_uint n = 0;
  if (d.clGetSupportedImageFormats(pc, access, type, 0, nullptr, &n) != CL_SUCCESS)
    return CL_SUCCESS;
  std::vector<cl_image_format> all(n);
  if (n == 0 ||
      d.clGetSupportedImageFormats(pc, access, type, n, all.data(), nullptr) != CL_SUCCESS)
    return CL_SUCCESS;  // POCL's creation decides.
  for (const cl_image_format& g : all)
    if (g.image_channel_order == f.image_channel_order &&
        g.image_channel_data_type == f.image_channel_data_type)
      return CL_SUCCESS;
  return CL_IMAGE_FORMAT_NOT_SUPPORTED;
}

_cl_mem* image(cl_mem h) {
  _cl_mem* m = rt().mem(h);
  return m && m->is_image() ? m : nullptr;
}

cl_mem create_image(api_call& c, cl_context h, cl_mem_flags flags, const cl_image_format* format,
                    const cl_image_desc* desc, void* host_ptr, cl_int* err) {
  mock_runtime& r = rt();
  if (cl_int f = c.fault()) return c.fail<cl_mem>(err, f);
  _cl_context* ctx = r.context(h);
  if (!ctx) return c.fail<cl_mem>(err, CL_INVALID_CONTEXT);
  if (!images_on()) return c.fail<cl_mem>(err, CL_INVALID_OPERATION);
  if (!format) return c.fail<cl_mem>(err, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
  if (!desc) return c.fail<cl_mem>(err, CL_INVALID_IMAGE_DESCRIPTOR);
  if (cl_int bad = check_desc(*desc)) return c.fail<cl_mem>(err, bad);
  if (cl_int big = check_limits(*desc)) return c.fail<cl_mem>(err, big);
  cl_int fs;
  cl_context pc = r.pocl_context(ctx, fs);
  if (!pc) return c.fail<cl_mem>(err, fs);
  _cl_mem* buffer = nullptr;
  cl_mem_flags own_flags = flags;
  if (desc->mem_object) {
    buffer = r.mem(desc->mem_object);
    if (!buffer || buffer->is_image() || buffer->context != ctx)
      return c.fail<cl_mem>(err, CL_INVALID_IMAGE_DESCRIPTOR);
    // An image on a buffer takes the access bits it does not give from the buffer, and its
    // host-pointer bits (OpenCL 3.0, clCreateImage).
    if (cl_int bad = derived_mem_flags(buffer->flags, flags, own_flags))
      return c.fail<cl_mem>(err, bad);
  }
  if (cl_int bad = check_format(pc, own_flags, desc->image_type, *format))
    return c.fail<cl_mem>(err, bad);
  cl_int s = CL_SUCCESS;
  cl_mem pm = r.pocl_create_image(ctx, flags, format, desc, buffer, host_ptr, s);
  if (!pm) return c.fail<cl_mem>(err, s);
  size_t element = 0;
  if ((s = r.pocl->d->clGetImageInfo(pm, CL_IMAGE_ELEMENT_SIZE, sizeof element, &element,
                                     nullptr))) {
    r.pocl->d->clReleaseMemObject(pm);
    return c.fail<cl_mem>(err, s);
  }
  size_t ext[3];
  image_extent(*desc, ext);
  const uint64_t bytes = uint64_t(element) * ext[0] * ext[1] * ext[2];
  // Charged as a buffer of its size would be; an image on a buffer shares that buffer's charge.
  const int dev = ctx->device0;
  const bool pinned = !buffer && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_USE_HOST_PTR));
  const bool charge_now = !buffer && (pinned || ctx->charge_at_create);
  clpool::device_model::placement where;
  if (charge_now && (s = r.charge(dev, ctx, bytes, pinned, where))) {
    r.pocl->d->clReleaseMemObject(pm);
    return c.fail<cl_mem>(err, s);
  }
  _cl_mem* m = r.objects.create<_cl_mem>();
  r.init_buffer(m, ctx, own_flags, bytes, host_ptr, charge_now ? dev : -1, pinned);
  m->where = where;
  m->pocl_mem = pm;
  m->image_for = m->id;
  m->format = *format;
  m->desc = *desc;
  m->element_size = element;
  if (buffer) {  // Its bytes are the buffer's: the buffer is its root (charged at its first use).
    m->parent = buffer;
    r.hold(buffer);
  }
  c.handle("ret", m);
  c.arg("size", bytes);
  if (err) *err = CL_SUCCESS;
  c.ret(CL_SUCCESS);
  return m;
}

cl_mem CL_API_CALL CreateImage(cl_context ctx, cl_mem_flags flags, const cl_image_format* format,
                               const cl_image_desc* desc, void* host_ptr, cl_int* err) {
  api_call c(rt(), entry_point::clCreateImage);
  return create_image(c, ctx, flags, format, desc, host_ptr, err);
}

cl_mem CL_API_CALL CreateImageWithProperties(cl_context ctx, const cl_mem_properties* props,
                                             cl_mem_flags flags, const cl_image_format* format,
                                             const cl_image_desc* desc, void* host_ptr,
                                             cl_int* err) {
  api_call c(rt(), entry_point::clCreateImageWithProperties);
  if (props && props[0] != 0) {  // No image property is supported (as for buffers).
    if (err) *err = CL_INVALID_PROPERTY;
    return c.ret(CL_INVALID_PROPERTY), nullptr;
  }
  cl_mem m = create_image(c, ctx, flags, format, desc, host_ptr, err);
  if (m && props) m->properties_given_for = m->id;  // CL_MEM_PROPERTIES returns the list given.
  return m;
}

cl_mem CL_API_CALL CreateImage2D(cl_context ctx, cl_mem_flags flags, const cl_image_format* format,
                                 size_t w, size_t h, size_t pitch, void* host_ptr, cl_int* err) {
  api_call c(rt(), entry_point::clCreateImage2D);
  cl_image_desc d{};
  d.image_type = CL_MEM_OBJECT_IMAGE2D;
  d.image_width = w;
  d.image_height = h;
  d.image_row_pitch = pitch;
  return create_image(c, ctx, flags, format, &d, host_ptr, err);
}

cl_mem CL_API_CALL CreateImage3D(cl_context ctx, cl_mem_flags flags, const cl_image_format* format,
                                 size_t w, size_t h, size_t depth, size_t row_pitch,
                                 size_t slice_pitch, void* host_ptr, cl_int* err) {
  api_call c(rt(), entry_point::clCreateImage3D);
  cl_image_desc d{};
  d.image_type = CL_MEM_OBJECT_IMAGE3D;
  d.image_width = w;
  d.image_height = h;
  d.image_depth = depth;
  d.image_row_pitch = row_pitch;
  d.image_slice_pitch = slice_pitch;
  return create_image(c, ctx, flags, format, &d, host_ptr, err);
}

cl_int CL_API_CALL GetSupportedImageFormats(cl_context h, cl_mem_flags flags,
                                            cl_mem_object_type type, cl_uint n,
                                            cl_image_format* formats, cl_uint* n_ret) {
  api_call c(rt(), entry_point::clGetSupportedImageFormats);
  _cl_context* ctx = rt().context(h);
  if (!ctx) return c.ret(CL_INVALID_CONTEXT);
  // OpenCL 3.0: num_entries 0 with a list is invalid; a count with no list only asks the number.
  if (n == 0 && formats) return c.ret(CL_INVALID_VALUE);
  if (!formats) n = 0;
  if (!images_on()) {
    if (n_ret) *n_ret = 0;  // No image support.
    return c.ret(CL_SUCCESS);
  }
  cl_int s;
  cl_context pc = rt().pocl_context(ctx, s);
  if (!pc) return c.ret(s);
  return c.ret(rt().pocl->d->clGetSupportedImageFormats(pc, flags, type, n, formats, n_ret));
}

cl_int CL_API_CALL GetImageInfo(cl_mem h, cl_image_info param, size_t size, void* value,
                                size_t* size_ret) {
  api_call c(rt(), entry_point::clGetImageInfo);
  _cl_mem* m = image(h);
  if (!m) return c.ret(CL_INVALID_MEM_OBJECT);
  if (param == CL_IMAGE_BUFFER) {  // The mock's handle, not POCL's.
    cl_mem b = m->parent;
    return c.ret(set_info_v(size, value, size_ret, b));
  }
  return c.ret(rt().pocl->d->clGetImageInfo(m->pocl_mem, param, size, value, size_ret));
}

// ---- Samplers ----

cl_sampler create_sampler(api_call& c, cl_context h, const cl_sampler_properties* props,
                          cl_int* err) {
  mock_runtime& r = rt();
  if (cl_int f = c.fault()) return c.fail<cl_sampler>(err, f);
  _cl_context* ctx = r.context(h);
  if (!ctx) return c.fail<cl_sampler>(err, CL_INVALID_CONTEXT);
  if (!images_on()) return c.fail<cl_sampler>(err, CL_INVALID_OPERATION);
  if (cl_int bad = check_sampler_properties(props)) return c.fail<cl_sampler>(err, bad);
  cl_int s = CL_SUCCESS;
  cl_sampler ps = r.pocl_create_sampler(ctx, props, s);
  if (!ps) return c.fail<cl_sampler>(err, s);
  _cl_sampler* sm = r.objects.create<_cl_sampler>();
  sm->context = ctx;
  sm->pocl_sampler = ps;
  sm->properties.clear();
  for (const cl_sampler_properties* p = props; p && *p; p += 2)
    sm->properties.insert(sm->properties.end(), p, p + 2);
  if (props) sm->properties.push_back(0);
  r.hold(ctx);
  c.handle("ret", sm);
  if (err) *err = CL_SUCCESS;
  c.ret(CL_SUCCESS);
  return sm;
}

cl_sampler CL_API_CALL CreateSamplerWithProperties(cl_context ctx,
                                                   const cl_sampler_properties* props,
                                                   cl_int* err) {
  api_call c(rt(), entry_point::clCreateSamplerWithProperties);
  return create_sampler(c, ctx, props, err);
}

cl_sampler CL_API_CALL CreateSampler(cl_context ctx, cl_bool normalized,
                                     cl_addressing_mode addressing, cl_filter_mode filter,
                                     cl_int* err) {
  api_call c(rt(), entry_point::clCreateSampler);
  const cl_sampler_properties props[] = {CL_SAMPLER_NORMALIZED_COORDS,
                                         normalized,
                                         CL_SAMPLER_ADDRESSING_MODE,
                                         addressing,
                                         CL_SAMPLER_FILTER_MODE,
                                         filter,
                                         0};
  cl_sampler s = create_sampler(c, ctx, props, err);
  if (s) s->properties.clear();  // Made by clCreateSampler: CL_SAMPLER_PROPERTIES is empty.
  return s;
}

cl_int CL_API_CALL GetSamplerInfo(cl_sampler h, cl_sampler_info param, size_t size, void* value,
                                  size_t* size_ret) {
  api_call c(rt(), entry_point::clGetSamplerInfo);
  _cl_sampler* s = rt().sampler(h);
  if (!s) return c.ret(CL_INVALID_SAMPLER);
  switch (param) {
    case CL_SAMPLER_REFERENCE_COUNT:
      return c.ret(set_info_v(size, value, size_ret, cl_uint{s->refs + s->holds}));
    case CL_SAMPLER_CONTEXT:
      return c.ret(set_info_v(size, value, size_ret, cl_context{s->context}));
    case CL_SAMPLER_PROPERTIES:
      return c.ret(set_info(size, value, size_ret,
                            s->properties.empty() ? nullptr : s->properties.data(),
                            s->properties.size() * sizeof(cl_sampler_properties)));
    default:
      return c.ret(rt().pocl->d->clGetSamplerInfo(s->pocl_sampler, param, size, value, size_ret));
  }
}

}  // namespace

void fill_image(cl_icd_dispatch& d) {
  d.clCreateImage = CreateImage;
  d.clCreateImageWithProperties = CreateImageWithProperties;
  d.clCreateImage2D = CreateImage2D;
  d.clCreateImage3D = CreateImage3D;
  d.clGetSupportedImageFormats = GetSupportedImageFormats;
  d.clGetImageInfo = GetImageInfo;
  d.clCreateSampler = CreateSampler;
  d.clCreateSamplerWithProperties = CreateSamplerWithProperties;
  d.clRetainSampler = retain<_cl_sampler>;
  d.clReleaseSampler = release<_cl_sampler>;
  d.clGetSamplerInfo = GetSamplerInfo;
}

}  // namespace mockcl
