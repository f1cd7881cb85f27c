#include "tools/replay/opencl_device.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "common/cl_status.h"
#include "pool/opencl/cl_error.h"
#include "cl_device/cl_device.h"
#include "cl_device/free_memory.h"
#include "tools/replay/cl_block_device.h"

namespace clpool::replay {
namespace {




bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

class opencl_device final : public cl_block_device {
 public:
  opencl_device(const opencl_backend& backend, const device_spec& spec)
      : cl_block_device(backend.device(), spec.capacity, spec.semantics) {
    if (spec.capacity > backend.free_at_start()) {
      throw opencl_unavailable("--capacity " + std::to_string(spec.capacity) +
                               " bytes: more than the device has free (" +
                               backend.description() + ")");
    }
    std::uint64_t left = backend.free_at_start() - spec.capacity;
    const std::uint64_t chunk = std::min<std::uint64_t>(backend.max_alloc(), std::uint64_t{1} << 30);
    try {
      while (left > 0) {
        const std::uint64_t bytes = std::min(left, chunk);
        cl_int s = CL_SUCCESS;
        cl_mem m = clCreateBuffer(context(), CL_MEM_READ_WRITE, bytes, nullptr, &s);
        if (m != nullptr) ballast_.push_back(m);
        if (s == CL_SUCCESS) {
          s = clEnqueueMigrateMemObjects(queue(), 1, &m, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED,
                                         0, nullptr, nullptr);
        }
        if (s == CL_SUCCESS) s = clFinish(queue());
        if (common::is_out_of_memory_status(s)) {
          throw opencl_unavailable(
              "the device could not hold the ballast that leaves --capacity free: it refused " +
              std::to_string(bytes) + " bytes with " + std::to_string(left - bytes) +
              " still to place; it has less free memory than " + backend.description());
        }
        opencl::throw_if_failed(s, "ballast buffer", std::to_string(bytes) + " bytes");
        left -= bytes;
      }
    } catch (...) {
      release_ballast();
      throw;
    }
    if (backend.free_memory_query()) baseline_free_ = backend.free_memory_query()();
    query_ = backend.free_memory_query();
  }

  ~opencl_device() override {
    close();
    release_ballast();
  }

  // Measured where the device can say (its free memory fell by this much since the ballast was
  // placed); otherwise the committed blocks' sizes, the device's rounding unknown.
  std::uint64_t used_bytes() const noexcept override {
    if (baseline_free_ && query_) {
      if (const auto now = query_(); now && *now <= *baseline_free_) return *baseline_free_ - *now;
    }
    return committed_block_bytes();
  }
  std::uint64_t peak_used_bytes() const noexcept override { return peak_committed_block_bytes(); }
  std::uint64_t requested_bytes() const noexcept override { return committed_block_bytes(); }

 private:
  void release_ballast() noexcept {
    for (cl_mem m : ballast_) clReleaseMemObject(m);
    ballast_.clear();
  }

  std::vector<cl_mem> ballast_;
  std::function<std::optional<std::uint64_t>()> query_;
  std::optional<std::uint64_t> baseline_free_;
};

}  // namespace

opencl_target parse_opencl_target(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return config_error("--device: '" + std::string(text) + "' " + why +
                        " (expected opencl, opencl:PLATFORM or opencl:PLATFORM:INDEX; PLATFORM an "
                        "index or part of the platform's name)");
  };
  if (text.substr(0, 6) != "opencl") throw bad("is not an OpenCL device");
  std::string_view rest = text.substr(6);
  opencl_target t;
  if (rest.empty()) return t;
  if (rest[0] != ':') throw bad("is not an OpenCL device");
  rest.remove_prefix(1);
  const std::size_t colon = rest.find(':');
  t.platform = std::string(rest.substr(0, colon));
  if (t.platform.empty()) throw bad("names no platform");
  if (colon != std::string_view::npos) {
    const std::string_view index = rest.substr(colon + 1);
    unsigned value = 0;
    if (!all_digits(index) ||
        std::from_chars(index.data(), index.data() + index.size(), value).ec != std::errc()) {
      throw bad("has a device index that is not a small whole number");
    }
    t.index = value;
  }
  return t;
}

opencl_backend& opencl_backend::open(const opencl_target& target) {
  static std::unique_ptr<opencl_backend> backend;
  if (backend) return *backend;
  cl_device::device_info info;
  try {
    info = cl_device::select_device(target.platform.empty() ? std::nullopt
                                                        : std::optional<std::string>(target.platform),
                                target.index,
                                {"--device opencl:PLATFORM", "--device opencl:PLATFORM:INDEX"});
  } catch (const cl_device::selection_error& e) {
    throw opencl_unavailable(e.what());
  }
  backend.reset(new opencl_backend());
  backend->device_ = info.device;
  backend->max_alloc_ = info.max_alloc != 0 ? info.max_alloc : info.global_mem;
  // The probe's free-memory queries (NVML on NVIDIA, AMD's device query), where the device has one.
  const cl_device::free_memory_query query = cl_device::find_free_memory_query(info);
  const std::optional<std::uint64_t> free = query.read ? query.read() : std::nullopt;
  if (free) {
    backend->free_at_start_ = *free;
    backend->free_measured_ = true;
    backend->query_ = query.read;
  } else {
    backend->free_at_start_ = info.global_mem;
  }
  backend->description_ =
      info.platform_name + " / " + info.device_name + ", " + std::to_string(backend->free_at_start_) +
      " bytes free at start (" +
      (backend->free_measured_ ? "measured: " + query.name
                               : std::string("as reported: the device has no free-memory query, so "
                                             "the ballast assumes all of CL_DEVICE_GLOBAL_MEM_SIZE "
                                             "is free")) +
      ")";
  return *backend;
}

device_spec opencl_backend::spec(std::uint64_t capacity, alloc_semantics semantics,
                                 const device_model::device_profile& profile) {
  device_spec d{.capacity = capacity, .semantics = semantics, .backend = "opencl"};
  d.profile = profile;
  d.make_device = [this](const device_spec& s) -> std::unique_ptr<replay_device> {
    return std::make_unique<opencl_device>(*this, s);
  };
  return d;
}

}  // namespace clpool::replay
