#include "tools/replay/device_backend.h"

#include "tools/replay/mockcl_device.h"
#include "tools/replay/opencl_device.h"

namespace clpool::replay_cli {

using replay::config_error;
using replay::device_backend;
using replay::device_spec;
using replay::simulated_backend;

std::unique_ptr<device_backend> open_backend(std::string_view device,
                                             const backend_options& options) {
  const bool opencl = device.substr(0, 6) == "opencl";
  if (device != "sim" && device != "mockcl" && !opencl) {
    throw config_error("--device: '" + std::string(device) +
                       "' is not sim, mockcl or opencl[:PLATFORM[:INDEX]]");
  }
  if (!options.mockcl_so.empty() && device != "mockcl") {
    throw config_error("--mockcl-so needs --device mockcl");
  }
  if (opencl && options.max_alloc != unlimited) {
    throw config_error(
        "--max-alloc needs --device sim or mockcl: a real device has its own "
        "CL_DEVICE_MAX_MEM_ALLOC_SIZE");
  }
  if (device == "sim") {
    return std::make_unique<simulated_backend>(device_spec{.semantics = options.semantics,
                                                           .host_capacity = options.host_capacity,
                                                           .max_alloc = options.max_alloc,
                                                           .profile = options.profile});
  }
  if (device == "mockcl") return open_mockcl_backend(options);
  return open_opencl_backend(device, options);
}

}  // namespace clpool::replay_cli
