#include "tools/layer/first_use.h"

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
block_info* find(cl_mem mem) {
  std::lock_guard lock(registry_mutex());
  auto it = mems().find(mem);
  return it == mems().end() ? nullptr : it->second;
}

// The charges one enqueue makes: each buffer or SVM block it uses that is not charged yet is
// charged before the driver sees the call. When one does not fit, the enqueue fails with the
// profile's status; when the driver then rejects the enqueue for another reason (an invalid
// argument, say), it used no memory: either way the charges it made are given back.
class enqueue_charges {
 public:
  explicit enqueue_charges(const char* call) : call_(call) {}
  enqueue_charges(const enqueue_charges&) = delete;
  enqueue_charges& operator=(const enqueue_charges&) = delete;

  // Charges `mem` (null or unknown: nothing). False when it did not fit: return status().
  bool mem(cl_mem m) {
    block_info* b = m != nullptr ? find(m) : nullptr;
    if (b == nullptr) return true;
    bool charged = false;
    status_ = rec->first_use(*b, call_, &charged);
    if (charged) mems_.push_back(b);
    return settle();
  }

  // The same for the SVM block containing `pointer` (host pointers: nothing).
  bool svm(const void* pointer) {
    if (pointer == nullptr) return true;
    const void* charged = nullptr;
    status_ = rec->first_use_svm(pointer, call_, charged);
    if (charged != nullptr) svm_.push_back(charged);
    return settle();
  }

  // The status to return when mem() or svm() said no.
  cl_int status() const { return status_; }

  // The driver's answer to the enqueue: a rejection gives back what this enqueue charged.
  cl_int finish(cl_int driver_status) {
    if (driver_status != CL_SUCCESS) undo();
    return driver_status;
  }

 private:
  bool settle() {
    if (status_ == CL_SUCCESS) return true;
    undo();
    return false;
  }

  void undo() {
    for (block_info* b : mems_) rec->undo_first_use(*b);
    for (const void* start : svm_) rec->undo_first_use_svm(start);
    mems_.clear();
    svm_.clear();
  }

  const char* call_;
  cl_int status_ = CL_SUCCESS;
  std::vector<block_info*> mems_;  // buffers this enqueue charged
  std::vector<const void*> svm_;   // SVM blocks (their start) this enqueue charged
};

// A kernel argument the layer watches: a buffer (clSetKernelArg) or an SVM pointer
// (clSetKernelArgSVMPointer).
struct kernel_arg {
  cl_mem mem = nullptr;
  const void* svm = nullptr;
};

// The buffer and SVM arguments of each kernel, by argument index.
std::unordered_map<cl_kernel, std::unordered_map<cl_uint, kernel_arg>>& kernel_args() {
  static auto* m = new std::unordered_map<cl_kernel, std::unordered_map<cl_uint, kernel_arg>>;
  return *m;
}

// Charges a launch's arguments; false when one does not fit.
bool use_kernel(enqueue_charges& charges, cl_kernel kernel) {
  std::vector<kernel_arg> args;
  {
    std::lock_guard lock(registry_mutex());
    auto it = kernel_args().find(kernel);
    if (it == kernel_args().end()) return true;
    for (const auto& [index, arg] : it->second) args.push_back(arg);
  }
  for (const kernel_arg& arg : args) {
    if (!(arg.mem != nullptr ? charges.mem(arg.mem) : charges.svm(arg.svm))) return false;
  }
  return true;
}

// Remembers (or, with an empty `arg`, forgets) argument `index` of `kernel`.
void set_arg(cl_kernel kernel, cl_uint index, kernel_arg arg) {
  std::lock_guard lock(registry_mutex());
  if (arg.mem != nullptr || arg.svm != nullptr) {
    kernel_args()[kernel][index] = arg;
  } else if (auto it = kernel_args().find(kernel); it != kernel_args().end()) {
    it->second.erase(index);
  }
}

cl_int CL_API_CALL set_kernel_arg(cl_kernel kernel, cl_uint index, size_t size, const void* value) {
  const cl_int status = target->clSetKernelArg(kernel, index, size, value);
  if (status != CL_SUCCESS) return status;
  try {
    cl_mem mem = nullptr;
    if (size == sizeof(cl_mem) && value != nullptr) mem = *static_cast<const cl_mem*>(value);
    set_arg(kernel, index, {mem != nullptr && find(mem) != nullptr ? mem : nullptr, nullptr});
  } catch (...) {
  }
  return status;
}

cl_int CL_API_CALL set_kernel_arg_svm_pointer(cl_kernel kernel, cl_uint index, const void* value) {
  const cl_int status = target->clSetKernelArgSVMPointer(kernel, index, value);
  if (status != CL_SUCCESS) return status;
  try {
    set_arg(kernel, index, {nullptr, value});
  } catch (...) {
  }
  return status;
}

cl_int CL_API_CALL release_kernel(cl_kernel kernel) {
  cl_uint refs = 0;
  const bool last = target->clGetKernelInfo(kernel, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs,
                                            nullptr) == CL_SUCCESS &&
                    refs == 1;
  const cl_int status = target->clReleaseKernel(kernel);
  if (status == CL_SUCCESS && last) {
    std::lock_guard lock(registry_mutex());
    kernel_args().erase(kernel);
  }
  return status;
}

// Each wrapper charges what its command uses, then calls the driver.
#define CHARGE(what)                      \
  do {                                    \
    if (!(what)) return charges.status(); \
  } while (0)

cl_int CL_API_CALL enqueue_read_buffer(cl_command_queue q, cl_mem b, cl_bool blocking,
                                       size_t offset, size_t size, void* ptr, cl_uint n,
                                       const cl_event* wait, cl_event* event) {
  enqueue_charges charges("clEnqueueReadBuffer");
  CHARGE(charges.mem(b));
  return charges.finish(
      target->clEnqueueReadBuffer(q, b, blocking, offset, size, ptr, n, wait, event));
}

cl_int CL_API_CALL enqueue_write_buffer(cl_command_queue q, cl_mem b, cl_bool blocking,
                                        size_t offset, size_t size, const void* ptr, cl_uint n,
                                        const cl_event* wait, cl_event* event) {
  enqueue_charges charges("clEnqueueWriteBuffer");
  CHARGE(charges.mem(b));
  return charges.finish(
      target->clEnqueueWriteBuffer(q, b, blocking, offset, size, ptr, n, wait, event));
}

cl_int CL_API_CALL enqueue_read_buffer_rect(cl_command_queue q, cl_mem b, cl_bool blocking,
                                            const size_t* buffer_origin, const size_t* host_origin,
                                            const size_t* region, size_t buffer_row_pitch,
                                            size_t buffer_slice_pitch, size_t host_row_pitch,
                                            size_t host_slice_pitch, void* ptr, cl_uint n,
                                            const cl_event* wait, cl_event* event) {
  enqueue_charges charges("clEnqueueReadBufferRect");
  CHARGE(charges.mem(b));
  return charges.finish(target->clEnqueueReadBufferRect(
      q, b, blocking, buffer_origin, host_origin, region, buffer_row_pitch, buffer_slice_pitch,
      host_row_pitch, host_slice_pitch, ptr, n, wait, event));
}

cl_int CL_API_CALL enqueue_write_buffer_rect(cl_command_queue q, cl_mem b, cl_bool blocking,
                                             const size_t* buffer_origin, const size_t* host_origin,
                                             const size_t* region, size_t buffer_row_pitch,
                                             size_t buffer_slice_pitch, size_t host_row_pitch,
                                             size_t host_slice_pitch, const void* ptr, cl_uint n,
                                             const cl_event* wait, cl_event* event) {
  enqueue_charges charges("clEnqueueWriteBufferRect");
  CHARGE(charges.mem(b));
  return charges.finish(target->clEnqueueWriteBufferRect(
      q, b, blocking, buffer_origin, host_origin, region, buffer_row_pitch, buffer_slice_pitch,
      host_row_pitch, host_slice_pitch, ptr, n, wait, event));
}

cl_int CL_API_CALL enqueue_fill_buffer(cl_command_queue q, cl_mem b, const void* pattern,
                                       size_t pattern_size, size_t offset, size_t size, cl_uint n,
                                       const cl_event* wait, cl_event* event) {
  enqueue_charges charges("clEnqueueFillBuffer");
  CHARGE(charges.mem(b));
  return charges.finish(
      target->clEnqueueFillBuffer(q, b, pattern, pattern_size, offset, size, n, wait, event));
}

cl_int CL_API_CALL enqueue_copy_buffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_off,
                                       size_t dst_off, size_t size, cl_uint n, const cl_event* wait,
                                       cl_event* event) {
  enqueue_charges charges("clEnqueueCopyBuffer");
  CHARGE(charges.mem(src) && charges.mem(dst));
  return charges.finish(
      target->clEnqueueCopyBuffer(q, src, dst, src_off, dst_off, size, n, wait, event));
}

cl_int CL_API_CALL enqueue_copy_buffer_rect(cl_command_queue q, cl_mem src, cl_mem dst,
                                            const size_t* src_origin, const size_t* dst_origin,
                                            const size_t* region, size_t src_row_pitch,
                                            size_t src_slice_pitch, size_t dst_row_pitch,
                                            size_t dst_slice_pitch, cl_uint n, const cl_event* wait,
                                            cl_event* event) {
  enqueue_charges charges("clEnqueueCopyBufferRect");
  CHARGE(charges.mem(src) && charges.mem(dst));
  return charges.finish(target->clEnqueueCopyBufferRect(
      q, src, dst, src_origin, dst_origin, region, src_row_pitch, src_slice_pitch, dst_row_pitch,
      dst_slice_pitch, n, wait, event));
}

void* CL_API_CALL enqueue_map_buffer(cl_command_queue q, cl_mem b, cl_bool blocking,
                                     cl_map_flags flags, size_t offset, size_t size, cl_uint n,
                                     const cl_event* wait, cl_event* event, cl_int* errcode_ret) {
  enqueue_charges charges("clEnqueueMapBuffer");
  cl_int status = CL_SUCCESS;
  void* mapped = nullptr;
  if (charges.mem(b)) {
    mapped =
        target->clEnqueueMapBuffer(q, b, blocking, flags, offset, size, n, wait, event, &status);
    charges.finish(mapped == nullptr && status == CL_SUCCESS ? CL_OUT_OF_RESOURCES : status);
  } else {
    status = charges.status();
  }
  if (errcode_ret != nullptr) *errcode_ret = status;
  return mapped;
}

cl_int CL_API_CALL enqueue_migrate(cl_command_queue q, cl_uint num, const cl_mem* list,
                                   cl_mem_migration_flags flags, cl_uint n, const cl_event* wait,
                                   cl_event* event) {
  enqueue_charges charges("clEnqueueMigrateMemObjects");
  // A migration to the host commits nothing on the device.
  if ((flags & CL_MIGRATE_MEM_OBJECT_HOST) == 0 && list != nullptr) {
    for (cl_uint i = 0; i < num; ++i) CHARGE(charges.mem(list[i]));
  }
  return charges.finish(target->clEnqueueMigrateMemObjects(q, num, list, flags, n, wait, event));
}

cl_int CL_API_CALL enqueue_ndrange(cl_command_queue q, cl_kernel k, cl_uint dim,
                                   const size_t* offset, const size_t* global, const size_t* local,
                                   cl_uint n, const cl_event* wait, cl_event* event) {
  enqueue_charges charges("clEnqueueNDRangeKernel");
  CHARGE(use_kernel(charges, k));
  return charges.finish(
      target->clEnqueueNDRangeKernel(q, k, dim, offset, global, local, n, wait, event));
}

cl_int CL_API_CALL enqueue_task(cl_command_queue q, cl_kernel k, cl_uint n, const cl_event* wait,
                                cl_event* event) {
  enqueue_charges charges("clEnqueueTask");
  CHARGE(use_kernel(charges, k));
  return charges.finish(target->clEnqueueTask(q, k, n, wait, event));
}

cl_int CL_API_CALL enqueue_svm_memcpy(cl_command_queue q, cl_bool blocking, void* dst,
                                      const void* src, size_t size, cl_uint n, const cl_event* wait,
                                      cl_event* event) {
  enqueue_charges charges("clEnqueueSVMMemcpy");
  CHARGE(charges.svm(src) && charges.svm(dst));
  return charges.finish(target->clEnqueueSVMMemcpy(q, blocking, dst, src, size, n, wait, event));
}

cl_int CL_API_CALL enqueue_svm_mem_fill(cl_command_queue q, void* ptr, const void* pattern,
                                        size_t pattern_size, size_t size, cl_uint n,
                                        const cl_event* wait, cl_event* event) {
  enqueue_charges charges("clEnqueueSVMMemFill");
  CHARGE(charges.svm(ptr));
  return charges.finish(
      target->clEnqueueSVMMemFill(q, ptr, pattern, pattern_size, size, n, wait, event));
}

cl_int CL_API_CALL enqueue_svm_map(cl_command_queue q, cl_bool blocking, cl_map_flags flags,
                                   void* ptr, size_t size, cl_uint n, const cl_event* wait,
                                   cl_event* event) {
  enqueue_charges charges("clEnqueueSVMMap");
  CHARGE(charges.svm(ptr));
  return charges.finish(target->clEnqueueSVMMap(q, blocking, flags, ptr, size, n, wait, event));
}

cl_int CL_API_CALL enqueue_svm_migrate(cl_command_queue q, cl_uint num, const void** ptrs,
                                       const size_t* sizes, cl_mem_migration_flags flags, cl_uint n,
                                       const cl_event* wait, cl_event* event) {
  enqueue_charges charges("clEnqueueSVMMigrateMem");
  if ((flags & CL_MIGRATE_MEM_OBJECT_HOST) == 0 && ptrs != nullptr) {
    for (cl_uint i = 0; i < num; ++i) CHARGE(charges.svm(ptrs[i]));
  }
  return charges.finish(target->clEnqueueSVMMigrateMem(q, num, ptrs, sizes, flags, n, wait, event));
}

#undef CHARGE

}  // namespace

void install_first_use(cl_icd_dispatch& table, const cl_icd_dispatch* target_table, recorder* r) {
  target = target_table;
  rec = r;
  table.clSetKernelArg = set_kernel_arg;
  table.clSetKernelArgSVMPointer = set_kernel_arg_svm_pointer;
  table.clReleaseKernel = release_kernel;
  table.clEnqueueReadBuffer = enqueue_read_buffer;
  table.clEnqueueWriteBuffer = enqueue_write_buffer;
  table.clEnqueueReadBufferRect = enqueue_read_buffer_rect;
  table.clEnqueueWriteBufferRect = enqueue_write_buffer_rect;
  table.clEnqueueFillBuffer = enqueue_fill_buffer;
  table.clEnqueueCopyBuffer = enqueue_copy_buffer;
  table.clEnqueueCopyBufferRect = enqueue_copy_buffer_rect;
  table.clEnqueueSVMMemcpy = enqueue_svm_memcpy;
  table.clEnqueueSVMMemFill = enqueue_svm_mem_fill;
  table.clEnqueueSVMMap = enqueue_svm_map;
  table.clEnqueueSVMMigrateMem = enqueue_svm_migrate;
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
