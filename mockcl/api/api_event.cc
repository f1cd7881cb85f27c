// Events: waits, status and profiling queries, user events and callbacks.
#include "mockcl/api/retain_release.h"
#include "mockcl/runtime/runtime.h"

namespace mockcl {
namespace {

cl_int CL_API_CALL WaitForEvents(cl_uint n, const cl_event* list) {
  api_call c(rt(), entry_point::clWaitForEvents);
  if (cl_int f = c.fault()) return c.ret(f);
  if (n == 0 || !list) return c.ret(CL_INVALID_VALUE);
  std::vector<_cl_event*> evs;
  for (cl_uint i = 0; i < n; ++i) {
    _cl_event* e = rt().event(list[i]);
    if (!e) return c.ret(CL_INVALID_EVENT);
    if (!evs.empty() && e->context != evs.front()->context) return c.ret(CL_INVALID_CONTEXT);
    evs.push_back(e);
  }
  for (_cl_event* e : evs) rt().retain_internal(e);
  cl_int worst = rt().wait(c.lock(), evs);
  for (_cl_event* e : evs) rt().release_internal(e);
  return c.ret(worst < 0 ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS);
}

cl_int CL_API_CALL GetEventInfo(cl_event h, cl_event_info param, size_t size, void* value,
                                size_t* size_ret) {
  api_call c(rt(), entry_point::clGetEventInfo);
  _cl_event* e = rt().event(h);
  if (!e) return c.ret(CL_INVALID_EVENT);
  auto v = [&](auto x) { return c.ret(set_info_v(size, value, size_ret, x)); };
  switch (param) {
    case CL_EVENT_COMMAND_QUEUE:
      return v(static_cast<cl_command_queue>(e->queue));
    case CL_EVENT_CONTEXT:
      return v(e->context);
    case CL_EVENT_COMMAND_TYPE:
      return v(e->command_type);
    case CL_EVENT_COMMAND_EXECUTION_STATUS:
      return v(e->status);
    case CL_EVENT_REFERENCE_COUNT:
      return v(cl_uint{e->refs + e->holds});
    default:
      return c.ret(CL_INVALID_VALUE);
  }
}

cl_int CL_API_CALL GetEventProfilingInfo(cl_event h, cl_profiling_info param, size_t size,
                                         void* value, size_t* size_ret) {
  api_call c(rt(), entry_point::clGetEventProfilingInfo);
  _cl_event* e = rt().event(h);
  if (!e) return c.ret(CL_INVALID_EVENT);
  if (!e->queue || !(e->queue->properties & CL_QUEUE_PROFILING_ENABLE) || e->status != CL_COMPLETE)
    return c.ret(CL_PROFILING_INFO_NOT_AVAILABLE);
  // In backing mode the real times (POCL's clock; POCL's START and END where it ran the command),
  // else the virtual clock's.
  const bool real = e->real[0] != 0;
  cl_ulong t;
  switch (param) {
    case CL_PROFILING_COMMAND_QUEUED:
      t = real ? e->real[0] : e->queued;
      break;
    case CL_PROFILING_COMMAND_SUBMIT:
      t = real ? e->real[1] : e->submitted;
      break;
    case CL_PROFILING_COMMAND_START:
      t = real ? e->real[2] : e->started;
      break;
    case CL_PROFILING_COMMAND_END:
    case CL_PROFILING_COMMAND_COMPLETE:
      t = real ? e->real[3] : e->ended;
      break;
    default:
      return c.ret(CL_INVALID_VALUE);
  }
  return c.ret(set_info_v(size, value, size_ret, t));
}

cl_event CL_API_CALL CreateUserEvent(cl_context h, cl_int* err) {
  api_call c(rt(), entry_point::clCreateUserEvent);
  if (cl_int f = c.fault()) return c.fail<cl_event>(err, f);
  _cl_context* ctx = rt().context(h);
  if (!ctx) return c.fail<cl_event>(err, CL_INVALID_CONTEXT);
  _cl_event* e = rt().objects.create<_cl_event>();
  e->context = ctx;
  rt().hold(ctx);
  e->queue = nullptr;
  e->command_type = CL_COMMAND_USER;
  e->status = CL_SUBMITTED;
  e->queued = e->submitted = e->started = e->ended = rt().scheduler.now;
  e->command_id = 0;
  e->kind = "user";
  e->deps.clear();
  e->mems.clear();
  e->svm.clear();
  e->callbacks.clear();
  e->explicit_deps = 0;
  e->fault_status = 0;
  e->svm_counted = false;
  c.handle("ret", e);
  if (err) *err = CL_SUCCESS;
  c.ret(CL_SUCCESS);
  return e;
}

cl_int CL_API_CALL SetUserEventStatus(cl_event h, cl_int status) {
  api_call c(rt(), entry_point::clSetUserEventStatus);
  _cl_event* e = rt().event(h);
  if (!e || e->command_type != CL_COMMAND_USER) return c.ret(CL_INVALID_EVENT);
  if (status > CL_COMPLETE) return c.ret(CL_INVALID_VALUE);
  if (e->status <= CL_COMPLETE) return c.ret(CL_INVALID_OPERATION);  // Set only once.
  e->ended = rt().scheduler.now;
  rt().set_status(e, status);
  if (rt().scheduler.eager()) rt().run();
  rt().cv.notify_all();
  return c.ret(CL_SUCCESS);
}

cl_int CL_API_CALL SetEventCallback(cl_event h, cl_int type,
                                    void(CL_CALLBACK* fn)(cl_event, cl_int, void*), void* data) {
  api_call c(rt(), entry_point::clSetEventCallback);
  _cl_event* e = rt().event(h);
  if (!e) return c.ret(CL_INVALID_EVENT);
  if (!fn || (type != CL_COMPLETE && type != CL_SUBMITTED && type != CL_RUNNING))
    return c.ret(CL_INVALID_VALUE);
  e->callbacks.push_back({type, fn, data});
  if (e->status <= type) rt().set_status(e, e->status);  // Already there: call it now.
  return c.ret(CL_SUCCESS);
}

}  // namespace

void fill_event(cl_icd_dispatch& d) {
  d.clWaitForEvents = WaitForEvents;
  d.clGetEventInfo = GetEventInfo;
  d.clGetEventProfilingInfo = GetEventProfilingInfo;
  d.clRetainEvent = retain<_cl_event>;
  d.clReleaseEvent = release<_cl_event>;
  d.clCreateUserEvent = CreateUserEvent;
  d.clSetUserEventStatus = SetUserEventStatus;
  d.clSetEventCallback = SetEventCallback;
}

}  // namespace mockcl
