// clRetain* and clRelease* of the six handle types the registry holds, as one template each:
// the types differ only in their entry points and invalid-handle status (and two in one step).
// Internal to //mockcl; the api_*.cc files put retain<T> and release<T> in the dispatch table.
#ifndef MOCKCL_API_RETAIN_RELEASE_H_
#define MOCKCL_API_RETAIN_RELEASE_H_

#include <type_traits>

#include "mockcl/runtime/runtime.h"

namespace mockcl {

template <typename T>
struct lifetime_entries;
template <>
struct lifetime_entries<_cl_context> {
  static constexpr entry_point retain = entry_point::clRetainContext,
                               release = entry_point::clReleaseContext;
  static constexpr cl_int invalid = CL_INVALID_CONTEXT;
};
template <>
struct lifetime_entries<_cl_command_queue> {
  static constexpr entry_point retain = entry_point::clRetainCommandQueue,
                               release = entry_point::clReleaseCommandQueue;
  static constexpr cl_int invalid = CL_INVALID_COMMAND_QUEUE;
};
template <>
struct lifetime_entries<_cl_mem> {
  static constexpr entry_point retain = entry_point::clRetainMemObject,
                               release = entry_point::clReleaseMemObject;
  static constexpr cl_int invalid = CL_INVALID_MEM_OBJECT;
};
template <>
struct lifetime_entries<_cl_event> {
  static constexpr entry_point retain = entry_point::clRetainEvent,
                               release = entry_point::clReleaseEvent;
  static constexpr cl_int invalid = CL_INVALID_EVENT;
};
template <>
struct lifetime_entries<_cl_program> {
  static constexpr entry_point retain = entry_point::clRetainProgram,
                               release = entry_point::clReleaseProgram;
  static constexpr cl_int invalid = CL_INVALID_PROGRAM;
};
template <>
struct lifetime_entries<_cl_kernel> {
  static constexpr entry_point retain = entry_point::clRetainKernel,
                               release = entry_point::clReleaseKernel;
  static constexpr cl_int invalid = CL_INVALID_KERNEL;
};

template <>
struct lifetime_entries<_cl_sampler> {
  static constexpr entry_point retain = entry_point::clRetainSampler,
                               release = entry_point::clReleaseSampler;
  static constexpr cl_int invalid = CL_INVALID_SAMPLER;
};

template <typename T>
cl_int CL_API_CALL retain(T* h) {
  using E = lifetime_entries<T>;
  mock_runtime::api_call c(mock_runtime::get(), E::retain);
  T* o = c.runtime().live(h);
  if (!o) return c.ret(E::invalid);
  ++o->refs;
  return c.ret(CL_SUCCESS);
}

template <typename T>
cl_int CL_API_CALL release(T* h) {
  using E = lifetime_entries<T>;
  mock_runtime::api_call c(mock_runtime::get(), E::release);
  mock_runtime& rt = c.runtime();
  c.handle(type_name(object_registry::type_of<T>()), h);
  // Another type's handle is not read further (its slot may be of another layout).
  if (h && h->type != object_registry::type_of<T>()) return c.ret(E::invalid);
  if constexpr (std::is_same_v<T, _cl_kernel>) {
    // clBuildProgram refuses a program with kernels the application holds.
    if (h && h->in_use && !h->released && h->refs == 1) --h->program->kernels;
  }
  cl_int s;
  if constexpr (std::is_same_v<T, _cl_mem>)
    s = rt.release_mem(h);
  else
    s = rt.release(h, E::invalid);
  if constexpr (std::is_same_v<T, _cl_command_queue>) {
    if (s == CL_SUCCESS) rt.run();  // Releasing a queue flushes it.
  }
  return c.ret(s);
}

}  // namespace mockcl

#endif  // MOCKCL_API_RETAIN_RELEASE_H_
