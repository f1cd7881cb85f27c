// The clpool OpenCL layer: the exported entry points (clGetLayerInfo, clInitLayer,
// clInitLayerWithProperties, clDeinitLayer) and the wrapped dispatch slots.
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

#include "common/cl_status.h"
#include "layer_api/layer_settings.h"
#include "tools/layer/first_use.h"
#include "tools/layer/recorder.h"
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

using trace::trace_kind;

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

// A failed creation the trace keeps as alloc_failed: an out-of-memory, or a request the device
// refused for its size (both rules in common/cl_status.h, shared with the pool and replay).
bool is_failed_request(cl_int status, std::uint64_t size) {
  return common::is_out_of_memory_status(status) || common::is_size_refusal(status, size);
}

// How the alloc_failed comment describes a driver's out-of-memory answer.
std::string driver_failure(cl_int status) {
  const char* name = common::status_name(status);
  return "status " + std::to_string(status) + " (" + name + ") from the driver";
}

trace_kind buffer_kind(cl_mem_flags flags) {
  return (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_USE_HOST_PTR)) != 0 ? trace_kind::host
                                                                      : trace_kind::buffer;
}

void set_status(cl_int* errcode_ret, cl_int status) {
  if (errcode_ret != nullptr) *errcode_ret = status;
}

// Runs when the driver really destroys a cl_mem (last release, and after every command using it
// has finished). Owns `user_data`, a heap block_info.
void CL_CALLBACK on_mem_destroyed(cl_mem mem, void* user_data) noexcept {
  std::unique_ptr<block_info> block(static_cast<block_info*>(user_data));
  if (rec->charges_at_first_use()) forget_mem(mem);  // only then was it remembered
  try {
    rec->free_block(*block, 0, mem);
  } catch (...) {
  }
}

// The program's own references to its buffers, for the moment it releases its last
// (FORMAT.md "Two moments of a free"): wrapped only when recording.
cl_int CL_API_CALL retain_mem_object(cl_mem mem) {
  const cl_int status = target->clRetainMemObject(mem);
  if (status == CL_SUCCESS) {
    try {
      rec->retain_mem(mem);
    } catch (...) {
    }
  }
  return status;
}

cl_int CL_API_CALL release_mem_object(cl_mem mem) {
  std::uint64_t id = 0;
  try {
    id = rec->begin_release(mem);
  } catch (...) {
  }
  const cl_int status = target->clReleaseMemObject(mem);
  if (id != 0) {
    try {
      rec->end_release(mem, id, status == CL_SUCCESS);
    } catch (...) {
    }
  }
  return status;
}

// Common path of clCreateBuffer, clCreateBufferWithProperties and clCreateSubBuffer. `create`
// calls the target with a status pointer and returns its cl_mem.
template <class Create>
cl_mem create_mem(std::uint64_t size, trace_kind kind, cl_mem_flags flags, cl_int* errcode_ret,
                  Create create) noexcept {
  try {
    // Allocate our bookkeeping before the driver's object, so a bad_alloc cannot leak a cl_mem.
    // Without a trace or a budget (injected failures only) there is nothing to do at the block's
    // destruction, and no destructor callback is registered: on NVIDIA it seems to be most of
    // the layer's cost (README.md, "Cost").
    const bool watch = rec->watches_frees();
    auto block = watch ? std::make_unique<block_info>() : nullptr;
    recorder::ticket t = rec->begin_alloc(size, kind, flags);
    if (t.refused != refusal::none) {
      set_status(errcode_ret, t.status);
      return nullptr;
    }
    cl_int status = CL_SUCCESS;
    cl_mem mem = create(&status);
    if (mem == nullptr || status != CL_SUCCESS) {
      rec->abort_alloc(t.block, is_failed_request(status, size) ? driver_failure(status) : "");
      set_status(errcode_ret, status != CL_SUCCESS ? status : CL_OUT_OF_RESOURCES);
      return mem;
    }
    if (!watch) {
      set_status(errcode_ret, CL_SUCCESS);
      return mem;
    }
    *block = t.block;
    rec->commit_alloc(t.block);
    rec->hold_mem(mem, t.block);  // before the callback is registered: it may run at once
    if (target->clSetMemObjectDestructorCallback(mem, on_mem_destroyed, block.get()) ==
        CL_SUCCESS) {
      // Charged at its first enqueue (first_use.h), which finds it by its handle.
      if (block->counted && rec->charges_at_first_use()) remember_mem(mem, block.get());
      block.release();  // on_mem_destroyed owns it now
    } else {
      static std::once_flag warned;
      std::call_once(warned, [] {
        std::fprintf(stderr,
                     "clpool_layer: warning: clSetMemObjectDestructorCallback failed; buffers "
                     "will not be recorded as freed\n");
      });
    }
    set_status(errcode_ret, CL_SUCCESS);
    return mem;
  } catch (...) {
    set_status(errcode_ret, CL_OUT_OF_HOST_MEMORY);
    return nullptr;
  }
}

cl_mem CL_API_CALL create_buffer(cl_context context, cl_mem_flags flags, size_t size,
                                 void* host_ptr, cl_int* errcode_ret) {
  return create_mem(size, buffer_kind(flags), flags, errcode_ret, [&](cl_int* status) {
    return target->clCreateBuffer(context, flags, size, host_ptr, status);
  });
}

cl_mem CL_API_CALL create_buffer_with_properties(cl_context context,
                                                 const cl_mem_properties* properties,
                                                 cl_mem_flags flags, size_t size, void* host_ptr,
                                                 cl_int* errcode_ret) {
  return create_mem(size, buffer_kind(flags), flags, errcode_ret, [&](cl_int* status) {
    return target->clCreateBufferWithProperties(context, properties, flags, size, host_ptr, status);
  });
}

cl_mem CL_API_CALL create_sub_buffer(cl_mem buffer, cl_mem_flags flags,
                                     cl_buffer_create_type create_type, const void* create_info,
                                     cl_int* errcode_ret) {
  std::uint64_t size = 0;
  if (create_type == CL_BUFFER_CREATE_TYPE_REGION && create_info != nullptr) {
    size = static_cast<const cl_buffer_region*>(create_info)->size;
  }
  cl_mem sub = create_mem(size, trace_kind::sub, flags, errcode_ret, [&](cl_int* status) {
    return target->clCreateSubBuffer(buffer, flags, create_type, create_info, status);
  });
  try {
    if (sub != nullptr && rec->charges_at_first_use()) remember_sub_buffer(sub, buffer);
  } catch (...) {
  }
  return sub;
}

void* CL_API_CALL svm_alloc(cl_context context, cl_svm_mem_flags flags, size_t size,
                            cl_uint alignment) {
  try {
    recorder::ticket t = rec->begin_alloc(size, trace_kind::svm, flags);
    if (t.refused != refusal::none) return nullptr;
    void* pointer = target->clSVMAlloc(context, flags, size, alignment);
    if (pointer == nullptr) {
      // clSVMAlloc gives no status; NULL for a non-zero size is how a device says "no room".
      rec->abort_alloc(t.block, size != 0 ? "NULL from the driver's clSVMAlloc" : "");
      return nullptr;
    }
    if (!rec->watches_frees()) return pointer;  // clSVMFree is not wrapped either
    try {
      rec->remember_svm(pointer, t.block);
    } catch (...) {
      target->clSVMFree(context, pointer);
      rec->abort_alloc(t.block, "");
      return nullptr;
    }
    rec->commit_alloc(t.block);
    return pointer;
  } catch (...) {
    return nullptr;
  }
}

void CL_API_CALL svm_free(cl_context context, void* pointer) {
  // Record before the driver frees: once freed, another thread's clSVMAlloc may get the same
  // address, and its entry must not be the one we remove.
  try {
    if (pointer != nullptr) {
      if (std::optional<block_info> block = rec->forget_svm(pointer)) rec->free_block(*block, 0);
    }
  } catch (...) {
  }
  target->clSVMFree(context, pointer);
}

// What clEnqueueSVMFree's replacement callback needs at execution time.
struct svm_free_call {
  void(CL_CALLBACK* user_callback)(cl_command_queue, cl_uint, void**, void*) = nullptr;
  void* user_data = nullptr;
  cl_context context = nullptr;  // for freeing ourselves when the user gave no callback
  std::uint64_t queue = 0;
};

// Runs on an ICD thread when the enqueued SVM free executes. Records the frees, then does what the
// driver would have done: call the user's callback, or free the pointers when there was none.
void CL_CALLBACK on_svm_free(cl_command_queue queue, cl_uint num_pointers, void** pointers,
                             void* user_data) noexcept {
  std::unique_ptr<svm_free_call> call(static_cast<svm_free_call*>(user_data));
  for (cl_uint i = 0; i < num_pointers; ++i) {
    try {
      if (std::optional<block_info> block = rec->forget_svm(pointers[i])) {
        rec->free_block(*block, call->queue);
      }
    } catch (...) {
    }
  }
  if (call->user_callback != nullptr) {
    call->user_callback(queue, num_pointers, pointers, call->user_data);
  } else {
    for (cl_uint i = 0; i < num_pointers; ++i) target->clSVMFree(call->context, pointers[i]);
  }
}

cl_int CL_API_CALL enqueue_svm_free(
    cl_command_queue queue, cl_uint num_svm_pointers, void* svm_pointers[],
    void(CL_CALLBACK* pfn_free_func)(cl_command_queue, cl_uint, void**, void*), void* user_data,
    cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event) {
  std::unique_ptr<svm_free_call> call;
  try {
    call = std::make_unique<svm_free_call>();
    call->user_callback = pfn_free_func;
    call->user_data = user_data;
    call->queue = rec->queue_id(queue);
    // The program's release of each block, at the call; its `free` is the command's execution.
    for (cl_uint i = 0; svm_pointers != nullptr && i < num_svm_pointers; ++i) {
      rec->release_svm(svm_pointers[i], call->queue);
    }
    if (pfn_free_func == nullptr &&
        target->clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(cl_context), &call->context,
                                      nullptr) != CL_SUCCESS) {
      call.reset();  // not a valid queue: let the driver report it
    }
  } catch (...) {
    return CL_OUT_OF_HOST_MEMORY;
  }
  if (call == nullptr) {
    return target->clEnqueueSVMFree(queue, num_svm_pointers, svm_pointers, pfn_free_func, user_data,
                                    num_events_in_wait_list, event_wait_list, event);
  }
  const cl_int status =
      target->clEnqueueSVMFree(queue, num_svm_pointers, svm_pointers, on_svm_free, call.get(),
                               num_events_in_wait_list, event_wait_list, event);
  if (status == CL_SUCCESS) call.release();  // on_svm_free owns it now
  return status;
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
    const cl_ulong now = budget.load(std::memory_order_relaxed);
    if (reported > now) std::memcpy(value, &now, sizeof(reported));
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
                     error.c_str());
        layer_dispatch.clGetPlatformIDs = refuse_get_platform_ids;
        layer_dispatch.clCreateContext = refuse_create_context;
        layer_dispatch.clCreateContextFromType = refuse_create_context_from_type;
      } else if (rec->intercepts_allocations()) {
        // Otherwise (no setting at all) every slot stays null, i.e. the driver's own: the layer
        // then costs nothing.
        layer_dispatch.clCreateBuffer = create_buffer;
        layer_dispatch.clCreateBufferWithProperties = create_buffer_with_properties;
        layer_dispatch.clCreateSubBuffer = create_sub_buffer;
        layer_dispatch.clSVMAlloc = svm_alloc;
        if (rec->watches_frees()) {
          layer_dispatch.clSVMFree = svm_free;
          layer_dispatch.clEnqueueSVMFree = enqueue_svm_free;
        }
        if (budget != 0) layer_dispatch.clGetDeviceInfo = get_device_info;
        if (rec->charges_at_first_use()) install_first_use(layer_dispatch, target, rec);
        if (rec->recording()) {
          layer_dispatch.clRetainMemObject = retain_mem_object;
          layer_dispatch.clReleaseMemObject = release_mem_object;
          // Over the wrappers above (first use), which the waits' wrappers call.
          install_waits(layer_dispatch, target, num_entries, rec);
        }
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
