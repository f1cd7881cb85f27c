#include "tools/probe/cl_port.h"

#include "common/cl_status.h"

namespace clpool::probe {
namespace {

const char* call_name(int how) {
  static const char* names[] = {"clEnqueueMigrateMemObjects", "clEnqueueWriteBuffer",
                                "clEnqueueFillBuffer", "clEnqueueNDRangeKernel"};
  return names[how];
}

// Waits for the queue and returns `ev`'s status (released): CL_SUCCESS, or its error. A device
// that fails at execution says so in the event, not in clFinish's return value (mockcl's waits
// return -14 then); the event is what counts.
cl_int finish_and_status(cl_command_queue queue, cl_event ev) {
  clFinish(queue);
  cl_int status = CL_COMPLETE;
  if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) !=
      CL_SUCCESS) {
    status = CL_INVALID_EVENT;
  }
  clReleaseEvent(ev);
  return status < 0 ? status : CL_SUCCESS;
}

// A first use that said no: at its enqueue (first_use) or in its event (execution), refused for
// an out-of-memory status, else failed. `call` names the command.
attempt first_use_refusal(const std::string& call, cl_int enqueued, cl_int executed) {
  attempt a;
  a.status = enqueued != CL_SUCCESS ? enqueued : executed;
  a.where = enqueued != CL_SUCCESS ? refusal_point::first_use : refusal_point::execution;
  a.call = enqueued != CL_SUCCESS ? call : call + "'s event after clFinish";
  a.result =
      common::is_out_of_memory_status(a.status) ? attempt::kind::refused : attempt::kind::failed;
  return a;
}

}  // namespace

cl_port::cl_port(cl_device_id device) {
  cl_device_svm_capabilities caps = 0;
  svm_ = clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, nullptr) ==
             CL_SUCCESS &&
         (caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) != 0;
  cl_int err = CL_SUCCESS;
  ctx_ = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  if (ctx_ == nullptr) throw probe_failure("clCreateContext failed with " + std::to_string(err));
  queue_ = clCreateCommandQueue(ctx_, device, 0, &err);
  if (queue_ == nullptr) {
    clReleaseContext(ctx_);
    throw probe_failure("clCreateCommandQueue failed with " + std::to_string(err));
  }
}

cl_port::~cl_port() {
  for (cl_mem m : mems_) {
    if (m != nullptr) clReleaseMemObject(m);
  }
  clFinish(queue_);
  if (kernel_ != nullptr) clReleaseKernel(kernel_);
  if (program_ != nullptr) clReleaseProgram(program_);
  clReleaseCommandQueue(queue_);
  clReleaseContext(ctx_);
}

std::pair<cl_int, cl_int> cl_port::first_use(cl_mem m, use how) {
  static const unsigned char byte = 0x5a;
  cl_event ev = nullptr;
  cl_int err = CL_SUCCESS;
  switch (how) {
    case use::migrate:
      err = clEnqueueMigrateMemObjects(queue_, 1, &m, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0,
                                       nullptr, &ev);
      break;
    case use::write:
      err = clEnqueueWriteBuffer(queue_, m, CL_FALSE, 0, 1, &byte, 0, nullptr, &ev);
      break;
    case use::fill: {
      std::size_t size = 0;
      clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, nullptr);
      err = clEnqueueFillBuffer(queue_, m, &byte, 1, 0, size, 0, nullptr, &ev);
      break;
    }
    case use::kernel: {
      cl_kernel k = touch_kernel();
      if (k == nullptr) return {kernel_status_, CL_SUCCESS};
      const std::size_t one = 1;
      err = clSetKernelArg(k, 0, sizeof m, &m);
      if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &one, nullptr, 0, nullptr, &ev);
      break;
    }
  }
  if (err != CL_SUCCESS) return {err, CL_SUCCESS};
  return {CL_SUCCESS, finish_and_status(queue_, ev)};
}

std::optional<attempt> cl_port::svm_once(std::uint64_t bytes) {
  if (!svm_) return std::nullopt;
  attempt a;
  a.result = attempt::kind::refused;
  void* p = clSVMAlloc(ctx_, CL_MEM_READ_WRITE, bytes, 0);
  if (p == nullptr) {  // no status to read: NULL is how clSVMAlloc says no
    a.call = "clSVMAlloc returned NULL";
    a.no_status = true;
    a.status = CL_MEM_OBJECT_ALLOCATION_FAILURE;
    a.where = refusal_point::creation;
    return a;
  }
  static const unsigned char byte = 0x5a;
  cl_event ev = nullptr;
  const cl_int enqueued = clEnqueueSVMMemFill(queue_, p, &byte, 1, bytes, 0, nullptr, &ev);
  const cl_int executed = enqueued == CL_SUCCESS ? finish_and_status(queue_, ev) : CL_SUCCESS;
  clSVMFree(ctx_, p);
  if (enqueued == CL_SUCCESS && executed == CL_SUCCESS) {
    a.result = attempt::kind::accepted;
    return a;
  }
  return first_use_refusal("clEnqueueSVMMemFill", enqueued, executed);
}

attempt cl_port::allocate(std::uint64_t bytes) {
  attempt a;
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  if (m == nullptr) {
    a.call = "clCreateBuffer";
    a.status = err;
    a.result = err == CL_INVALID_BUFFER_SIZE          ? attempt::kind::invalid_size
               : common::is_out_of_memory_status(err) ? attempt::kind::refused
                                                      : attempt::kind::failed;
    a.where = refusal_point::creation;
    return a;
  }
  const auto [enqueued, executed] = first_use(m, use::migrate);
  if (enqueued != CL_SUCCESS || executed != CL_SUCCESS) {
    clReleaseMemObject(m);
    a = first_use_refusal("clEnqueueMigrateMemObjects", enqueued, executed);
    if (a.result == attempt::kind::refused) record_first_use_calls(bytes);
    return a;
  }
  mems_.push_back(m);
  a.result = attempt::kind::accepted;
  a.id = mems_.size() - 1;
  return a;
}

// The first time a first use is refused: does each kind of first use (migrate again, a write, a
// fill, a kernel) on a fresh buffer of the same size say so too? A real driver may commit on some
// calls and not others.
void cl_port::record_first_use_calls(std::uint64_t bytes) {
  if (recorded_) return;
  recorded_ = true;
  for (use how : {use::migrate, use::write, use::fill, use::kernel}) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    if (m == nullptr) continue;
    const auto [enqueued, executed] = first_use(m, how);
    first_use_.push_back({call_name(static_cast<int>(how)), enqueued, executed});
    clReleaseMemObject(m);
  }
}

cl_kernel cl_port::touch_kernel() {
  if (kernel_ != nullptr || kernel_status_ != CL_SUCCESS) return kernel_;
  const char* source = "__kernel void clpool_probe_touch(__global uchar* p) { p[0] = 1; }";
  program_ = clCreateProgramWithSource(ctx_, 1, &source, nullptr, &kernel_status_);
  if (program_ == nullptr) return nullptr;
  kernel_status_ = clBuildProgram(program_, 0, nullptr, nullptr, nullptr, nullptr);
  if (kernel_status_ != CL_SUCCESS) return nullptr;
  kernel_ = clCreateKernel(program_, "clpool_probe_touch", &kernel_status_);
  return kernel_;
}

void cl_port::release(std::size_t id) {
  if (id < mems_.size() && mems_[id] != nullptr) {
    clReleaseMemObject(mems_[id]);
    mems_[id] = nullptr;
  }
  // Ids of released trailing buffers are reused, so the vector does not grow with every attempt.
  while (!mems_.empty() && mems_.back() == nullptr) mems_.pop_back();
}

attempt cl_port::create_untouched(std::uint64_t bytes) {
  attempt a;
  a.call = "clCreateBuffer";
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  if (m != nullptr) {
    clReleaseMemObject(m);
    a.result = attempt::kind::accepted;
    return a;
  }
  a.status = err;
  a.result = err == CL_INVALID_BUFFER_SIZE          ? attempt::kind::invalid_size
             : common::is_out_of_memory_status(err) ? attempt::kind::refused
                                                    : attempt::kind::failed;
  return a;
}

}  // namespace clpool::probe
