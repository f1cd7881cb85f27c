#include "tools/replay/device_backend.h"

#include "tools/replay/mockcl_device.h"
#include "tools/replay/opencl_device.h"

namespace clpool::replay {
namespace {

// --device sim: the built-in simulated device (device.h), bookkeeping only.
class sim_backend final : public device_backend {
 public:
  explicit sim_backend(const backend_options& options) : options_(options) {}
  device_spec spec(std::uint64_t capacity) override {
    device_spec d;
    d.capacity = capacity;
    d.semantics = options_.semantics;
    d.host_capacity = options_.host_capacity;
    d.profile = options_.profile;
    return d;
  }

 private:
  backend_options options_;
};

}  // namespace

std::unique_ptr<device_backend> open_backend(std::string_view device, const backend_options& options) {
  const bool opencl = device.substr(0, 6) == "opencl";
  if (device != "sim" && device != "mockcl" && !opencl) {
    throw config_error("--device: '" + std::string(device) +
                       "' is not sim, mockcl or opencl[:PLATFORM[:INDEX]]");
  }
  if (!options.mockcl_so.empty() && device != "mockcl") {
    throw config_error("--mockcl-so needs --device mockcl");
  }
  if (device == "sim") return std::make_unique<sim_backend>(options);
  if (device == "mockcl") return open_mockcl_backend(options);
  return open_opencl_backend(device, options);
}

}  // namespace clpool::replay
