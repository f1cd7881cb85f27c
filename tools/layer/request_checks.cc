#include "tools/layer/request_checks.h"

#include <algorithm>
#include <bit>
#include <vector>

#include "device_model/device_memory.h"

namespace clpool::layer {
namespace {

// The context's devices; nothing when the driver does not say (an invalid context, or a target
// without clGetContextInfo).
std::optional<std::vector<cl_device_id>> devices_of(const cl_icd_dispatch& target,
                                                    cl_context context, bool& invalid_context) {
  invalid_context = false;
  if (target.clGetContextInfo == nullptr || target.clGetDeviceInfo == nullptr) return std::nullopt;
  size_t bytes = 0;
  const cl_int status = target.clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, nullptr, &bytes);
  if (status == CL_INVALID_CONTEXT) invalid_context = true;
  if (status != CL_SUCCESS || bytes < sizeof(cl_device_id)) return std::nullopt;
  std::vector<cl_device_id> devices(bytes / sizeof(cl_device_id));
  if (target.clGetContextInfo(context, CL_CONTEXT_DEVICES, devices.size() * sizeof(cl_device_id),
                              devices.data(), nullptr) != CL_SUCCESS) {
    return std::nullopt;
  }
  return devices;
}

template <class T>
std::optional<T> device_info(const cl_icd_dispatch& target, cl_device_id device,
                             cl_device_info name) {
  T value{};
  if (target.clGetDeviceInfo(device, name, sizeof value, &value, nullptr) != CL_SUCCESS)
    return std::nullopt;
  return value;
}

std::optional<std::uint64_t> max_alloc_over(const cl_icd_dispatch& target,
                                            const std::vector<cl_device_id>& devices, bool largest,
                                            std::uint64_t cap) {
  std::optional<std::uint64_t> out;
  for (cl_device_id device : devices) {
    const std::optional<cl_ulong> v =
        device_info<cl_ulong>(target, device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    if (!v) return std::nullopt;
    const std::uint64_t reported = reported_under_budget(*v, cap);
    out = !out ? reported : largest ? std::max(*out, reported) : std::min(*out, reported);
  }
  return out;
}

// The SVM capabilities of the context's devices: those every device has, and those any has;
// nothing when a device does not say.
struct svm_capabilities {
  cl_device_svm_capabilities all = ~cl_device_svm_capabilities{0}, any = 0;
};
std::optional<svm_capabilities> context_svm_capabilities(const cl_icd_dispatch& target,
                                                         const std::vector<cl_device_id>& devices) {
  svm_capabilities c;
  for (cl_device_id device : devices) {
    const std::optional<cl_device_svm_capabilities> caps =
        device_info<cl_device_svm_capabilities>(target, device, CL_DEVICE_SVM_CAPABILITIES);
    if (!caps) return std::nullopt;
    c.all &= *caps;
    c.any |= *caps;
  }
  return c;
}

// The flags alone (OpenCL 3.0, "SVM Memory Flags"): known bits, at most one access flag, atomics
// only with fine-grain buffers.
bool svm_flags_invalid(cl_svm_mem_flags flags) {
  constexpr cl_svm_mem_flags access = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
  constexpr cl_svm_mem_flags known = access | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS;
  if ((flags & ~known) != 0 || std::popcount(flags & access) > 1) return true;
  return (flags & CL_MEM_SVM_ATOMICS) != 0 && (flags & CL_MEM_SVM_FINE_GRAIN_BUFFER) == 0;
}

}  // namespace

std::optional<std::uint64_t> context_max_alloc(const cl_icd_dispatch& target, cl_context context,
                                               bool largest, std::uint64_t cap) {
  bool invalid_context = false;
  const auto devices = devices_of(target, context, invalid_context);
  if (!devices) return std::nullopt;
  return max_alloc_over(target, *devices, largest, cap);
}

svm_request check_svm_request(const cl_icd_dispatch& target, cl_context context,
                              cl_svm_mem_flags flags, std::uint64_t size, cl_uint alignment,
                              const device_model::device_profile& profile, std::uint64_t cap) {
  const svm_request invalid{.invalid = true};
  if (size == 0 || svm_flags_invalid(flags) || (alignment & (alignment - 1)) != 0) return invalid;
  bool invalid_context = false;
  const auto devices = devices_of(target, context, invalid_context);
  if (!devices) return invalid_context ? invalid : svm_request{};  // unknown: the driver decides
  if (const auto caps = context_svm_capabilities(target, *devices)) {
    // Invalid when no device of the context supports SVM (one without it, beside one with it,
    // leaves a plain request valid), and a fine-grain or atomics flag when a device lacks it.
    if (caps->any == 0) return invalid;
    if ((flags & CL_MEM_SVM_FINE_GRAIN_BUFFER) && !(caps->all & CL_DEVICE_SVM_FINE_GRAIN_BUFFER))
      return invalid;
    if ((flags & CL_MEM_SVM_ATOMICS) && !(caps->all & CL_DEVICE_SVM_ATOMICS)) return invalid;
  }
  const std::optional<std::uint64_t> max_alloc = max_alloc_over(target, *devices, false, cap);
  if (max_alloc && device_model::exceeds_max_alloc(profile, size, *max_alloc))
    return svm_request{.above_max_alloc = *max_alloc};
  return {};
}

}  // namespace clpool::layer
