// --device opencl[:PLATFORM[:INDEX]]: replay on a real OpenCL device through the system's ICD
// loader, with a ballast of real buffers so that the replay starts with exactly --capacity free.
// This answers "would this fit on a 16 GiB card?" on a larger card, and it is how the simulated
// device is checked against hardware.
//
//   std::unique_ptr<device_backend> b = open_opencl_backend("opencl:NVIDIA", options);
//   b->check_device();                                   // refuses a device that does not enforce
//   replay_report r = replay_stream(reader, config, b->open(16ull << 30));
//   b->after_replay();                                   // refuses a replay the device moved under
//
// A real device's answers are trusted only once it has shown that it enforces its memory
// (device_check.h): check_device() fills the whole device and must be refused, which also finds
// where it reports running out (creation, first use or execution: the default --semantics); each
// replay's device, once its ballast is placed, must refuse a fill of one byte more than
// --capacity; and after the replay, with its blocks released, the same fill must stop at the same
// byte, or free memory changed during the replay (another program) and the answer is refused.
// Every refusal is device_untrusted (exit 2) saying what to do instead.
//
// Free memory at start comes from the device's free-memory query where it has one (the probe's:
// NVML on NVIDIA, CL_DEVICE_GLOBAL_FREE_MEMORY_AMD on AMD); otherwise it is taken to be
// CL_DEVICE_GLOBAL_MEM_SIZE, which a device shared with other programs (or one that keeps
// headroom) does not have: the report says which. The ballast is created and migrated
// (committed) in chunks of at most CL_DEVICE_MAX_MEM_ALLOC_SIZE, and released with the device.
#ifndef CLPOOL_TOOLS_REPLAY_OPENCL_DEVICE_H_
#define CLPOOL_TOOLS_REPLAY_OPENCL_DEVICE_H_

#include <CL/cl.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "device_model/profile.h"
#include "replay/replay.h"
#include "tools/replay/device_backend.h"

namespace clpool::replay_cli {

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

// --device opencl[:PLATFORM[:INDEX]] as a device_backend. Opens the device (throws
// opencl_unavailable naming the platforms there are) and prints one line on stderr naming it and
// where its free memory came from. Throws config_error for --profile: a real device behaves as
// it does, and a profile describes a simulated one. One device per process.
std::unique_ptr<replay::device_backend> open_opencl_backend(std::string_view device,
                                                            const backend_options& options);

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_OPENCL_DEVICE_H_
