// Device backends: where a replay's blocks live (--device). Every backend receives the profile
// already loaded (once, by the caller) and answers one question, "a device_spec for a replay
// starting with N bytes free"; the engine (replay.h) does the rest the same way for all.
//
//   backend_options o{.profile = load_profile("nvidia"), .profile_ref = "nvidia", ...};
//   std::unique_ptr<device_backend> b = open_backend("mockcl", o);
//   replay_report r = replay_stream(reader, config, b->spec(128ull << 20));
//   b->after_replay();   // throws device_untrusted if the device did not hold still
//
// The backends, one file each: sim (the default; device.h's simulated_device), mockcl
// (mockcl_device.cc) and opencl[:PLATFORM[:INDEX]] (opencl_device.cc). A new backend is a class
// here and a line in open_backend() (device_backend.cc).
#ifndef CLPOOL_TOOLS_REPLAY_DEVICE_BACKEND_H_
#define CLPOOL_TOOLS_REPLAY_DEVICE_BACKEND_H_

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "device_model/profile.h"
#include "pool/pool_types.h"
#include "replay/replay.h"

namespace clpool::replay {

// The device cannot give an answer that can be trusted (it does not enforce its memory, or its
// free memory changed during the replay). what() says so and what to do instead; exit 2.
class device_untrusted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What every backend may need, decided once by the command line.
struct backend_options {
  device_model::device_profile profile;  // loaded once, by the caller
  std::string profile_ref = "exact";     // as the user gave it (a built-in name or a file)
  bool profile_given = false;            // --profile was on the command line
  alloc_semantics semantics = alloc_semantics::immediate;  // --semantics, else the profile's
  bool semantics_given = false;  // --semantics was given (else a real device's own failure point decides)
  std::uint64_t host_capacity = unlimited;
  std::string mockcl_so;  // --mockcl-so, or empty
};

class device_backend {
 public:
  virtual ~device_backend() = default;
  // A spec for a replay starting with `capacity` bytes free.
  virtual device_spec spec(std::uint64_t capacity) = 0;
  // True for a real device, which behaves as it does rather than as the profile says.
  virtual bool is_real_device() const { return false; }
  // The largest capacity a replay can have (a real device's free memory), 0 when unbounded.
  virtual std::uint64_t largest_capacity() const { return 0; }
  // Throws config_error when no replay can start with `capacity` free (more than a real device
  // has). Called before the first replay.
  virtual void check_capacity(std::uint64_t capacity) const { (void)capacity; }
  // Called once before the first replay (a --capacity replay or a --min-capacity search):
  // throws device_untrusted when the device would not answer truthfully.
  virtual void check_device() {}
  // Called after each replay: throws device_untrusted when that replay's answer cannot be
  // trusted (the device changed under it).
  virtual void after_replay() {}
};

// The backend `device` names ("sim", "mockcl", "opencl[:PLATFORM[:INDEX]]"). Throws
// config_error for an unknown name or options that do not fit it (--mockcl-so without mockcl,
// --profile with opencl), and the backend's own errors when it cannot be opened.
std::unique_ptr<device_backend> open_backend(std::string_view device, const backend_options& options);

}  // namespace clpool::replay

#endif  // CLPOOL_TOOLS_REPLAY_DEVICE_BACKEND_H_
