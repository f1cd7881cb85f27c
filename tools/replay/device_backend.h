// Device backends: where a replay's blocks live (--device). The seam itself is the engine's
// (replay/device.h: device_backend::open(capacity) -> replay_device); this is clpool_replay's
// choice among its backends. Every backend receives the profile already loaded (once, by the
// caller).
//
//   backend_options o{.profile = load_profile("nvidia"), .profile_ref = "nvidia", ...};
//   std::unique_ptr<device_backend> b = open_backend("mockcl", o);
//   replay_report r = replay_stream(reader, config, b->open(128ull << 20));
//   b->after_replay();   // throws device_untrusted if the device did not hold still
//
// The backends, one file each: sim (the default; replay/device.h's simulated_backend), mockcl
// (mockcl_device.cc) and opencl[:PLATFORM[:INDEX]] (opencl_device.cc). A new backend is a
// device_backend in a file of its own and a line in open_backend() (device_backend.cc).
#ifndef CLPOOL_TOOLS_REPLAY_DEVICE_BACKEND_H_
#define CLPOOL_TOOLS_REPLAY_DEVICE_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "device_model/profile.h"
#include "pool/pool_types.h"
#include "replay/device.h"
#include "replay/replay.h"

namespace clpool::replay_cli {

// What every backend may need, decided once by the command line.
struct backend_options {
  device_model::device_profile profile;  // loaded once, by the caller
  std::string profile_ref = "exact";     // as the user gave it (a built-in name or a file)
  bool profile_given = false;            // --profile was on the command line
  replay::alloc_semantics semantics =
      replay::alloc_semantics::immediate;  // --semantics, else the profile's
  bool semantics_given =
      false;  // --semantics was given (else a real device's own failure point decides)
  std::uint64_t host_capacity = unlimited;
  std::uint64_t max_alloc = unlimited;  // --max-alloc (sim and mockcl only)
  std::string mockcl_so;                // --mockcl-so, or empty
};

// The backend `device` names ("sim", "mockcl", "opencl[:PLATFORM[:INDEX]]"). Throws
// config_error for an unknown name or options that do not fit it (--mockcl-so without mockcl,
// --profile with opencl), and the backend's own errors when it cannot be opened.
std::unique_ptr<replay::device_backend> open_backend(std::string_view device,
                                                     const backend_options& options);

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_DEVICE_BACKEND_H_
