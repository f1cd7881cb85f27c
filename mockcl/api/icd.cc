// The ICD face of the mock: the three symbols the ICD loader needs plus the mockcl_ C control
// API. Everything else in libmockcl.so is hidden by mockcl.lds, so the mock's own entry points
// can never bind to the loader's same-named functions.
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <cstring>
#include <string>

#include "mockcl/api/dispatch.h"
#include "mockcl/mockcl_c.h"
#include "mockcl/runtime/control.h"
#include "mockcl/runtime/runtime.h"

namespace {

// Reports objects still alive when the process exits (or the library is unloaded). A copy that
// was never called (dlopened only to be checked, as clpool_replay's loader does) has no runtime
// and nothing to report: making one here would allocate it as the library goes away.
struct exit_reporter {
  ~exit_reporter() {
    if (mockcl::mock_runtime* rt = mockcl::mock_runtime::get_if_ready()) rt->report_exit();
  }
} exit_report;

void copy_error(const std::string& e, char* err, size_t size) {
  if (!err || size == 0) return;
  size_t n = std::min(e.size(), size - 1);
  std::memcpy(err, e.data(), n);
  err[n] = '\0';
}

cl_int CL_API_CALL get_platform_ids(cl_uint num_entries, cl_platform_id* platforms,
                                    cl_uint* num_platforms) {
  mockcl::mock_runtime& rt = mockcl::mock_runtime::get();
  if ((num_entries == 0 && platforms) || (!platforms && !num_platforms)) return CL_INVALID_VALUE;
  if (!rt.platform_ok()) {
    // The configuration was invalid (the message went to stderr at start-up).
    if (num_platforms) *num_platforms = 0;
    return CL_PLATFORM_NOT_FOUND_KHR;
  }
  if (platforms) platforms[0] = &rt.platform;
  if (num_platforms) *num_platforms = 1;
  return CL_SUCCESS;
}

}  // namespace

extern "C" {

CL_API_ENTRY cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num_entries,
                                                       cl_platform_id* platforms,
                                                       cl_uint* num_platforms) {
  return get_platform_ids(num_entries, platforms, num_platforms);
}

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id p, cl_platform_info param,
                                                  size_t size, void* value, size_t* size_ret) {
  return mockcl::dispatch()->clGetPlatformInfo(p, param, size, value, size_ret);
}

CL_API_ENTRY void* CL_API_CALL clGetExtensionFunctionAddress(const char* name) {
  if (!name) return nullptr;
  // Internal addresses, never the exported names: those could resolve to the loader's
  // same-named functions through symbol interposition.
  if (std::strcmp(name, "clIcdGetPlatformIDsKHR") == 0)
    return reinterpret_cast<void*>(&get_platform_ids);
  if (std::strcmp(name, "clGetPlatformInfo") == 0)
    return reinterpret_cast<void*>(mockcl::dispatch()->clGetPlatformInfo);
  return nullptr;
}

int mockcl_configure(const char* what, const char* value, char* err, size_t err_size) {
  if (!what || !value) {
    copy_error("mockcl_configure: null argument", err, err_size);
    return CL_INVALID_VALUE;
  }
  mockcl::controller& c = mockcl::control();
  std::string w(what), e;
  if (w == "devices")
    e = c.configure_devices(std::string_view(value));
  else if (w == "faults")
    e = c.configure_faults(value);
  else if (w == "add_fault")
    e = c.add_fault(value);
  else if (w == "schedule")
    e = c.configure_schedule(value);
  else if (w == "call_log")
    e = c.configure_call_log(value);
  else if (w == "backing")
    e = c.configure_backing(value);
  else
    e = "mockcl_configure: unknown item '" + w + "'";
  copy_error(e, err, err_size);
  return e.empty() ? CL_SUCCESS : CL_INVALID_VALUE;
}

void mockcl_reset(void) { mockcl::control().reset(); }

size_t mockcl_snapshot_json(char* buf, size_t size) {
  std::string j = mockcl::to_json(mockcl::control().snapshot());
  copy_error(j, buf, size);
  return j.size();
}

uint64_t mockcl_object_id(const void* handle) { return mockcl::control().object_id(handle); }

void mockcl_memory_use(int device, uint64_t out[3]) {
  const mockcl::controller::device_memory_use u = mockcl::control().memory_use(device);
  out[0] = u.committed;
  out[1] = u.peak;
  out[2] = u.requested;
}

}  // extern "C"
