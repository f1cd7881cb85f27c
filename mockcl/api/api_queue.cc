#include <algorithm>
// Command queues (in-order and out-of-order), flush and finish.
#include "mockcl/api/retain_release.h"
#include "mockcl/runtime/runtime.h"

namespace mockcl {
namespace {

constexpr cl_command_queue_properties kSupported =
    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;
// Every property bit OpenCL defines: a bit outside them is an invalid value, a defined one the
// mock does not support (device-side queues) is CL_INVALID_QUEUE_PROPERTIES.
constexpr cl_command_queue_properties kDefined =
    kSupported | CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT;

cl_command_queue make_queue(api_call& c, cl_context h, cl_device_id dh,
                            cl_command_queue_properties props, cl_int* err,
                            const cl_queue_properties* array = nullptr) {
  if (cl_int f = c.fault()) return c.fail<cl_command_queue>(err, f);
  _cl_context* ctx = rt().context(h);
  if (!ctx) return c.fail<cl_command_queue>(err, CL_INVALID_CONTEXT);
  _cl_device_id* dev = rt().device(dh);
  if (!dev) return c.fail<cl_command_queue>(err, CL_INVALID_DEVICE);
  bool in_ctx = false;
  for (cl_device_id d : ctx->devices) in_ctx = in_ctx || d == dev;
  if (!in_ctx) return c.fail<cl_command_queue>(err, CL_INVALID_DEVICE);
  if (props & ~kDefined) return c.fail<cl_command_queue>(err, CL_INVALID_VALUE);
  if (props & ~kSupported) return c.fail<cl_command_queue>(err, CL_INVALID_QUEUE_PROPERTIES);
  _cl_command_queue* q = rt().objects.create<_cl_command_queue>();
  q->context = ctx;
  rt().hold(ctx);
  q->device = dev;
  q->properties = props;
  q->properties_array.clear();
  for (size_t i = 0; array && array[i] != 0; i += 2)
    q->properties_array.insert(q->properties_array.end(), array + i, array + i + 2);
  if (array) q->properties_array.push_back(0);
  q->out_of_order = props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
  q->last = q->last_barrier = nullptr;
  q->busy_until = rt().scheduler.now;
  c.handle("ret", q);
  c.arg("out_of_order", q->out_of_order);
  if (err) *err = CL_SUCCESS;
  c.ret(CL_SUCCESS);
  return q;
}

cl_command_queue CL_API_CALL CreateCommandQueue(cl_context ctx, cl_device_id dev,
                                                cl_command_queue_properties props, cl_int* err) {
  api_call c(rt(), entry_point::clCreateCommandQueue);
  return make_queue(c, ctx, dev, props, err);
}

cl_command_queue CL_API_CALL CreateCommandQueueWithProperties(cl_context ctx, cl_device_id dev,
                                                              const cl_queue_properties* props,
                                                              cl_int* err) {
  api_call c(rt(), entry_point::clCreateCommandQueueWithProperties);
  cl_command_queue_properties p = 0;
  for (size_t i = 0; props && props[i] != 0; i += 2) {
    if (props[i] == CL_QUEUE_PROPERTIES) {
      p = props[i + 1];
    } else {
      if (err) *err = CL_INVALID_VALUE;
      c.ret(CL_INVALID_VALUE);
      return nullptr;
    }
  }
  return make_queue(c, ctx, dev, p, err, props);
}

cl_int CL_API_CALL GetCommandQueueInfo(cl_command_queue h, cl_command_queue_info param, size_t size,
                                       void* value, size_t* size_ret) {
  api_call c(rt(), entry_point::clGetCommandQueueInfo);
  _cl_command_queue* q = rt().queue(h);
  if (!q) return c.ret(CL_INVALID_COMMAND_QUEUE);
  auto v = [&](auto x) { return c.ret(set_info_v(size, value, size_ret, x)); };
  switch (param) {
    case CL_QUEUE_CONTEXT:
      return v(q->context);
    case CL_QUEUE_DEVICE:
      return v(q->device);
    case CL_QUEUE_REFERENCE_COUNT:
      return v(cl_uint{q->refs + q->holds});
    case CL_QUEUE_PROPERTIES:
      return v(q->properties);
    case CL_QUEUE_PROPERTIES_ARRAY:  // As given at creation; nothing for clCreateCommandQueue.
      return c.ret(set_info(size, value, size_ret,
                            q->properties_array.empty() ? nullptr : q->properties_array.data(),
                            q->properties_array.size() * sizeof(cl_queue_properties)));
    case CL_QUEUE_SIZE:
      return c.ret(CL_INVALID_COMMAND_QUEUE);  // Host queues have no size.
    case CL_QUEUE_DEVICE_DEFAULT:
      return v(cl_command_queue{nullptr});
    default:
      return c.ret(CL_INVALID_VALUE);
  }
}

cl_int CL_API_CALL Flush(cl_command_queue h) {
  api_call c(rt(), entry_point::clFlush);
  if (cl_int f = c.fault()) return c.ret(f);
  if (!rt().queue(h)) return c.ret(CL_INVALID_COMMAND_QUEUE);
  rt().run();
  return c.ret(CL_SUCCESS);
}

cl_int CL_API_CALL Finish(cl_command_queue h) {
  api_call c(rt(), entry_point::clFinish);
  if (cl_int f = c.fault()) return c.ret(f);
  _cl_command_queue* q = rt().queue(h);
  if (!q) return c.ret(CL_INVALID_COMMAND_QUEUE);
  std::vector<_cl_event*> evs = rt().pending_on(q);
  rt().wait(c.lock(), evs);
  for (_cl_event* e : evs) rt().release_internal(e);
  // The host has waited for everything on q, including commands that completed before this call
  // (eager mode): its clock is at least the queue's last end.
  rt().scheduler.now = std::max(rt().scheduler.now, q->busy_until);
  return c.ret(CL_SUCCESS);
}

}  // namespace

void fill_queue(cl_icd_dispatch& d) {
  d.clCreateCommandQueue = CreateCommandQueue;
  d.clCreateCommandQueueWithProperties = CreateCommandQueueWithProperties;
  d.clRetainCommandQueue = retain<_cl_command_queue>;
  d.clReleaseCommandQueue = release<_cl_command_queue>;
  d.clGetCommandQueueInfo = GetCommandQueueInfo;
  d.clFlush = Flush;
  d.clFinish = Finish;
}

}  // namespace mockcl
