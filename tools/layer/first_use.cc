#include "tools/layer/first_use.h"

#include <initializer_list>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace clpool::layer {
namespace {

const cl_icd_dispatch* target = nullptr;
recorder* rec = nullptr;

// Never destroyed: driver threads may run destructor callbacks during static destruction.
std::mutex& registry_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::unordered_map<cl_mem, block_info*>& mems() {
  static auto* m = new std::unordered_map<cl_mem, block_info*>;
  return *m;
}
// The buffer arguments of each kernel, by argument index.
std::unordered_map<cl_kernel, std::unordered_map<cl_uint, cl_mem>>& kernel_args() {
  static auto* m = new std::unordered_map<cl_kernel, std::unordered_map<cl_uint, cl_mem>>;
  return *m;
}

block_info* find(cl_mem mem) {
  std::lock_guard lock(registry_mutex());
  auto it = mems().find(mem);
  return it == mems().end() ? nullptr : it->second;
}

// Charges each buffer not charged yet; 0, or the first failure's status.
cl_int use(std::initializer_list<cl_mem> list, const char* call) {
  for (cl_mem m : list) {
    if (block_info* b = m != nullptr ? find(m) : nullptr) {
      if (const int s = rec->first_use(*b, call)) return s;
    }
  }
  return CL_SUCCESS;
}

cl_int use_kernel(cl_kernel kernel, const char* call) {
  std::vector<cl_mem> args;
  {
    std::lock_guard lock(registry_mutex());
    auto it = kernel_args().find(kernel);
    if (it == kernel_args().end()) return CL_SUCCESS;
    for (const auto& [index, mem] : it->second) args.push_back(mem);
  }
  for (cl_mem m : args) {
    if (const cl_int s = use({m}, call)) return s;
  }
  return CL_SUCCESS;
}

cl_int CL_API_CALL set_kernel_arg(cl_kernel kernel, cl_uint index, size_t size, const void* value) {
  const cl_int status = target->clSetKernelArg(kernel, index, size, value);
  if (status != CL_SUCCESS) return status;
  try {
    cl_mem mem = nullptr;
    if (size == sizeof(cl_mem) && value != nullptr) mem = *static_cast<const cl_mem*>(value);
    std::lock_guard lock(registry_mutex());
    if (mem != nullptr && mems().count(mem) != 0) {
      kernel_args()[kernel][index] = mem;
    } else if (auto it = kernel_args().find(kernel); it != kernel_args().end()) {
      it->second.erase(index);
    }
  } catch (...) {
  }
  return status;
}

cl_int CL_API_CALL release_kernel(cl_kernel kernel) {
  cl_uint refs = 0;
  const bool last = target->clGetKernelInfo(kernel, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs,
                                            nullptr) == CL_SUCCESS && refs == 1;
  const cl_int status = target->clReleaseKernel(kernel);
  if (status == CL_SUCCESS && last) {
    std::lock_guard lock(registry_mutex());
    kernel_args().erase(kernel);
  }
  return status;
}

cl_int CL_API_CALL enqueue_read_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset,
                                       size_t size, void* ptr, cl_uint n, const cl_event* wait,
                                       cl_event* event) {
  if (const cl_int s = use({b}, "clEnqueueReadBuffer")) return s;
  return target->clEnqueueReadBuffer(q, b, blocking, offset, size, ptr, n, wait, event);
}

cl_int CL_API_CALL enqueue_write_buffer(cl_command_queue q, cl_mem b, cl_bool blocking,
                                        size_t offset, size_t size, const void* ptr, cl_uint n,
                                        const cl_event* wait, cl_event* event) {
  if (const cl_int s = use({b}, "clEnqueueWriteBuffer")) return s;
  return target->clEnqueueWriteBuffer(q, b, blocking, offset, size, ptr, n, wait, event);
}

cl_int CL_API_CALL enqueue_fill_buffer(cl_command_queue q, cl_mem b, const void* pattern,
                                       size_t pattern_size, size_t offset, size_t size, cl_uint n,
                                       const cl_event* wait, cl_event* event) {
  if (const cl_int s = use({b}, "clEnqueueFillBuffer")) return s;
  return target->clEnqueueFillBuffer(q, b, pattern, pattern_size, offset, size, n, wait, event);
}

cl_int CL_API_CALL enqueue_copy_buffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_off,
                                       size_t dst_off, size_t size, cl_uint n, const cl_event* wait,
                                       cl_event* event) {
  if (const cl_int s = use({src, dst}, "clEnqueueCopyBuffer")) return s;
  return target->clEnqueueCopyBuffer(q, src, dst, src_off, dst_off, size, n, wait, event);
}

void* CL_API_CALL enqueue_map_buffer(cl_command_queue q, cl_mem b, cl_bool blocking,
                                     cl_map_flags flags, size_t offset, size_t size, cl_uint n,
                                     const cl_event* wait, cl_event* event, cl_int* errcode_ret) {
  if (const cl_int s = use({b}, "clEnqueueMapBuffer")) {
    if (errcode_ret != nullptr) *errcode_ret = s;
    return nullptr;
  }
  return target->clEnqueueMapBuffer(q, b, blocking, flags, offset, size, n, wait, event, errcode_ret);
}

cl_int CL_API_CALL enqueue_migrate(cl_command_queue q, cl_uint num, const cl_mem* list,
                                   cl_mem_migration_flags flags, cl_uint n, const cl_event* wait,
                                   cl_event* event) {
  // A migration to the host commits nothing on the device.
  if ((flags & CL_MIGRATE_MEM_OBJECT_HOST) == 0 && list != nullptr) {
    for (cl_uint i = 0; i < num; ++i) {
      if (const cl_int s = use({list[i]}, "clEnqueueMigrateMemObjects")) return s;
    }
  }
  return target->clEnqueueMigrateMemObjects(q, num, list, flags, n, wait, event);
}

cl_int CL_API_CALL enqueue_ndrange(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t* offset,
                                   const size_t* global, const size_t* local, cl_uint n,
                                   const cl_event* wait, cl_event* event) {
  if (const cl_int s = use_kernel(k, "clEnqueueNDRangeKernel")) return s;
  return target->clEnqueueNDRangeKernel(q, k, dim, offset, global, local, n, wait, event);
}

cl_int CL_API_CALL enqueue_task(cl_command_queue q, cl_kernel k, cl_uint n, const cl_event* wait,
                                cl_event* event) {
  if (const cl_int s = use_kernel(k, "clEnqueueTask")) return s;
  return target->clEnqueueTask(q, k, n, wait, event);
}

}  // namespace

void install_first_use(cl_icd_dispatch& table, const cl_icd_dispatch* target_table, recorder* r) {
  target = target_table;
  rec = r;
  table.clSetKernelArg = set_kernel_arg;
  table.clReleaseKernel = release_kernel;
  table.clEnqueueReadBuffer = enqueue_read_buffer;
  table.clEnqueueWriteBuffer = enqueue_write_buffer;
  table.clEnqueueFillBuffer = enqueue_fill_buffer;
  table.clEnqueueCopyBuffer = enqueue_copy_buffer;
  table.clEnqueueMapBuffer = enqueue_map_buffer;
  table.clEnqueueMigrateMemObjects = enqueue_migrate;
  table.clEnqueueNDRangeKernel = enqueue_ndrange;
  table.clEnqueueTask = enqueue_task;
}

void remember_mem(cl_mem mem, block_info* block) {
  std::lock_guard lock(registry_mutex());
  mems()[mem] = block;
}

void remember_sub_buffer(cl_mem sub, cl_mem parent) {
  std::lock_guard lock(registry_mutex());
  auto it = mems().find(parent);
  if (it != mems().end()) mems()[sub] = it->second;
}

void forget_mem(cl_mem mem) noexcept {
  std::lock_guard lock(registry_mutex());
  mems().erase(mem);
}

}  // namespace clpool::layer
