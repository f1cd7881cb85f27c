#include "mockcl/api/dispatch.h"

#include <type_traits>

#include "mockcl/runtime/runtime.h"

namespace mockcl {
namespace {

// A stub of the exact signature of slot E: returns CL_INVALID_OPERATION, or NULL after setting
// every cl_int* argument (the errcode_ret) to CL_INVALID_OPERATION. It is a call like any other:
// counted, and written to the call log with its result, so a program's use of an unsupported
// entry point shows there.
template <entry_point E, typename F>
struct stub_entry;

template <entry_point E, typename R, typename... A>
struct stub_entry<E, R(CL_API_CALL*)(A...)> {
  static R CL_API_CALL fn(A... a) {
    mock_runtime::api_call c(mock_runtime::get(), E);
    c.ret(CL_INVALID_OPERATION);
    (set_err(a), ...);
    if constexpr (std::is_same_v<R, cl_int>)
      return CL_INVALID_OPERATION;
    else if constexpr (std::is_void_v<R>)
      return;
    else
      return R{};
  }
  template <typename T>
  static void set_err(T v) {
    if constexpr (std::is_same_v<T, cl_int*>) {
      if (v) *v = CL_INVALID_OPERATION;
    }
  }
};

// Slots typed void* (Windows-only interop) get a harmless function too.
cl_int CL_API_CALL invalid_operation() { return CL_INVALID_OPERATION; }

template <entry_point E, typename Slot>
Slot stub_for() {
  if constexpr (std::is_pointer_v<Slot> && std::is_function_v<std::remove_pointer_t<Slot>>)
    return &stub_entry<E, Slot>::fn;
  else
    return reinterpret_cast<Slot>(&invalid_operation);
}

cl_icd_dispatch build() {
  cl_icd_dispatch d;
#define MOCKCL_ENTRY(name) d.name = stub_for<entry_point::name, decltype(d.name)>();
#include "mockcl/api/entry_points.inc"
#undef MOCKCL_ENTRY
  fill_platform(d);
  fill_context(d);
  fill_memory(d);
  fill_svm(d);
  fill_queue(d);
  fill_enqueue(d);
  fill_event(d);
  fill_program(d);
  fill_kernel(d);
  fill_image(d);
  fill_image_enqueue(d);
  return d;
}

}  // namespace

const cl_icd_dispatch* dispatch_table() {
  static const cl_icd_dispatch table = build();
  return &table;
}

}  // namespace mockcl
