// Contexts: creation over one or more mock devices, info, and release with a leak report.
#include <algorithm>
#include <cstdint>

#include "mockcl/api/retain_release.h"
#include "mockcl/runtime/runtime.h"

namespace mockcl {
namespace {

// Validates a zero-terminated property list; copies it (terminator included) into `out`. A name
// given twice is CL_INVALID_PROPERTY (OpenCL 3.0, clCreateContext), as POCL answers.
cl_int check_properties(const cl_context_properties* props,
                        std::vector<cl_context_properties>& out) {
  out.clear();
  if (!props) return CL_SUCCESS;
  for (size_t i = 0; props[i] != 0; i += 2) {
    for (size_t j = 0; j < out.size(); j += 2)
      if (out[j] == props[i]) return CL_INVALID_PROPERTY;
    if (props[i] == CL_CONTEXT_PLATFORM) {
      if (reinterpret_cast<cl_platform_id>(props[i + 1]) != &rt().platform)
        return CL_INVALID_PLATFORM;
    } else if (props[i] != CL_CONTEXT_INTEROP_USER_SYNC) {
      return CL_INVALID_PROPERTY;
    }
    out.push_back(props[i]);
    out.push_back(props[i + 1]);
  }
  out.push_back(0);
  return CL_SUCCESS;
}

using context_notify_fn = void(CL_CALLBACK*)(const char*, const void*, size_t, void*);

cl_context make_context(api_call& c, const cl_context_properties* props,
                        std::vector<cl_device_id> devs, context_notify_fn notify, void* data,
                        cl_int* err) {
  if (!notify && data) return c.fail<cl_context>(err, CL_INVALID_VALUE);
  std::vector<cl_context_properties> p;
  if (cl_int s = check_properties(props, p)) return c.fail<cl_context>(err, s);
  rt().settle_backing();  // The first context decides MOCKCL_BACKING's default.
  // A device whose contexts cost memory (context_cost=) commits it now; a device without the room
  // refuses the context, as a real driver does.
  std::vector<_cl_context::device_charge> own;
  for (cl_device_id d : devs) {
    device_state& dev = rt().devices[d->index];
    if (dev.cfg.context_cost == 0) continue;
    _cl_context::device_charge charge{
        .device = d->index, .bytes = dev.cfg.context_cost, .where = {}};
    if (!dev.memory.try_commit(charge.bytes, charge.where)) {
      for (const auto& o : own) rt().devices[o.device].memory.release(o.where, o.bytes);
      return c.fail<cl_context>(err, CL_OUT_OF_RESOURCES);
    }
    own.push_back(charge);
  }
  _cl_context* ctx = rt().objects.create<_cl_context>();
  ctx->own_memory = std::move(own);
  ctx->device0 = devs[0]->index;
  ctx->charge_at_create = rt().devices[ctx->device0].cfg.semantics != alloc_semantics::deferred;
  ctx->max_alloc = UINT64_MAX;
  // A device whose profile does not enforce max_alloc (NVIDIA's) takes any size at creation.
  for (cl_device_id d : devs) {
    const device_config& cfg = rt().devices[d->index].cfg;
    if (cfg.model.max_alloc_enforced) ctx->max_alloc = std::min(ctx->max_alloc, cfg.max_alloc);
  }
  ctx->devices = std::move(devs);
  ctx->properties = std::move(p);
  ctx->outstanding = ctx->peak = 0;
  ctx->live_children = 0;
  ctx->notify = notify;
  ctx->notify_data = data;
  c.handle("ret", ctx);
  if (err) *err = CL_SUCCESS;
  c.ret(CL_SUCCESS);
  return ctx;
}

cl_context CL_API_CALL CreateContext(const cl_context_properties* props, cl_uint n,
                                     const cl_device_id* devices, context_notify_fn notify,
                                     void* data, cl_int* err) {
  api_call c(rt(), entry_point::clCreateContext);
  if (cl_int f = c.fault()) {
    if (err) *err = f;
    c.ret(f);
    return nullptr;
  }
  if (n == 0 || !devices) {
    if (err) *err = CL_INVALID_VALUE;
    c.ret(CL_INVALID_VALUE);
    return nullptr;
  }
  std::vector<cl_device_id> devs;
  for (cl_uint i = 0; i < n; ++i) {
    if (!rt().device(devices[i])) {
      if (err) *err = CL_INVALID_DEVICE;
      c.ret(CL_INVALID_DEVICE);
      return nullptr;
    }
    devs.push_back(devices[i]);
  }
  return make_context(c, props, std::move(devs), notify, data, err);
}

cl_context CL_API_CALL CreateContextFromType(const cl_context_properties* props,
                                             cl_device_type type, context_notify_fn notify,
                                             void* data, cl_int* err) {
  api_call c(rt(), entry_point::clCreateContextFromType);
  if (cl_int f = c.fault()) {
    if (err) *err = f;
    c.ret(f);
    return nullptr;
  }
  // As clGetDeviceIDs answers: a type that is not a valid value is CL_INVALID_DEVICE_TYPE (OpenCL
  // 3.0), a valid one that names no device CL_DEVICE_NOT_FOUND.
  if (!valid_device_type(type)) return c.fail<cl_context>(err, CL_INVALID_DEVICE_TYPE);
  std::vector<cl_device_id> devs;
  for (size_t i = 0; i < rt().devices.size(); ++i) {
    if (device_of_type(type, i, rt().devices[i].cfg.gpu)) devs.push_back(&rt().device_handles[i]);
  }
  if (devs.empty()) {
    if (err) *err = CL_DEVICE_NOT_FOUND;
    c.ret(CL_DEVICE_NOT_FOUND);
    return nullptr;
  }
  return make_context(c, props, std::move(devs), notify, data, err);
}

cl_int CL_API_CALL GetContextInfo(cl_context h, cl_context_info param, size_t size, void* value,
                                  size_t* size_ret) {
  api_call c(rt(), entry_point::clGetContextInfo);
  _cl_context* ctx = rt().context(h);
  if (!ctx) return c.ret(CL_INVALID_CONTEXT);
  switch (param) {
    case CL_CONTEXT_REFERENCE_COUNT:
      return c.ret(set_info_v(size, value, size_ret, cl_uint{ctx->refs + ctx->holds}));
    case CL_CONTEXT_NUM_DEVICES:
      return c.ret(set_info_v(size, value, size_ret, static_cast<cl_uint>(ctx->devices.size())));
    case CL_CONTEXT_DEVICES:
      return c.ret(set_info(size, value, size_ret, ctx->devices.data(),
                            ctx->devices.size() * sizeof(cl_device_id)));
    case CL_CONTEXT_PROPERTIES:
      return c.ret(set_info(size, value, size_ret, ctx->properties.data(),
                            ctx->properties.size() * sizeof(cl_context_properties)));
    default:
      return c.ret(CL_INVALID_VALUE);
  }
}

cl_int CL_API_CALL SetContextDestructorCallback(cl_context h,
                                                void(CL_CALLBACK* fn)(cl_context, void*),
                                                void* data) {
  api_call c(rt(), entry_point::clSetContextDestructorCallback);
  _cl_context* ctx = rt().context(h);
  if (!ctx) return c.ret(CL_INVALID_CONTEXT);
  if (!fn) return c.ret(CL_INVALID_VALUE);
  ctx->destructors.emplace_back(fn, data);
  return c.ret(CL_SUCCESS);
}

}  // namespace

void fill_context(cl_icd_dispatch& d) {
  d.clSetContextDestructorCallback = SetContextDestructorCallback;
  d.clCreateContext = CreateContext;
  d.clCreateContextFromType = CreateContextFromType;
  d.clRetainContext = retain<_cl_context>;
  d.clReleaseContext = release<_cl_context>;
  d.clGetContextInfo = GetContextInfo;
}

}  // namespace mockcl
