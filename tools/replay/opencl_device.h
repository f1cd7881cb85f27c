// --device opencl[:PLATFORM[:INDEX]]: replay on a real OpenCL device through the system's ICD
// loader, with a ballast of real buffers so that the replay starts with exactly --capacity free.
// This answers "would this fit on a 16 GiB card?" on a larger card, and it is how the simulated
// device is checked against hardware.
//
//   opencl_backend& b = opencl_backend::open(parse_opencl_target("opencl:NVIDIA"));
//   replay_report r = replay_stream(reader, config, b.spec(16ull << 30, alloc_semantics::deferred, p));
//
// Free memory at start comes from the device's free-memory query where it has one (the probe's:
// NVML on NVIDIA, CL_DEVICE_GLOBAL_FREE_MEMORY_AMD on AMD); otherwise it is taken to be CL_DEVICE_GLOBAL_MEM_SIZE, which
// a device shared with other programs (or one that keeps headroom) does not have: the report
// says which. Blocks and first use are cl_block_device's; the ballast is created and migrated
// (committed) in chunks of at most CL_DEVICE_MAX_MEM_ALLOC_SIZE, and released with the device.
#ifndef CLPOOL_TOOLS_REPLAY_OPENCL_DEVICE_H_
#define CLPOOL_TOOLS_REPLAY_OPENCL_DEVICE_H_

#include <CL/cl.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "device_model/profile.h"
#include "tools/replay/replay.h"

namespace clpool::replay {

// The device cannot be used as asked: no such platform or device, or it cannot hold the ballast.
class opencl_unavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Which device `--device opencl[:PLATFORM[:INDEX]]` names: PLATFORM is an index (digits) or a
// case-insensitive part of exactly one platform's name; INDEX the device's index on it. Chosen as
// clpool_probe chooses (//cl_device:cl_device).
struct opencl_target {
  std::string platform;           // empty: the first GPU of any platform, else the first device
  std::optional<unsigned> index;  // empty: the platform's first GPU, else its first device
};
// Throws config_error for anything else ("opencl:", "opencl:x:y", "opencl:0:-1", ...).
opencl_target parse_opencl_target(std::string_view text);

class opencl_backend {
 public:
  // Finds the device (throws opencl_unavailable naming the platforms there are) and reads its
  // sizes. One backend per process.
  static opencl_backend& open(const opencl_target& target);

  // A device_spec for a replay starting with `capacity` free. `profile` only names the kind of
  // device in the report: a real device behaves as it does.
  device_spec spec(std::uint64_t capacity, alloc_semantics semantics,
                   const device_model::device_profile& profile);

  cl_device_id device() const noexcept { return device_; }
  // "PLATFORM / DEVICE, N free at start (measured|as reported: no free-memory query)".
  const std::string& description() const noexcept { return description_; }
  std::uint64_t free_at_start() const noexcept { return free_at_start_; }
  bool free_is_measured() const noexcept { return free_measured_; }
  std::uint64_t max_alloc() const noexcept { return max_alloc_; }
  // Reads the device's free memory now (empty when the device has no query).
  const std::function<std::optional<std::uint64_t>()>& free_memory_query() const noexcept {
    return query_;
  }

 private:
  opencl_backend() = default;
  cl_device_id device_ = nullptr;
  std::string description_;
  std::uint64_t free_at_start_ = 0, max_alloc_ = 0;
  bool free_measured_ = false;
  std::function<std::optional<std::uint64_t>()> query_;
};

}  // namespace clpool::replay

#endif  // CLPOOL_TOOLS_REPLAY_OPENCL_DEVICE_H_
