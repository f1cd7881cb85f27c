#include "pool/opencl/cl_object.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "pool/opencl/cl_error.h"

namespace clpool::opencl {

template <class T>
cl_ref<T> cl_ref<T>::retain(T object) {
  if (object == nullptr) return cl_ref();
  throw_if_failed(detail::cl_ref_traits<T>::retain(object), "clRetain (cl_ref::retain)");
  return cl_ref(object);
}

template class cl_ref<cl_context>;
template class cl_ref<cl_command_queue>;
template class cl_ref<cl_event>;
template class cl_ref<cl_mem>;

cl_context queue_context(cl_command_queue queue) {
  cl_context context = nullptr;
  throw_if_failed(
      clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(context), &context, nullptr),
      "clGetCommandQueueInfo(CL_QUEUE_CONTEXT)");
  return context;
}

cl_device_id queue_device(cl_command_queue queue) {
  cl_device_id device = nullptr;
  throw_if_failed(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(device), &device, nullptr),
                  "clGetCommandQueueInfo(CL_QUEUE_DEVICE)");
  return device;
}

bool queue_is_out_of_order(cl_command_queue queue) {
  cl_command_queue_properties props = 0;
  throw_if_failed(clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof(props), &props, nullptr),
                  "clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)");
  return (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
}

std::vector<cl_device_id> context_devices(cl_context context) {
  cl_uint n = 0;
  throw_if_failed(clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, sizeof(n), &n, nullptr),
                  "clGetContextInfo(CL_CONTEXT_NUM_DEVICES)");
  std::vector<cl_device_id> devices(n);
  if (n != 0) {
    throw_if_failed(clGetContextInfo(context, CL_CONTEXT_DEVICES, n * sizeof(cl_device_id),
                                     devices.data(), nullptr),
                    "clGetContextInfo(CL_CONTEXT_DEVICES)");
  }
  return devices;
}

std::uint64_t context_max_alloc(cl_context context) noexcept {
  std::uint64_t smallest = std::numeric_limits<std::uint64_t>::max();
  try {
    for (cl_device_id device : context_devices(context)) {
      const std::uint64_t max_alloc = device_max_alloc(device);
      if (max_alloc != 0) smallest = std::min(smallest, max_alloc);  // 0: says nothing
    }
  } catch (...) {
    return std::numeric_limits<std::uint64_t>::max();
  }
  return smallest;
}

namespace {
std::string info_string(cl_int (*get)(void*, cl_uint, size_t, void*, size_t*), void* object,
                        cl_uint param) {
  size_t size = 0;
  if (get(object, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  if (get(object, param, size, text.data(), nullptr) != CL_SUCCESS) return {};
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}
cl_int get_device_info(void* d, cl_uint p, size_t s, void* v, size_t* r) {
  return clGetDeviceInfo(static_cast<cl_device_id>(d), p, s, v, r);
}
cl_int get_platform_info(void* d, cl_uint p, size_t s, void* v, size_t* r) {
  return clGetPlatformInfo(static_cast<cl_platform_id>(d), p, s, v, r);
}
}  // namespace

int device_version(cl_device_id device) {
  size_t size = 0;
  throw_if_failed(clGetDeviceInfo(device, CL_DEVICE_VERSION, 0, nullptr, &size),
                  "clGetDeviceInfo(CL_DEVICE_VERSION)");
  const std::string text = info_string(get_device_info, device, CL_DEVICE_VERSION);
  int major = 0;
  int minor = 0;
  if (std::sscanf(text.c_str(), "OpenCL %d.%d", &major, &minor) != 2) return 0;
  return major * 100 + minor * 10;
}

std::uint64_t device_max_alloc(cl_device_id device) {
  cl_ulong value = 0;
  throw_if_failed(
      clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(value), &value, nullptr),
      "clGetDeviceInfo(CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
  return value;
}

cl_device_svm_capabilities device_svm_capabilities(cl_device_id device) noexcept {
  cl_device_svm_capabilities caps = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof(caps), &caps, nullptr) !=
      CL_SUCCESS) {
    return 0;
  }
  return caps;
}

std::string device_name(cl_device_id device) noexcept {
  try {
    return info_string(get_device_info, device, CL_DEVICE_NAME);
  } catch (...) {
    return {};
  }
}

std::string platform_name(cl_platform_id platform) noexcept {
  try {
    return info_string(get_platform_info, platform, CL_PLATFORM_NAME);
  } catch (...) {
    return {};
  }
}

}  // namespace clpool::opencl
