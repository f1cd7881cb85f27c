// The layer's allocation and free calls (allocations.h): each creation asks the recorder for a
// ticket before the driver sees it, then commits or aborts it; each block is followed to the
// driver's destruction of it (a destructor callback, clSVMFree, the enqueued SVM free's callback).
#include "tools/layer/allocations.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/cl_status.h"
#include "tools/layer/first_use.h"
#include "tools/layer/request_checks.h"

namespace clpool::layer {
namespace {

using trace::trace_kind;

// Set once by install_allocations, before the table is handed out; never reset (ICD threads may
// call back at any time, even during static destruction).
const cl_icd_dispatch* target = nullptr;
recorder* rec = nullptr;

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

constexpr const char* driver_svm_null = "NULL from the driver's clSVMAlloc";

// What the trace says of the driver's NULL for `request` (the layer's judgement of it, without a
// budget): nothing for invalid arguments, a size refusal above the maximum allocation (in the
// form driver_failure gives a buffer's -61), an out-of-memory otherwise.
std::string driver_svm_null_reason(const svm_request& request) {
  if (request.invalid) return "";
  if (request.above_max_alloc) {
    return driver_failure(common::status_invalid_buffer_size) +
           ": clSVMAlloc returned NULL above CL_DEVICE_MAX_MEM_ALLOC_SIZE, " +
           std::to_string(*request.above_max_alloc) + " bytes";
  }
  return driver_svm_null;
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
// `max_alloc`: the CL_DEVICE_MAX_MEM_ALLOC_SIZE above which the layer answers
// CL_INVALID_BUFFER_SIZE itself (buffer_max_alloc), all ones for none.
template <class Create>
cl_mem create_mem(std::uint64_t size, trace_kind kind, cl_mem_flags flags, cl_int* errcode_ret,
                  std::uint64_t max_alloc, Create create) noexcept {
  try {
    // Allocate our bookkeeping before the driver's object, so a bad_alloc cannot leak a cl_mem.
    // Without a trace or a budget (injected failures only) there is nothing to do at the block's
    // destruction, and no destructor callback is registered: on NVIDIA it seems to be most of
    // the layer's cost (README.md, "Cost").
    const bool watch = rec->watches_frees();
    auto block = watch ? std::make_unique<block_info>() : nullptr;
    recorder::ticket t = rec->begin_alloc(size, kind, flags, max_alloc);
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

// The limit above which a new buffer in `context` is CL_INVALID_BUFFER_SIZE by the layer's own
// answer: only with a budget (which the layer reports as the devices' CL_DEVICE_MAX_MEM_ALLOC_SIZE
// when the driver's is larger) and only where the profile says the device enforces that limit
// (max_alloc_enforced; `exact` without a profile). Elsewhere the driver's answer stands: nvidia's
// profile does not enforce it, so a larger buffer is created and fails, or not, at first use.
// A host buffer (trace_kind::host) lives outside the budget's device memory, so the budget is no
// limit of it: the driver answers for it.
std::uint64_t buffer_max_alloc(cl_context context, trace_kind kind) {
  constexpr std::uint64_t none = ~std::uint64_t{0};
  const std::uint64_t budget = rec->budget_bytes();
  if (kind != trace_kind::buffer || budget == none || !rec->profile().max_alloc_enforced)
    return none;
  return context_max_alloc(*target, context, /*largest=*/true, budget).value_or(none);
}

cl_mem CL_API_CALL create_buffer(cl_context context, cl_mem_flags flags, size_t size,
                                 void* host_ptr, cl_int* errcode_ret) {
  return create_mem(size, buffer_kind(flags), flags, errcode_ret,
                    buffer_max_alloc(context, buffer_kind(flags)), [&](cl_int* status) {
                      return target->clCreateBuffer(context, flags, size, host_ptr, status);
                    });
}

cl_mem CL_API_CALL create_buffer_with_properties(cl_context context,
                                                 const cl_mem_properties* properties,
                                                 cl_mem_flags flags, size_t size, void* host_ptr,
                                                 cl_int* errcode_ret) {
  return create_mem(size, buffer_kind(flags), flags, errcode_ret,
                    buffer_max_alloc(context, buffer_kind(flags)), [&](cl_int* status) {
                      return target->clCreateBufferWithProperties(context, properties, flags, size,
                                                                  host_ptr, status);
                    });
}

cl_mem CL_API_CALL create_sub_buffer(cl_mem buffer, cl_mem_flags flags,
                                     cl_buffer_create_type create_type, const void* create_info,
                                     cl_int* errcode_ret) {
  std::uint64_t size = 0;
  if (create_type == CL_BUFFER_CREATE_TYPE_REGION && create_info != nullptr) {
    size = static_cast<const cl_buffer_region*>(create_info)->size;
  }
  cl_mem sub =
      create_mem(size, trace_kind::sub, flags, errcode_ret, ~std::uint64_t{0}, [&](cl_int* status) {
        return target->clCreateSubBuffer(buffer, flags, create_type, create_info, status);
      });
  try {
    if (sub != nullptr && rec->charges_at_first_use()) remember_sub_buffer(sub, buffer);
    if (sub != nullptr) rec->hold_sub_buffer(sub, buffer);
  } catch (...) {
  }
  return sub;
}

// clSVMAlloc returns NULL with no status, for an invalid argument and for no room alike, so the
// layer decides which it was. The rule: a request whose arguments the layer finds invalid
// (request_checks.h: size 0, bad flags or alignment, an unknown context) is no out-of-memory and
// is recorded nowhere. One above the CL_DEVICE_MAX_MEM_ALLOC_SIZE the layer reports, where the
// profile enforces that limit, is a refusal for its size: recorded as alloc_failed with the
// status a buffer gets for it (-61, CL_INVALID_BUFFER_SIZE; common/cl_status.h is_size_refusal),
// no out-of-memory either. With a budget the layer refuses both itself (NULL; it charges nothing
// and is no fault point); without one the driver answers, and the layer judges its NULL by the
// same rule. Only the layer's own refusals (its budget, injected failures: the profile's status,
// -4, -5 or -6, what common/cl_status.h counts as out-of-memory) and a NULL from the driver for
// a request the layer found valid are out-of-memory, recorded as alloc_failed.
void* CL_API_CALL svm_alloc(cl_context context, cl_svm_mem_flags flags, size_t size,
                            cl_uint alignment) {
  try {
    // With a budget the layer answers as the device: it refuses an invalid request itself,
    // before the budget or a fault point sees it. Without one every request reaches the driver
    // (the layer changes no answer, and asks the driver nothing more on the way).
    const std::uint64_t budget = rec->budget_bytes();
    const bool simulating = budget != ~std::uint64_t{0};
    const auto check = [&] {
      return check_svm_request(*target, context, flags, size, alignment, rec->profile(), budget);
    };
    if (simulating) {
      const svm_request r = check();
      if (r.invalid) return nullptr;
      // begin_alloc records the size refusal (alloc_failed, -61) and refuses it.
      if (r.above_max_alloc) {
        rec->begin_alloc(size, trace_kind::svm, flags, *r.above_max_alloc);
        return nullptr;
      }
    }
    recorder::ticket t = rec->begin_alloc(size, trace_kind::svm, flags);
    if (t.refused != refusal::none) return nullptr;
    void* pointer = target->clSVMAlloc(context, flags, size, alignment);
    if (pointer == nullptr) {
      rec->abort_alloc(t.block, simulating ? driver_svm_null : driver_svm_null_reason(check()));
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

}  // namespace

void install_allocations(cl_icd_dispatch& table, const cl_icd_dispatch* target_table, recorder* r) {
  target = target_table;
  rec = r;
  table.clCreateBuffer = create_buffer;
  table.clCreateBufferWithProperties = create_buffer_with_properties;
  table.clCreateSubBuffer = create_sub_buffer;
  table.clSVMAlloc = svm_alloc;
  if (rec->watches_frees()) {
    table.clSVMFree = svm_free;
    table.clEnqueueSVMFree = enqueue_svm_free;
  }
  if (rec->recording()) {
    table.clRetainMemObject = retain_mem_object;
    table.clReleaseMemObject = release_mem_object;
  }
}

}  // namespace clpool::layer
