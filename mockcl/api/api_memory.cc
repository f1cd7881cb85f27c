// Buffers and sub-buffers: creation with enforced capacity and the three allocation
// semantics, the host-pinned budget, info, destructor callbacks and release (the bytes come
// back when the last command using the buffer completes). Images: api_image.cc.
#include <cstring>

#include "mockcl/api/express_paths.h"
#include "mockcl/api/mem_flags.h"
#include "mockcl/api/retain_release.h"
#include "mockcl/runtime/runtime.h"

namespace mockcl {
namespace {

bool multiple_bits(cl_mem_flags f) { return f & (f - 1); }

[[gnu::always_inline]] inline cl_int check_flags(cl_mem_flags flags, void* host_ptr) {
  // The common case first: access bits only, no host pointer.
  if (!(flags & ~kMemAccessFlags) && !host_ptr) [[likely]]
    return multiple_bits(flags) ? CL_INVALID_VALUE : CL_SUCCESS;
  if (flags & ~kKnownMemFlags) return CL_INVALID_VALUE;
  if (multiple_bits(flags & kMemAccessFlags) || multiple_bits(flags & kHostAccessFlags))
    return CL_INVALID_VALUE;
  if ((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)))
    return CL_INVALID_VALUE;
  bool wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  if (wants_ptr != (host_ptr != nullptr)) return CL_INVALID_HOST_PTR;
  return CL_SUCCESS;
}

// kHooks: a fault rule or the call log is installed (mock_runtime::hooks()). Without them the fault
// check and the logged arguments compile away, which the create+release benchmark relies on.
template <bool kHooks>
[[gnu::always_inline]] inline cl_mem create_buffer(api_call& c, cl_context h, cl_mem_flags flags,
                                                   size_t size, void* host_ptr, cl_int* err) {
  mock_runtime& rt = c.runtime();  // One load of the singleton on the hot path.
  if constexpr (kHooks) {
    if (cl_int f = c.fault()) return c.fail<cl_mem>(err, f);
    c.arg("size", size);
    c.arg("flags", flags);
  }
  _cl_context* ctx = rt.context(h);
  if (!ctx) return c.fail<cl_mem>(err, CL_INVALID_CONTEXT);
  if (cl_int s = check_flags(flags, host_ptr)) return c.fail<cl_mem>(err, s);
  // max_alloc: the smallest over the context's devices (cached at context creation).
  if (size == 0 || size > ctx->max_alloc) return c.fail<cl_mem>(err, CL_INVALID_BUFFER_SIZE);
  int dev = ctx->device0;
  bool pinned = flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_USE_HOST_PTR);
  bool charge_now = pinned || ctx->charge_at_create;
  clpool::device_model::placement where;
  if (pinned) [[unlikely]] {
    if (cl_int s = rt.charge_to<true>(dev, ctx, size, where)) return c.fail<cl_mem>(err, s);
  } else if (charge_now) {
    if (cl_int s = rt.charge_to<false>(dev, ctx, size, where)) return c.fail<cl_mem>(err, s);
  }
  _cl_mem* m = rt.objects.create<_cl_mem>();
  rt.init_buffer(m, ctx, flags, size, host_ptr, charge_now ? dev : -1, pinned);
  m->where = where;
  if ((flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR)) && rt.pocl) [[unlikely]] {
    if (cl_int s =
            rt.pocl_init_buffer(m, host_ptr)) {  // Backing mode: POCL's twin from the host bytes.
      rt.release(m, CL_INVALID_MEM_OBJECT);
      return c.fail<cl_mem>(err, s);
    }
  } else if (flags & CL_MEM_COPY_HOST_PTR) [[unlikely]] {
    unsigned char* b = rt.bytes_of(m);
    if (!b) {
      rt.release(m, CL_INVALID_MEM_OBJECT);
      return c.fail<cl_mem>(err, CL_OUT_OF_HOST_MEMORY);
    }
    std::memcpy(b, host_ptr, size);
  }
  if constexpr (kHooks) c.handle("ret", m);
  if (err) *err = CL_SUCCESS;
  c.ret(CL_SUCCESS);
  return m;
}

[[gnu::noinline]] cl_mem create_buffer_hooked(api_call& c, cl_context h, cl_mem_flags flags,
                                              size_t size, void* host_ptr, cl_int* err) {
  return create_buffer<true>(c, h, flags, size, host_ptr, err);
}

// The un-hooked path is inlined into each entry point (one call less per clCreateBuffer).
[[gnu::always_inline]] inline cl_mem create_buffer(api_call& c, cl_context h, cl_mem_flags flags,
                                                   size_t size, void* host_ptr, cl_int* err) {
  if (c.runtime().hooks()) [[unlikely]]
    return create_buffer_hooked(c, h, flags, size, host_ptr, err);
  return create_buffer<false>(c, h, flags, size, host_ptr, err);
}

[[gnu::noinline]] cl_mem create_buffer_general(cl_context ctx, cl_mem_flags flags, size_t size,
                                               void* host_ptr, cl_int* err) {
  api_call c(rt(), entry_point::clCreateBuffer);
  return create_buffer(c, ctx, flags, size, host_ptr, err);
}

// The express path (mock_runtime::create_buffer_express) or, when it declines, the general one as a
// tail call: the common case needs no stack frame.
cl_mem CL_API_CALL CreateBuffer(cl_context ctx, cl_mem_flags flags, size_t size, void* host_ptr,
                                cl_int* err) {
  if (mock_runtime* r = mock_runtime::get_if_ready()) [[likely]] {
    if (_cl_mem* m = r->create_buffer_express(ctx, flags, size, host_ptr)) [[likely]] {
      if (err) *err = CL_SUCCESS;
      return m;
    }
  }
  return create_buffer_general(ctx, flags, size, host_ptr, err);
}

cl_mem CL_API_CALL CreateBufferWithProperties(cl_context ctx, const cl_mem_properties* props,
                                              cl_mem_flags flags, size_t size, void* host_ptr,
                                              cl_int* err) {
  api_call c(rt(), entry_point::clCreateBufferWithProperties);
  if (props && props[0] != 0) {
    if (err) *err = CL_INVALID_PROPERTY;
    c.ret(CL_INVALID_PROPERTY);
    return nullptr;
  }
  cl_mem m = create_buffer(c, ctx, flags, size, host_ptr, err);
  if (m && props) m->properties_given_for = m->id;
  return m;
}

cl_mem CL_API_CALL CreateSubBuffer(cl_mem h, cl_mem_flags flags, cl_buffer_create_type type,
                                   const void* info, cl_int* err) {
  api_call c(rt(), entry_point::clCreateSubBuffer);
  if (cl_int f = c.fault()) return c.fail<cl_mem>(err, f);
  _cl_mem* parent = rt().mem(h);
  if (!parent || parent->parent || parent->is_image())
    return c.fail<cl_mem>(err, CL_INVALID_MEM_OBJECT);
  if (type != CL_BUFFER_CREATE_TYPE_REGION || !info) return c.fail<cl_mem>(err, CL_INVALID_VALUE);
  cl_mem_flags sub_flags = 0;
  if (cl_int s = derived_mem_flags(parent->flags, flags, sub_flags)) return c.fail<cl_mem>(err, s);
  const auto* region = static_cast<const cl_buffer_region*>(info);
  if (region->size == 0) return c.fail<cl_mem>(err, CL_INVALID_BUFFER_SIZE);
  if (region->origin > parent->size || region->size > parent->size - region->origin)
    return c.fail<cl_mem>(err, CL_INVALID_VALUE);
  if (region->origin % (kMemBaseAddrAlignBits / 8) != 0)
    return c.fail<cl_mem>(err, CL_MISALIGNED_SUB_BUFFER_OFFSET);
  _cl_mem* m = rt().objects.create<_cl_mem>();
  m->context = parent->context;
  m->flags = sub_flags;
  m->size = region->size;
  m->host_ptr = nullptr;
  m->parent = parent;
  m->offset = region->origin;
  m->device = -1;  // Never charged: it shares its parent's bytes.
  m->pinned = false;
  m->map_count = 0;
  m->shared_maps.clear();  // a reused slot keeps its fields (object_registry.h)
  rt().hold(parent);
  rt().hold(parent->context);
  c.arg("origin", region->origin);
  c.arg("size", region->size);
  c.handle("ret", m);
  if (err) *err = CL_SUCCESS;
  c.ret(CL_SUCCESS);
  return m;
}

[[gnu::noinline]] cl_int release_mem_general(cl_mem h) { return release<_cl_mem>(h); }

// The express path (mock_runtime::release_mem_express), else the general one as a tail call.
cl_int CL_API_CALL ReleaseMemObject(cl_mem h) {
  if (mock_runtime* r = mock_runtime::get_if_ready()) [[likely]] {
    if (r->release_mem_express(h)) [[likely]]
      return CL_SUCCESS;
  }
  return release_mem_general(h);
}

cl_int CL_API_CALL GetMemObjectInfo(cl_mem h, cl_mem_info param, size_t size, void* value,
                                    size_t* size_ret) {
  api_call c(rt(), entry_point::clGetMemObjectInfo);
  _cl_mem* m = rt().mem(h);
  if (!m) return c.ret(CL_INVALID_MEM_OBJECT);
  auto v = [&](auto x) { return c.ret(set_info_v(size, value, size_ret, x)); };
  switch (param) {
    case CL_MEM_TYPE:
      return v(cl_mem_object_type{m->is_image() ? m->desc.image_type : CL_MEM_OBJECT_BUFFER});
    case CL_MEM_FLAGS:
      return v(m->flags);
    case CL_MEM_SIZE:
      return v(m->size);
    case CL_MEM_HOST_PTR: {
      void* p = nullptr;
      if (m->parent && m->parent->host_ptr)
        p = static_cast<char*>(m->parent->host_ptr) + m->offset;
      else if (m->host_ptr)
        p = m->host_ptr;
      return v(p);
    }
    case CL_MEM_MAP_COUNT:
      return v(cl_uint{m->map_count});
    case CL_MEM_REFERENCE_COUNT:
      return v(cl_uint{m->refs + m->holds});
    case CL_MEM_CONTEXT:
      return v(m->context);
    case CL_MEM_ASSOCIATED_MEMOBJECT:
      return v(m->parent);
    case CL_MEM_OFFSET:
      return v(m->offset);
    case CL_MEM_USES_SVM_POINTER: {  // Made (or its buffer made) with CL_MEM_USE_HOST_PTR on an SVM
                                     // pointer.
      const unsigned char* p = mock_runtime::use_host_ptr_at(m, 0);
      const svm_allocation* a = p ? rt().find_svm(p) : nullptr;
      return v(static_cast<cl_bool>(a && !a->freed ? CL_TRUE : CL_FALSE));
    }
    case CL_MEM_PROPERTIES: {
      // Only an empty list is accepted at creation: {0} if one was given, else nothing.
      const cl_mem_properties empty = 0;
      const bool given = m->properties_given_for == m->id;
      return c.ret(
          set_info(size, value, size_ret, given ? &empty : nullptr, given ? sizeof empty : 0));
    }
    default:
      return c.ret(CL_INVALID_VALUE);
  }
}

cl_int CL_API_CALL SetMemObjectDestructorCallback(cl_mem h, void(CL_CALLBACK* fn)(cl_mem, void*),
                                                  void* data) {
  api_call c(rt(), entry_point::clSetMemObjectDestructorCallback);
  _cl_mem* m = rt().mem(h);
  if (!m) return c.ret(CL_INVALID_MEM_OBJECT);
  if (!fn) return c.ret(CL_INVALID_VALUE);
  m->destructors.push_back({fn, data});
  return c.ret(CL_SUCCESS);
}

// Pipes are not supported (CL_DEVICE_PIPE_SUPPORT is CL_FALSE, clCreatePipe answers
// CL_INVALID_OPERATION), so no mem object is a pipe.
cl_int CL_API_CALL GetPipeInfo(cl_mem h, cl_pipe_info, size_t, void*, size_t*) {
  api_call c(rt(), entry_point::clGetPipeInfo);
  rt().mem(h);  // A released handle is still reported as used after release.
  return c.ret(CL_INVALID_MEM_OBJECT);
}

}  // namespace

void fill_memory(cl_icd_dispatch& d) {
  d.clCreateBuffer = CreateBuffer;
  d.clCreateBufferWithProperties = CreateBufferWithProperties;
  d.clCreateSubBuffer = CreateSubBuffer;
  d.clRetainMemObject = retain<_cl_mem>;
  d.clReleaseMemObject = ReleaseMemObject;
  d.clGetMemObjectInfo = GetMemObjectInfo;
  d.clSetMemObjectDestructorCallback = SetMemObjectDestructorCallback;
  d.clGetPipeInfo = GetPipeInfo;
}

}  // namespace mockcl
