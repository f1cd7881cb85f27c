// Choosing the OpenCL device to probe (--platform, --device) and reading what it reports.
#ifndef CLPOOL_CL_DEVICE_CL_DEVICE_H_
#define CLPOOL_CL_DEVICE_CL_DEVICE_H_

#include <CL/cl.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace clpool::cl_device {

// No device matches what the user asked for, or OpenCL has none: exit code 2.
struct selection_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct device_info {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  unsigned platform_index = 0, device_index = 0;
  std::string platform_name, device_name, vendor, driver_version, device_version, extensions;
  bool gpu = false;
  std::uint64_t global_mem = 0;  // CL_DEVICE_GLOBAL_MEM_SIZE
  std::uint64_t max_alloc = 0;   // CL_DEVICE_MAX_MEM_ALLOC_SIZE
};

// `platform`: an index ("0") or a case-insensitive part of the platform's name that exactly one
// platform has. `device`: an index among that platform's devices. Without `device`: the
// platform's first GPU, else its first device; without either: the first GPU of any platform,
// else the first device. Throws selection_error naming what exists.
// `labels` name the two choices in messages (the probe's flags by default).
struct selection_labels {
  std::string platform = "--platform";
  std::string device = "--device";
};
device_info select_device(const std::optional<std::string>& platform,
                          const std::optional<unsigned>& device,
                          const selection_labels& labels = {});

// What `device` (the `device_index`-th of `platform`, itself the `platform_index`-th) reports.
device_info describe_device(cl_platform_id platform, unsigned platform_index, cl_device_id device,
                            unsigned device_index);

// A device index as typed after `flag` ("--device"): digits only, at most 9 of them. Throws
// selection_error "FLAG: 'TEXT' is not an index (0, 1, ...)" for anything else.
unsigned parse_device_index(const std::string& text, const std::string& flag);

// One line per platform and device, with the indices --platform and --device take.
std::string list_devices();

}  // namespace clpool::cl_device

#endif  // CLPOOL_CL_DEVICE_CL_DEVICE_H_
