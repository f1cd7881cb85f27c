// The device's free memory, from a query where the device has one:
//   NVIDIA  NVML's nvmlDeviceGetMemoryInfo (libnvidia-ml.so.1 through dlopen: never a link-time
//           dependency), the NVML device found by the OpenCL device's PCI address
//   AMD     CL_DEVICE_GLOBAL_FREE_MEMORY_AMD (0x4039, cl_amd_device_attribute_query), in KiB
// Neither is required: without one the probe assumes CL_DEVICE_GLOBAL_MEM_SIZE is free and says
// so. Written from the vendors' documentation; not yet run on a GPU (none in this project's CI).
#ifndef CLPOOL_CL_DEVICE_FREE_MEMORY_H_
#define CLPOOL_CL_DEVICE_FREE_MEMORY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "cl_device/cl_device.h"

namespace clpool::cl_device {

struct free_memory_query {
  std::string name;  // "NVML nvmlDeviceGetMemoryInfo", ...; empty when the device has none
  std::string note;  // why there is none, when a vendor's query was tried and failed
  std::function<std::optional<std::uint64_t>()> read;  // bytes free now
};

// The query for `d`, or one with an empty name.
free_memory_query find_free_memory_query(const device_info& d);

}  // namespace clpool::cl_device

#endif  // CLPOOL_CL_DEVICE_FREE_MEMORY_H_
