// Platform and device entry points: the queries clinfo and PyOpenCL make, with plausible
// values derived from each device's configuration.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "mockcl/api/dispatch.h"
#include "mockcl/backing/compute_shape.h"
#include "mockcl/compiler/language.h"
#include "mockcl/runtime/runtime.h"

namespace mockcl {
// What the devices report about OpenCL C (language.h): the mock's own set, or in backing mode its
// intersection with POCL's device. Asking settles MOCKCL_BACKING's default (as a context does).
const language_caps& device_language() {
  rt().settle_backing();
  static const language_caps mock = decide_language(mock_language(), nullptr);
  return rt().pocl ? rt().pocl->language : mock;
}

// The compute limits (compute_shape.h): the preset's own, or in backing mode POCL's device's.
const compute_shape& device_shape(bool gpu) {
  rt().settle_backing();
  static const compute_shape mock_gpu = mock_shape(true), mock_cpu = mock_shape(false);
  if (rt().pocl) return rt().pocl->shape;
  return gpu ? mock_gpu : mock_cpu;
}

namespace {

constexpr cl_version kVersion30 = CL_MAKE_VERSION(3, 0, 0);
// free_query=amd (device_config::free_query): AMD's free-memory query and its extension.
constexpr cl_device_info kGlobalFreeMemoryAmd = 0x4039;  // CL_DEVICE_GLOBAL_FREE_MEMORY_AMD
constexpr const char* kAmdAttributeQuery = "cl_amd_device_attribute_query";

template <typename T>
cl_int set_list(size_t size, void* value, size_t* size_ret, const std::vector<T>& list) {
  return set_info(size, value, size_ret, list.empty() ? nullptr : list.data(),
                  list.size() * sizeof(T));
}

cl_int CL_API_CALL GetPlatformIDs(cl_uint num_entries, cl_platform_id* platforms,
                                  cl_uint* num_platforms) {
  api_call c(rt(), entry_point::clGetPlatformIDs);
  if ((num_entries == 0 && platforms) || (!platforms && !num_platforms))
    return c.ret(CL_INVALID_VALUE);
  if (!rt().platform_ok()) {
    if (num_platforms) *num_platforms = 0;
    return c.ret(CL_PLATFORM_NOT_FOUND_KHR);
  }
  if (platforms) platforms[0] = &rt().platform;
  if (num_platforms) *num_platforms = 1;
  return c.ret(CL_SUCCESS);
}

cl_int CL_API_CALL GetPlatformInfo(cl_platform_id p, cl_platform_info param, size_t size,
                                   void* value, size_t* size_ret) {
  api_call c(rt(), entry_point::clGetPlatformInfo);
  if (p && p != &rt().platform) return c.ret(CL_INVALID_PLATFORM);
  switch (param) {
    case CL_PLATFORM_PROFILE:
      return c.ret(set_info_s(size, value, size_ret, "FULL_PROFILE"));
    case CL_PLATFORM_VERSION:
      return c.ret(set_info_s(size, value, size_ret, "OpenCL 3.0 mockcl"));
    case CL_PLATFORM_NAME:
      return c.ret(set_info_s(size, value, size_ret, "mockcl"));
    case CL_PLATFORM_VENDOR:
      return c.ret(set_info_s(size, value, size_ret, "clpool mockcl"));
    case CL_PLATFORM_EXTENSIONS:
      return c.ret(set_info_s(size, value, size_ret, "cl_khr_icd"));
    case CL_PLATFORM_ICD_SUFFIX_KHR:
      return c.ret(set_info_s(size, value, size_ret, "MOCK"));
    case CL_PLATFORM_HOST_TIMER_RESOLUTION:
      return c.ret(set_info_v(size, value, size_ret, cl_ulong{1}));
    case CL_PLATFORM_NUMERIC_VERSION:
      return c.ret(set_info_v(size, value, size_ret, kVersion30));
    case CL_PLATFORM_EXTENSIONS_WITH_VERSION: {
      cl_name_version nv{};
      nv.version = CL_MAKE_VERSION(1, 0, 0);
      std::strcpy(nv.name, "cl_khr_icd");
      return c.ret(set_info_v(size, value, size_ret, nv));
    }
    default:
      return c.ret(CL_INVALID_VALUE);
  }
}

cl_int CL_API_CALL GetDeviceIDs(cl_platform_id p, cl_device_type type, cl_uint num_entries,
                                cl_device_id* devices, cl_uint* num_devices) {
  api_call c(rt(), entry_point::clGetDeviceIDs);
  if (cl_int f = c.fault()) return c.ret(f);
  if (p && p != &rt().platform) return c.ret(CL_INVALID_PLATFORM);
  if ((num_entries == 0 && devices) || (!devices && !num_devices)) return c.ret(CL_INVALID_VALUE);
  if (!valid_device_type(type)) return c.ret(CL_INVALID_DEVICE_TYPE);
  cl_uint n = 0;
  for (size_t i = 0; i < rt().devices.size(); ++i) {
    if (!device_of_type(type, i, rt().devices[i].cfg.gpu)) continue;
    if (devices && n < num_entries) devices[n] = &rt().device_handles[i];
    ++n;
  }
  if (num_devices) *num_devices = n;
  return c.ret(n ? CL_SUCCESS : CL_DEVICE_NOT_FOUND);
}

// The answer to one device query, written to the caller's buffer (set_info* over it).
struct device_answer {
  size_t size;
  void* value;
  size_t* size_ret;
  template <class T>
  cl_int v(T x) const {
    return set_info_v(size, value, size_ret, x);
  }
  cl_int s(const std::string& x) const { return set_info_s(size, value, size_ret, x); }
  cl_int none() const { return set_info(size, value, size_ret, nullptr, 0); }
  template <class L>
  cl_int list(const L& l) const {
    return set_list(size, value, size_ret, l);
  }
  // The backing device's own answer (images in backing mode: POCL creates them).
  cl_int backing(cl_device_info param) const {
    return rt().pocl->d->clGetDeviceInfo(rt().pocl->device, param, size, value, size_ret);
  }
};

// The device queries, in four groups; each answers its own and returns nothing for the others.
// The compute limits: units, work sizes, vector widths, clock, images (the backing device's
// with images), pipes and on-device queues (none).
std::optional<cl_int> compute_info(cl_device_info param, const device_config& d,
                                   const device_answer& a) {
  // Compute units, work sizes, vector widths, local memory, parameter limits, clock.
  const language_caps& language = device_language();
  if (auto s = shape_info(device_shape(d.gpu), language.fp64, language.fp16, param, a.size, a.value,
                          a.size_ret))
    return s;
  switch (param) {
    case CL_DEVICE_TYPE:
      return a.v(cl_device_type(d.gpu ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_CPU));
    case CL_DEVICE_VENDOR_ID:
      return a.v(cl_uint{0x6d6f636b});
    case CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS:
      return a.v(cl_uint{3});
    case CL_DEVICE_ADDRESS_BITS:
      return a.v(cl_uint{64});
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE:
      return a.v(cl_ulong{d.max_alloc});
    case CL_DEVICE_IMAGE_SUPPORT:
      return a.v(cl_bool(device_language().images ? CL_TRUE : CL_FALSE));
    // With images (backing mode), their limits are the backing device's: POCL creates them.
    case CL_DEVICE_MAX_READ_IMAGE_ARGS:
    case CL_DEVICE_MAX_WRITE_IMAGE_ARGS:
    case CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS:
    case CL_DEVICE_MAX_SAMPLERS:
    case CL_DEVICE_IMAGE_PITCH_ALIGNMENT:
    case CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT:
      if (device_language().images) return a.backing(param);
      return a.v(cl_uint{0});
    case CL_DEVICE_IMAGE2D_MAX_WIDTH:
    case CL_DEVICE_IMAGE2D_MAX_HEIGHT:
    case CL_DEVICE_IMAGE3D_MAX_WIDTH:
    case CL_DEVICE_IMAGE3D_MAX_HEIGHT:
    case CL_DEVICE_IMAGE3D_MAX_DEPTH:
    case CL_DEVICE_IMAGE_MAX_BUFFER_SIZE:
    case CL_DEVICE_IMAGE_MAX_ARRAY_SIZE:
      if (device_language().images) return a.backing(param);
      return a.v(size_t{0});
    case CL_DEVICE_MAX_PIPE_ARGS:
    case CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS:
    case CL_DEVICE_PIPE_MAX_PACKET_SIZE:
    case CL_DEVICE_MAX_ON_DEVICE_QUEUES:
    case CL_DEVICE_MAX_ON_DEVICE_EVENTS:
    case CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE:
    case CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE:
    case CL_DEVICE_MAX_NUM_SUB_GROUPS:
    case CL_DEVICE_PARTITION_MAX_SUB_DEVICES:
    case CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT:
    case CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT:
    case CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT:
      return a.v(cl_uint{0});
    case CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE:
    case CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE:
      return a.v(size_t{0});
    default:
      return std::nullopt;
  }
}

// Memory and arithmetic: parameter and alignment limits, the fp configurations, caches and sizes.
std::optional<cl_int> memory_info(cl_device_info param, const device_config& d,
                                  const device_answer& a) {
  switch (param) {
    case CL_DEVICE_MEM_BASE_ADDR_ALIGN:
      return a.v(kMemBaseAddrAlignBits);
    case CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE:
      return a.v(cl_uint{128});
    case CL_DEVICE_HALF_FP_CONFIG:
      return a.v(half_fp_config(device_language()));
    case CL_DEVICE_GLOBAL_MEM_SIZE:
      return a.v(cl_ulong{d.reported});
    case CL_DEVICE_ERROR_CORRECTION_SUPPORT:
      return a.v(cl_bool{CL_FALSE});
    case CL_DEVICE_HOST_UNIFIED_MEMORY:
      return a.v(cl_bool(d.gpu ? CL_FALSE : CL_TRUE));
    case CL_DEVICE_PROFILING_TIMER_RESOLUTION:
      return a.v(size_t{1});
    default:
      return std::nullopt;
  }
}

// What the device supports: availability, work groups, execution and queue properties.
std::optional<cl_int> capability_info(cl_device_info param,
                                      const device_config& /*d: not needed here*/,
                                      const device_answer& a) {
  switch (param) {
    case CL_DEVICE_ENDIAN_LITTLE:
    case CL_DEVICE_AVAILABLE:
    case CL_DEVICE_COMPILER_AVAILABLE:
    case CL_DEVICE_LINKER_AVAILABLE:
    case CL_DEVICE_PREFERRED_INTEROP_USER_SYNC:
      return a.v(cl_bool{CL_TRUE});
    case CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT:
      return a.v(cl_bool(device_language().non_uniform_work_groups ? CL_TRUE : CL_FALSE));
    case CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT:
    case CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT:
    case CL_DEVICE_PIPE_SUPPORT:
    case CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS:
      return a.v(cl_bool{CL_FALSE});
    case CL_DEVICE_EXECUTION_CAPABILITIES:
      return a.v(cl_device_exec_capabilities{CL_EXEC_KERNEL});
    case CL_DEVICE_QUEUE_ON_HOST_PROPERTIES:
      return a.v(cl_command_queue_properties(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE |
                                             CL_QUEUE_PROFILING_ENABLE));
    case CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES:
    case CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES:
      return a.v(cl_bitfield{0});
    case CL_DEVICE_PLATFORM:
      return a.v(static_cast<cl_platform_id>(&rt().platform));
    default:
      return std::nullopt;
  }
}

// What the device is: its names, versions, extensions and features, partitions, SVM, atomics.
std::optional<cl_int> identity_info(cl_device_info param, const device_config& d,
                                    const device_answer& a) {
  switch (param) {
    case CL_DEVICE_NAME:
      return a.s(d.name);
    case CL_DEVICE_VENDOR:
      return a.s("clpool mockcl");
    case CL_DRIVER_VERSION:
      return a.s("1.0");
    case CL_DEVICE_PROFILE:
      return a.s("FULL_PROFILE");
    case CL_DEVICE_VERSION:
      return a.s("OpenCL 3.0 mockcl");
    case CL_DEVICE_OPENCL_C_VERSION:
      return a.s("OpenCL C 1.2 mockcl");
    case CL_DEVICE_EXTENSIONS:
      return a.s(extension_string(device_language()) +
                 (d.free_query ? " " + std::string(kAmdAttributeQuery) : ""));
    case CL_DEVICE_BUILT_IN_KERNELS:
      return a.s("");
    case CL_DEVICE_IL_VERSION:
      return a.s("");
    case CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED:
      return a.s("v0000-00-00-00");
    case CL_DEVICE_PARENT_DEVICE:
      return a.v(cl_device_id{nullptr});
    case CL_DEVICE_PARTITION_PROPERTIES:
      return a.v(cl_device_partition_property{0});
    case CL_DEVICE_PARTITION_AFFINITY_DOMAIN:
      return a.v(cl_device_affinity_domain{0});
    case CL_DEVICE_PARTITION_TYPE:
      return a.none();
    case CL_DEVICE_REFERENCE_COUNT:
      return a.v(cl_uint{1});
    case CL_DEVICE_SVM_CAPABILITIES:
      return a.v(cl_device_svm_capabilities(d.svm ? svm_capabilities(rt()) : 0));
    case CL_DEVICE_NUMERIC_VERSION:
      return a.v(kVersion30);
    case CL_DEVICE_EXTENSIONS_WITH_VERSION: {
      std::vector<cl_name_version> ext = extensions_with_version(device_language());
      if (d.free_query) {
        ext.emplace_back();
        ext.back().version = CL_MAKE_VERSION(1, 0, 0);
        std::strcpy(ext.back().name, kAmdAttributeQuery);
      }
      return a.list(ext);
    }
    case CL_DEVICE_OPENCL_C_ALL_VERSIONS: {
      std::vector<cl_name_version> nv;
      for (cl_version ver : device_language().c_versions) {
        nv.emplace_back();
        nv.back().version = ver;
        std::strcpy(nv.back().name, "OpenCL C");
      }
      return a.list(nv);
    }
    case CL_DEVICE_OPENCL_C_FEATURES:
      return a.list(c_features(device_language()));
    case CL_DEVICE_ILS_WITH_VERSION:
    case CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION:
      return a.none();
    case CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES:
      return a.v(device_language().atomic_memory);
    case CL_DEVICE_ATOMIC_FENCE_CAPABILITIES:
      return a.v(device_language().atomic_fence);
    default:
      return std::nullopt;
  }
}

cl_int CL_API_CALL GetDeviceInfo(cl_device_id h, cl_device_info param, size_t size, void* value,
                                 size_t* size_ret) {
  api_call c(rt(), entry_point::clGetDeviceInfo);
  _cl_device_id* dev = rt().device(h);
  if (!dev) return c.ret(CL_INVALID_DEVICE);
  const device_config& d = rt().devices[dev->index].cfg;
  const device_answer a{size, value, size_ret};
  if (param == kGlobalFreeMemoryAmd) {
    // free_query=amd: the device's free memory and its largest free block, in KiB, as AMD's
    // driver answers (what clpool_probe and clpool_replay --device opencl read).
    if (!d.free_query) return c.ret(CL_INVALID_VALUE);
    const auto& memory = rt().devices[dev->index].memory;
    const uint64_t free =
        memory.capacity() > memory.committed() ? memory.capacity() - memory.committed() : 0;
    const size_t kib[2] = {static_cast<size_t>(free / 1024), static_cast<size_t>(free / 1024)};
    return c.ret(set_info(size, value, size_ret, kib, sizeof kib));
  }
  for (auto group : {compute_info, memory_info, capability_info, identity_info}) {
    if (const std::optional<cl_int> status = group(param, d, a)) return c.ret(*status);
  }
  return c.ret(CL_INVALID_VALUE);
}

cl_int CL_API_CALL RetainDevice(cl_device_id h) {
  api_call c(rt(), entry_point::clRetainDevice);
  return c.ret(rt().device(h) ? CL_SUCCESS : CL_INVALID_DEVICE);
}

cl_int CL_API_CALL ReleaseDevice(cl_device_id h) {
  api_call c(rt(), entry_point::clReleaseDevice);
  return c.ret(rt().device(h) ? CL_SUCCESS : CL_INVALID_DEVICE);
}

cl_int CL_API_CALL CreateSubDevices(cl_device_id h, const cl_device_partition_property*, cl_uint,
                                    cl_device_id*, cl_uint*) {
  api_call c(rt(), entry_point::clCreateSubDevices);
  return c.ret(rt().device(h) ? CL_INVALID_VALUE : CL_INVALID_DEVICE);
}

// The one extension function the platform lists (cl_khr_icd): clIcdGetPlatformIDsKHR, which
// answers as clGetPlatformIDs does (and is counted as it). POCL gives its own for the same name.
// icd.cc's exported clGetExtensionFunctionAddress is the loader's, with its own copy.
void* extension_function(const char* name) {
  if (name && std::strcmp(name, "clIcdGetPlatformIDsKHR") == 0)
    return reinterpret_cast<void*>(&GetPlatformIDs);
  return nullptr;
}

void* CL_API_CALL GetExtensionFunctionAddress(const char* name) { return extension_function(name); }

void* CL_API_CALL GetExtensionFunctionAddressForPlatform(cl_platform_id p, const char* name) {
  return p == &rt().platform ? extension_function(name) : nullptr;
}

cl_int CL_API_CALL UnloadCompiler() { return CL_SUCCESS; }
cl_int CL_API_CALL UnloadPlatformCompiler(cl_platform_id) { return CL_SUCCESS; }

cl_int CL_API_CALL GetHostTimer(cl_device_id h, cl_ulong* t) {
  api_call c(rt(), entry_point::clGetHostTimer);
  if (!rt().device(h)) return c.ret(CL_INVALID_DEVICE);
  if (!t) return c.ret(CL_INVALID_VALUE);
  *t = rt().pocl ? pocl_clock_ns() : rt().scheduler.now;  // Profiling's clock (backing.h).
  return c.ret(CL_SUCCESS);
}

cl_int CL_API_CALL GetDeviceAndHostTimer(cl_device_id h, cl_ulong* dt, cl_ulong* ht) {
  api_call c(rt(), entry_point::clGetDeviceAndHostTimer);
  if (!rt().device(h)) return c.ret(CL_INVALID_DEVICE);
  if (!dt || !ht) return c.ret(CL_INVALID_VALUE);
  *dt = *ht = rt().pocl ? pocl_clock_ns() : rt().scheduler.now;  // Profiling's clock (backing.h).
  return c.ret(CL_SUCCESS);
}

}  // namespace

void fill_platform(cl_icd_dispatch& d) {
  d.clGetPlatformIDs = GetPlatformIDs;
  d.clGetPlatformInfo = GetPlatformInfo;
  d.clGetDeviceIDs = GetDeviceIDs;
  d.clGetDeviceInfo = GetDeviceInfo;
  d.clRetainDevice = RetainDevice;
  d.clReleaseDevice = ReleaseDevice;
  d.clCreateSubDevices = CreateSubDevices;
  d.clGetExtensionFunctionAddress = GetExtensionFunctionAddress;
  d.clGetExtensionFunctionAddressForPlatform = GetExtensionFunctionAddressForPlatform;
  d.clUnloadCompiler = UnloadCompiler;
  d.clUnloadPlatformCompiler = UnloadPlatformCompiler;
  d.clGetHostTimer = GetHostTimer;
  d.clGetDeviceAndHostTimer = GetDeviceAndHostTimer;
}

}  // namespace mockcl
