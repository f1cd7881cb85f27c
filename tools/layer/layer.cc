// The clpool OpenCL layer: the exported entry points (clGetLayerInfo, clInitLayer,
// clInitLayerWithProperties, clDeinitLayer), the settings read at initialisation, the dispatch
// table they choose, and the clpool_layer_* control functions. The wrapped calls are in
// allocations.cc (creations and frees), first_use.cc and waits.cc.
//
// Only the four entry points and the clpool_layer_* control functions are exported
// (-fvisibility=hidden plus layer.lds): an ICD loader dlopens us with RTLD_LOCAL, and any other
// exported OpenCL name could bind the loader's own symbols to ours. Every function the C side calls
// catches everything: no exception may cross into the loader or an ICD thread.
#include <CL/cl_layer.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "common/text_escape.h"
#include "layer_api/layer_settings.h"
#include "tools/layer/allocations.h"
#include "tools/layer/first_use.h"
#include "tools/layer/recorder.h"
#include "tools/layer/request_checks.h"
#include "tools/layer/trace_file_sink.h"
#include "tools/layer/waits.h"

extern char** environ;

#define CLPOOL_LAYER_EXPORT extern "C" __attribute__((visibility("default")))

// Newer cl_layer.h (2021+) declares these; Debian's opencl-headers 3.0 from 2023 does not.
#ifndef CL_LAYER_PROPERTIES_LIST_END
typedef cl_properties cl_layer_properties;
#define CL_LAYER_PROPERTIES_LIST_END ((cl_layer_properties)0)
#endif

namespace clpool::layer {
namespace {

constexpr char layer_name[] = "clpool_layer (allocation recorder, budget and fault injection)";

// Set once by init_layer and never destroyed: ICD threads may run destructor callbacks during or
// after static destruction, so the recorder must outlive everything.
const cl_icd_dispatch* target = nullptr;
recorder* rec = nullptr;
// Why configure() refused the settings (clpool_layer_refusal); null while it did not.
const std::string* refused_settings = nullptr;
cl_icd_dispatch layer_dispatch{};
std::mutex init_mutex;
bool initialised = false;

void set_status(cl_int* errcode_ret, cl_int status) {
  if (errcode_ret != nullptr) *errcode_ret = status;
}

// With a budget the device reports it as its memory size (and caps its largest allocation), so a
// program that sizes its work from CL_DEVICE_GLOBAL_MEM_SIZE behaves as on the smaller card.
// 0: no budget. Set before the dispatch table is handed out; clpool_layer_set_budget may change it.
std::atomic<std::uint64_t> budget{0};

cl_int CL_API_CALL get_device_info(cl_device_id device, cl_device_info name, size_t value_size,
                                   void* value, size_t* value_size_ret) {
  const cl_int status = target->clGetDeviceInfo(device, name, value_size, value, value_size_ret);
  if (status == CL_SUCCESS && value != nullptr && value_size >= sizeof(cl_ulong) &&
      (name == CL_DEVICE_GLOBAL_MEM_SIZE || name == CL_DEVICE_MAX_MEM_ALLOC_SIZE)) {
    cl_ulong reported = 0;
    std::memcpy(&reported, value, sizeof(reported));
    reported = reported_under_budget(reported, budget.load(std::memory_order_relaxed));
    std::memcpy(value, &reported, sizeof(reported));
  }
  return status;
}

// --- Refusing to run with bad settings ---
//
// Both ocl-icd 2.3.1 and the Khronos loader silently skip a layer whose clInitLayer fails, and
// the program would then run unrecorded and unlimited. So after a bad setting the layer installs
// this table instead, in which no platform exists: the program fails at its first OpenCL call,
// right after our message on stderr.

cl_int CL_API_CALL refuse_get_platform_ids(cl_uint, cl_platform_id*, cl_uint* num_platforms) {
  if (num_platforms != nullptr) *num_platforms = 0;
  return CL_PLATFORM_NOT_FOUND_KHR;
}

cl_context CL_API_CALL refuse_create_context_from_type(const cl_context_properties*, cl_device_type,
                                                       void(CL_CALLBACK*)(const char*, const void*,
                                                                          size_t, void*),
                                                       void*, cl_int* errcode_ret) {
  set_status(errcode_ret, CL_INVALID_PLATFORM);
  return nullptr;
}

cl_context CL_API_CALL refuse_create_context(
    const cl_context_properties*, cl_uint, const cl_device_id*,
    void(CL_CALLBACK*)(const char*, const void*, size_t, void*), void*, cl_int* errcode_ret) {
  set_status(errcode_ret, CL_INVALID_PLATFORM);
  return nullptr;
}

// Reads the settings and opens the trace. Returns an error message, or empty on success.
std::string configure() {
  parse_result parsed = parse_layer_settings_from_environ(environ);
  if (!parsed.ok()) return parsed.error_text();
  const layer_settings& settings = *parsed.settings;
  std::unique_ptr<event_sink> sink;
  if (settings.trace_path) {
    std::string error;
    sink = open_trace_file(*settings.trace_path, settings, error);
    if (sink == nullptr) return std::string(env_trace) + " " + error;
  } else {
    std::fprintf(stderr,
                 "clpool_layer: note: CLPOOL_LAYER_TRACE is not set; not recording a trace\n");
  }
  const bool recording = sink != nullptr;
  rec = new recorder(settings, std::move(sink));
  if (std::string error = rec->open_report(); !error.empty())
    return std::string(env_report) + " " + error;
  if (settings.report_path) std::atexit([] { rec->report_exit(); });
  if (recording && settings.stacks != "none") {
    // Frames in the layer (dropped by the capturer itself), the ICD loader and the driver say
    // nothing about the program: found from an address of each module.
    std::vector<const void*> drop = {reinterpret_cast<const void*>(target->clCreateBuffer)};
    if (void* loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD)) {
      drop.push_back(dlsym(loader, "clCreateBuffer"));
      dlclose(loader);
    }
    rec->enable_stacks(
        std::make_unique<stacks::capturer>(*stacks::parse_mode(settings.stacks), drop));
  }
  budget = settings.budget_bytes.value_or(0);
  // At exit, the sink stops writing through its memory map and trims the file's zero-filled
  // tail (trace_file_sink.h); events that driver threads record later are written directly.
  if (recording) std::atexit([] { rec->process_exiting(); });
  return {};
}

cl_int init_layer(cl_uint num_entries, const cl_icd_dispatch* target_dispatch,
                  cl_uint* num_entries_ret, const cl_icd_dispatch** layer_dispatch_ret) noexcept {
  try {
    constexpr cl_uint our_entries = sizeof(cl_icd_dispatch) / sizeof(void*);
    if (target_dispatch == nullptr || num_entries_ret == nullptr || layer_dispatch_ret == nullptr) {
      return CL_INVALID_VALUE;
    }
    // We read target slots up to clCreateBufferWithProperties (OpenCL 3.0); an older table would
    // make us call past its end.
    constexpr cl_uint needed =
        offsetof(cl_icd_dispatch, clCreateBufferWithProperties) / sizeof(void*) + 1;
    if (num_entries < needed) {
      std::fprintf(stderr,
                   "clpool_layer: error: the loader's dispatch table has %u entries; this layer "
                   "needs %u (an OpenCL 3.0 loader)\n",
                   num_entries, needed);
      return CL_INVALID_VALUE;
    }
    std::lock_guard lock(init_mutex);
    if (!initialised) {
      target = target_dispatch;
      const std::string error = configure();
      if (!error.empty()) {
        refused_settings =
            new std::string(error);  // never freed: clpool_layer_refusal may read it any time
        std::fprintf(stderr,
                     "clpool_layer: error: %s\nclpool_layer: refusing to run: every OpenCL "
                     "platform is hidden until the setting is fixed (see tools/layer/README.md)\n",
                     clpool::common::escape_text(error).c_str());
        layer_dispatch.clGetPlatformIDs = refuse_get_platform_ids;
        layer_dispatch.clCreateContext = refuse_create_context;
        layer_dispatch.clCreateContextFromType = refuse_create_context_from_type;
      } else if (rec->intercepts_allocations()) {
        // Otherwise (no setting at all) every slot stays null, i.e. the driver's own: the layer
        // then costs nothing.
        install_allocations(layer_dispatch, target, rec);
        if (budget != 0) layer_dispatch.clGetDeviceInfo = get_device_info;
        if (rec->charges_at_first_use()) install_first_use(layer_dispatch, target, rec);
        // Over the wrappers above (first use), which the waits' wrappers call.
        if (rec->recording()) install_waits(layer_dispatch, target, num_entries, rec);
      }
      initialised = true;
    }
    *num_entries_ret = our_entries < num_entries ? our_entries : num_entries;
    *layer_dispatch_ret = &layer_dispatch;
    return CL_SUCCESS;
  } catch (...) {
    return CL_OUT_OF_HOST_MEMORY;
  }
}

}  // namespace
}  // namespace clpool::layer

CLPOOL_LAYER_EXPORT cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param_name,
                                                      size_t param_value_size, void* param_value,
                                                      size_t* param_value_size_ret) {
  const void* value = nullptr;
  size_t size = 0;
  static const cl_layer_api_version version = CL_LAYER_API_VERSION_100;
  switch (param_name) {
    case CL_LAYER_API_VERSION:
      value = &version;
      size = sizeof(version);
      break;
    case CL_LAYER_NAME:
      value = clpool::layer::layer_name;
      size = sizeof(clpool::layer::layer_name);
      break;
    default:
      return CL_INVALID_VALUE;
  }
  if (param_value != nullptr) {
    if (param_value_size < size) return CL_INVALID_VALUE;
    std::memcpy(param_value, value, size);
  }
  if (param_value_size_ret != nullptr) *param_value_size_ret = size;
  return CL_SUCCESS;
}

CLPOOL_LAYER_EXPORT cl_int CL_API_CALL clInitLayer(cl_uint num_entries,
                                                   const cl_icd_dispatch* target_dispatch,
                                                   cl_uint* num_entries_ret,
                                                   const cl_icd_dispatch** layer_dispatch_ret) {
  return clpool::layer::init_layer(num_entries, target_dispatch, num_entries_ret,
                                   layer_dispatch_ret);
}

CLPOOL_LAYER_EXPORT cl_int CL_API_CALL clInitLayerWithProperties(
    cl_uint num_entries, const cl_icd_dispatch* target_dispatch, cl_uint* num_entries_ret,
    const cl_icd_dispatch** layer_dispatch_ret, const cl_layer_properties* properties) {
  // The only properties defined so far choose how the loader deinitialises us; we need nothing
  // from deinitialisation (every event is in the file when it is recorded), so any are accepted.
  (void)properties;
  return clpool::layer::init_layer(num_entries, target_dispatch, num_entries_ret,
                                   layer_dispatch_ret);
}

// --- In-process control (layer.lds exports these) ---
//
// For a harness inside the program itself, e.g. clpool's pytest plugin through ctypes (the loader
// dlopened this file; dlopen of the same path returns the same copy): whether the loader
// initialised the layer, and the budget for allocations from now on, so that one test can run on
// a smaller device than the session's.

// 0: the loader has not initialised the layer (no OpenCL call yet, or it was never listed in
// OPENCL_LAYERS); 1: initialised without a budget; 2: initialised with a budget (it can be
// changed); -1: a bad setting made it hide every platform.
CLPOOL_LAYER_EXPORT int clpool_layer_state(void) {
  std::lock_guard lock(clpool::layer::init_mutex);
  if (!clpool::layer::initialised) return 0;
  if (clpool::layer::layer_dispatch.clGetPlatformIDs != nullptr) return -1;
  return clpool::layer::budget.load() != 0 ? 2 : 1;
}

// The budget now, in bytes; 0 without one (or before initialisation).
CLPOOL_LAYER_EXPORT unsigned long long clpool_layer_budget(void) {
  return clpool::layer::budget.load();
}

// Sets the budget for allocations (and first uses) from now on; blocks already charged stay
// charged, even above it. `bytes` must be more than the profile's headroom and at most 2^62.
// Returns 0, or: -1 not initialised (or refused), -2 initialised without CLPOOL_LAYER_BUDGET (the
// layer then wraps no allocation and cannot start now), -3 a bad `bytes`.
CLPOOL_LAYER_EXPORT int clpool_layer_set_budget(unsigned long long bytes) {
  const int state = clpool_layer_state();
  if (state == 0 || state == -1) return -1;
  if (state == 1) return -2;
  if (!clpool::layer::rec->set_budget(bytes)) return -3;
  clpool::layer::budget.store(bytes);
  return 0;
}

// 0 while every event reached the trace; else the length of the reason it is incomplete
// (recorder::trace_failure), copied NUL-terminated into `buffer` (`size` bytes; cut to fit).
CLPOOL_LAYER_EXPORT unsigned long long clpool_layer_trace_error(char* buffer,
                                                                unsigned long long size) {
  if (clpool_layer_state() <= 0 || clpool::layer::rec == nullptr) return 0;
  const std::string failure = clpool::layer::rec->trace_failure();
  if (buffer != nullptr && size != 0) {
    const std::size_t n = std::min<std::size_t>(failure.size(), static_cast<std::size_t>(size - 1));
    std::memcpy(buffer, failure.data(), n);
    buffer[n] = '\0';
  }
  return failure.size();
}

// The threads the layer has seen: up to `size` pairs of (OS thread id, the trace's `thread`) into
// `os_ids` and `trace_ids`; returns how many it has seen (more than `size`: call again with room).
CLPOOL_LAYER_EXPORT unsigned long long clpool_layer_threads(unsigned long long* os_ids,
                                                            unsigned long long* trace_ids,
                                                            unsigned long long size) {
  if (clpool_layer_state() <= 0 || clpool::layer::rec == nullptr) return 0;
  const auto threads = clpool::layer::rec->threads();
  for (std::size_t i = 0; i < threads.size() && i < size; ++i) {
    os_ids[i] = threads[i].first;
    trace_ids[i] = threads[i].second;
  }
  return threads.size();
}

// The seq the trace's next event will get (0 before initialisation): a harness marks a moment
// with it, every event before which has a lower seq (the pytest plugin's test boundaries).
CLPOOL_LAYER_EXPORT unsigned long long clpool_layer_next_seq(void) {
  if (clpool_layer_state() <= 0 || clpool::layer::rec == nullptr) return 0;
  return clpool::layer::rec->next_seq();
}

// The fault points so far: allocation attempts and first uses (recorder::fault_points).
CLPOOL_LAYER_EXPORT void clpool_layer_fault_points(unsigned long long* attempts,
                                                   unsigned long long* first_uses) {
  std::pair<std::uint64_t, std::uint64_t> p{0, 0};
  if (clpool_layer_state() > 0 && clpool::layer::rec != nullptr)
    p = clpool::layer::rec->fault_points();
  if (attempts != nullptr) *attempts = p.first;
  if (first_uses != nullptr) *first_uses = p.second;
}

// Fails the `n`th allocation attempt (first_use 0) or first use (1) from now on; `until_free` 1
// keeps the device full after it; n 0 disarms (recorder::arm). Returns 0, or -1 not initialised.
CLPOOL_LAYER_EXPORT int clpool_layer_arm(int first_use, unsigned long long n, int until_free) {
  if (clpool_layer_state() <= 0 || clpool::layer::rec == nullptr) return -1;
  clpool::layer::rec->arm(first_use != 0, n, until_free != 0);
  return 0;
}

// Writes the report's exit line now (recorder::report_exit; once): for a runtime whose own exit
// frees the program's objects before the C library's atexit handlers run (Python's).
CLPOOL_LAYER_EXPORT void clpool_layer_report_exit(void) {
  if (clpool_layer_state() > 0 && clpool::layer::rec != nullptr) clpool::layer::rec->report_exit();
}

// 0 unless the layer refused its settings (clpool_layer_state() -1); then the length of why (what
// it printed on stderr), copied NUL-terminated into `buffer` (`size` bytes; cut to fit).
CLPOOL_LAYER_EXPORT unsigned long long clpool_layer_refusal(char* buffer, unsigned long long size) {
  std::lock_guard lock(clpool::layer::init_mutex);
  const std::string* why = clpool::layer::refused_settings;
  if (why == nullptr) return 0;
  if (buffer != nullptr && size != 0) {
    const std::size_t n = std::min<std::size_t>(why->size(), static_cast<std::size_t>(size - 1));
    std::memcpy(buffer, why->data(), n);
    buffer[n] = '\0';
  }
  return why->size();
}

CLPOOL_LAYER_EXPORT cl_int CL_API_CALL clDeinitLayer(void) {
  // Nothing to release: every event is in the file when it is recorded, and ICD threads may run
  // destructor callbacks that use the recorder, so it is deliberately never destroyed.
  return CL_SUCCESS;
}
