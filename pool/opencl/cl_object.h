// RAII owners for retained OpenCL objects (context, command queue, event, memory object), and the
// few queries the allocators and pools need. Every path that creates or retains an object owns it
// through one of these, so nothing is leaked on an exception.
#ifndef CLPOOL_POOL_OPENCL_CL_OBJECT_H_
#define CLPOOL_POOL_OPENCL_CL_OBJECT_H_

// Installed headers are used outside Bazel: pick OpenCL 3.0 unless the includer chose.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace clpool::opencl {

namespace detail {
template <class T>
struct cl_ref_traits;
template <>
struct cl_ref_traits<cl_context> {
  static cl_int retain(cl_context c) { return clRetainContext(c); }
  static cl_int release(cl_context c) { return clReleaseContext(c); }
};
template <>
struct cl_ref_traits<cl_command_queue> {
  static cl_int retain(cl_command_queue q) { return clRetainCommandQueue(q); }
  static cl_int release(cl_command_queue q) { return clReleaseCommandQueue(q); }
};
template <>
struct cl_ref_traits<cl_event> {
  static cl_int retain(cl_event e) { return clRetainEvent(e); }
  static cl_int release(cl_event e) { return clReleaseEvent(e); }
};
template <>
struct cl_ref_traits<cl_mem> {
  static cl_int retain(cl_mem m) { return clRetainMemObject(m); }
  static cl_int release(cl_mem m) { return clReleaseMemObject(m); }
};
}  // namespace detail

// Owns one reference to an OpenCL object. Move-only; copying is explicit through retain().
template <class T>
class cl_ref {
 public:
  cl_ref() noexcept = default;

  // Takes over a reference the caller already owns (e.g. the result of clCreateBuffer).
  static cl_ref adopt(T object) noexcept { return cl_ref(object); }

  // Adds a reference to `object` (clRetainX) and owns it. Throws cl_error if the retain fails
  // (an invalid object). A null `object` gives an empty cl_ref.
  static cl_ref retain(T object);

  cl_ref(cl_ref&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  cl_ref& operator=(cl_ref&& other) noexcept {
    if (this != &other) {
      reset();
      object_ = std::exchange(other.object_, nullptr);
    }
    return *this;
  }
  cl_ref(const cl_ref&) = delete;
  cl_ref& operator=(const cl_ref&) = delete;
  ~cl_ref() { reset(); }

  // Drops the reference, if any.
  void reset() noexcept {
    if (object_ != nullptr) detail::cl_ref_traits<T>::release(std::exchange(object_, nullptr));
  }

  // Gives up ownership without releasing; the caller now owns the reference.
  T release_ownership() noexcept { return std::exchange(object_, nullptr); }

  T get() const noexcept { return object_; }
  explicit operator bool() const noexcept { return object_ != nullptr; }

 private:
  explicit cl_ref(T object) noexcept : object_(object) {}
  T object_ = nullptr;
};

using context_ref = cl_ref<cl_context>;
using queue_ref = cl_ref<cl_command_queue>;
using event_ref = cl_ref<cl_event>;
using mem_ref = cl_ref<cl_mem>;

// Queries. Each throws cl_error naming the failed call.

// The context a queue belongs to, and its device.
cl_context queue_context(cl_command_queue queue);
cl_device_id queue_device(cl_command_queue queue);

// True if the queue was created with CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE.
bool queue_is_out_of_order(cl_command_queue queue);

// Every device of a context.
std::vector<cl_device_id> context_devices(cl_context context);

// The device's OpenCL version as major * 100 + minor * 10 ("OpenCL 1.2 ..." gives 120). Throws
// cl_error if the version string cannot be read, and returns 0 if it cannot be parsed.
int device_version(cl_device_id device);

// CL_DEVICE_MAX_MEM_ALLOC_SIZE.
std::uint64_t device_max_alloc(cl_device_id device);

// The smallest CL_DEVICE_MAX_MEM_ALLOC_SIZE of the context's devices: a buffer that size is one
// every device allows (a device that reports 0 is passed over). No limit (UINT64_MAX) when a
// query fails or no device reports one.
std::uint64_t context_max_alloc(cl_context context) noexcept;

// CL_DEVICE_SVM_CAPABILITIES, or 0 when the device does not support the query (OpenCL < 2.0).
cl_device_svm_capabilities device_svm_capabilities(cl_device_id device) noexcept;

// CL_DEVICE_NAME / CL_PLATFORM_NAME as strings ("" on failure).
std::string device_name(cl_device_id device) noexcept;
std::string platform_name(cl_platform_id platform) noexcept;

}  // namespace clpool::opencl

#endif  // CLPOOL_POOL_OPENCL_CL_OBJECT_H_
