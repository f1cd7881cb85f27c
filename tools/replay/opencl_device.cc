#include "tools/replay/opencl_device.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "cl_device/cl_device.h"
#include "cl_device/free_memory.h"
#include "common/cl_status.h"
#include "common/text_escape.h"
#include "pool/opencl/cl_error.h"
#include "pool/opencl/cl_object.h"
#include "tools/replay/cl_block_device.h"
#include "tools/replay/device_check.h"

namespace clpool::replay_cli {

using replay::alloc_semantics;
using replay::config_error;
using replay::device_backend;
using replay::device_spec;
using replay::device_untrusted;
using replay::format_bytes_exact;
using replay::measured_device;
using replay::replay_device;
using replay::replay_start;

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// What to do instead, said by every refusal: the simulated devices, with a profile measured where
// the device does enforce its memory.
constexpr const char* instead =
    "Replay with --device sim or --device mockcl and a profile instead: one the probe measured "
    "on a device that enforces its memory (clpool_probe --output FILE, then --profile FILE), a "
    "built-in one (nvidia, pocl, exact), or one written by hand (tools/replay/README.md, "
    "\"Device profiles\").";

// The device as it was found, once per process.
struct opened_device {
  cl_device::device_info info;
  // Free memory at start: with a query, read while a context of ours is open (check_device()), as
  // a real driver's context takes device memory (NVIDIA's does) and every replay runs in one.
  std::uint64_t free_at_start = 0, max_alloc = 0;
  std::optional<std::uint64_t> free_before_context;  // the query's answer with no context open
  bool free_queried = false;
  std::string free_source;  // for the report
  std::string query_name;   // the free-memory query's name, "" without one
  std::function<std::optional<std::uint64_t>()> query;
  std::string description;  // the stderr line: "PLATFORM / DEVICE, N bytes free at start (...)"

  // Ballast and check buffers: at most max alloc, and at most 1 GiB so that no single buffer
  // is a large share of a device's memory.
  std::uint64_t chunk() const { return std::min<std::uint64_t>(max_alloc, std::uint64_t{1} << 30); }
};

// What the device accepted after a replay's ballast, before and after the replay.
struct replay_check {
  fill_result before, after;
  std::optional<std::uint64_t> free_queried;  // after the ballast and the first fill
  bool after_done = false;
  std::string after_error;  // the end check could not run
};

class opencl_device final : public cl_block_device {
 public:
  opencl_device(const opened_device& dev, const device_spec& spec, replay_check& check)
      : cl_block_device(dev.info.device, spec), dev_(dev), check_(&check) {
    // What is free now that this replay's context is open (the device's query, where it has one):
    // the ballast takes all of it but --capacity.
    std::uint64_t free_now = dev.free_at_start;
    if (dev.query) {
      if (const auto f = dev.query()) free_now = *f;
    }
    if (spec.capacity > free_now) {
      throw opencl_unavailable(
          "--capacity " + std::to_string(spec.capacity) +
          " bytes: more than the device has free with the replay's context open (" +
          std::to_string(free_now) + " bytes; " + dev.description + ")");
    }
    try {
      place_ballast(free_now - spec.capacity);
      // Ask the device: with the ballast placed, one byte more than --capacity must not fit.
      check_->before = fill_until_refused(context(), queue(), spec.capacity + 1, dev.chunk());
    } catch (...) {
      release_ballast();
      throw;
    }
    if (!check_->before.enforced()) {
      release_ballast();
      throw device_untrusted(
          "--device opencl: with the ballast placed, " + dev.info.device_name + " accepted " +
          std::to_string(check_->before.accepted) + " bytes, more than the " +
          std::to_string(spec.capacity) + " bytes of --capacity: it had more free memory than " +
          "it said (" + dev.description + "), or something else released memory on it; a replay " +
          "would run on more than --capacity. Rerun when nothing else uses the device. " + instead);
    }
    if (dev.query) baseline_free_ = dev.query();
    check_->free_queried = baseline_free_;
  }

  ~opencl_device() override {
    // The replay's blocks go first; then the same fill as before the replay must stop at the same
    // byte, or the device's free memory changed under the replay.
    release_blocks();
    try {
      check_->after = fill_until_refused(context(), queue(), check_->before.limit, dev_.chunk());
      check_->after_done = true;
    } catch (const std::exception& e) {
      check_->after_error = e.what();
    }
    close();
    release_ballast();
  }

  // Measured where the device can say (its free memory fell by this much since the ballast was
  // placed); otherwise the committed blocks' sizes, the device's rounding unknown.
  std::uint64_t used_bytes() const noexcept override {
    if (baseline_free_ && dev_.query) {
      if (const auto now = dev_.query(); now && *now <= *baseline_free_)
        return *baseline_free_ - *now;
    }
    return committed_block_bytes();
  }
  std::uint64_t peak_used_bytes() const noexcept override { return peak_committed_block_bytes(); }
  std::uint64_t requested_bytes() const noexcept override { return committed_block_bytes(); }

 private:
  // In powers of two (the largest first), so that every buffer above the device's page is whole
  // pages and the ballast costs what it says.
  void place_ballast(std::uint64_t left) {
    while (left > 0) {
      const std::uint64_t bytes = std::bit_floor(std::min(left, dev_.chunk()));
      cl_int s = CL_SUCCESS;
      cl_mem m = clCreateBuffer(context(), CL_MEM_READ_WRITE, bytes, nullptr, &s);
      if (m != nullptr) ballast_.push_back(m);
      if (s == CL_SUCCESS) {
        s = clEnqueueMigrateMemObjects(queue(), 1, &m, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0,
                                       nullptr, nullptr);
      }
      if (s == CL_SUCCESS) s = clFinish(queue());
      if (common::is_out_of_memory_status(s)) {
        throw opencl_unavailable(
            "the device could not hold the ballast that leaves --capacity free: it refused " +
            std::to_string(bytes) + " bytes with " + std::to_string(left - bytes) +
            " still to place; it has less free memory than " + dev_.description);
      }
      opencl::throw_if_failed(s, "ballast buffer", std::to_string(bytes) + " bytes");
      left -= bytes;
    }
  }

  void release_ballast() noexcept {
    for (cl_mem m : ballast_) clReleaseMemObject(m);
    ballast_.clear();
  }

  const opened_device& dev_;
  replay_check* check_;
  std::vector<cl_mem> ballast_;
  std::optional<std::uint64_t> baseline_free_;
};

class opencl_device_backend final : public device_backend {
 public:
  opencl_device_backend(opened_device dev, const backend_options& options, bool semantics_given)
      : dev_(std::move(dev)), options_(options), semantics_given_(semantics_given) {}

  bool is_real_device() const override { return true; }
  std::uint64_t largest_capacity() const override { return dev_.free_at_start; }

  void check_capacity(std::uint64_t capacity) const override {
    if (capacity > dev_.free_at_start) {
      throw config_error("--capacity " + format_bytes_exact(capacity) +
                         ": more than the device has free (" + dev_.description + ")");
    }
  }

  // Fills the whole device, with nothing else held: a device that accepts a byte more than it
  // has free does not enforce its memory, and no replay on it can run out.
  void check_device() override {
    if (whole_) return;
    cl_int s = CL_SUCCESS;
    cl_device_id id = dev_.info.device;
    const auto context =
        opencl::context_ref::adopt(clCreateContext(nullptr, 1, &id, nullptr, nullptr, &s));
    opencl::throw_if_failed(s, "clCreateContext");
    const auto queue = opencl::queue_ref::adopt(
        clCreateCommandQueueWithProperties(context.get(), id, nullptr, &s));
    opencl::throw_if_failed(s, "clCreateCommandQueueWithProperties");
    read_free_with_context();
    const fill_result r =
        fill_until_refused(context.get(), queue.get(), dev_.free_at_start + 1, dev_.chunk());
    if (!r.enforced()) {
      throw device_untrusted(
          "--device opencl: " + dev_.info.platform_name + " / " + dev_.info.device_name +
          " does not enforce its memory size: it accepted " + std::to_string(r.accepted) +
          " bytes in " + std::to_string(r.buffers) + " buffers, one byte more than the " +
          std::to_string(dev_.free_at_start) + " it has free (" + dev_.free_source +
          "), without refusing any (created and first used). A replay on it would never run out "
          "of memory, so its answers would be wrong. " +
          instead);
    }
    whole_ = r;
    if (dev_.info.max_alloc != 0)
      above_max_alloc_ = ask_above_max_alloc(context.get(), dev_.info.max_alloc);
    if (!semantics_given_) {
      options_.semantics = r.where != refusal_point::creation ? alloc_semantics::deferred
                           : r.status == common::status_out_of_host_memory
                               ? alloc_semantics::host_oom
                               : alloc_semantics::immediate;
    }
  }

  std::unique_ptr<replay_device> open(std::uint64_t capacity) override {
    check_device();
    device_spec d;
    d.capacity = capacity;
    d.semantics = options_.semantics;
    d.backend = "opencl";
    d.host_capacity = options_.host_capacity;
    d.profile = device_model::device_profile{};
    d.profile.name = dev_.info.device_name;
    // The device's own maximum allocation: the replay's pool makes no block above it, and where
    // the device refuses a buffer above it the replay does too, as a size refusal.
    if (dev_.info.max_alloc != 0) d.max_alloc = dev_.info.max_alloc;
    d.profile.max_alloc_enforced = above_max_alloc_ == above_max_alloc::refused_for_size;
    d.measured = measured_device{.name = dev_.info.platform_name + " / " + dev_.info.device_name,
                                 .driver_version = dev_.info.driver_version,
                                 .free_at_start = dev_.free_at_start,
                                 .free_memory_source = dev_.free_source,
                                 .failure_point = whole_->describe(),
                                 .usable_bytes = whole_->accepted,
                                 .above_max_alloc = above_max_alloc_word()};
    check_.reset();
    check_.emplace();
    return std::make_unique<opencl_device>(dev_, d, *check_);
  }

  // The device's free memory with a context and queue of ours open: what a replay, which runs in
  // one, starts with. A driver's context takes memory of its own (NVIDIA's: some hundreds of MiB),
  // which the query made before any context counted as free.
  void read_free_with_context() {
    if (!dev_.query || dev_.free_before_context) return;
    const std::optional<std::uint64_t> now = dev_.query();
    if (!now) return;
    dev_.free_before_context = dev_.free_at_start;
    dev_.free_at_start = *now;
    const std::uint64_t before = *dev_.free_before_context;
    dev_.free_source +=
        ", with a context open (" + std::to_string(before) + " before it" +
        (before >= *now ? ": the context took " + std::to_string(before - *now) + ")" : ")");
    dev_.description = dev_.info.platform_name + " / " + dev_.info.device_name + ", " +
                       std::to_string(*now) + " bytes free with a context open (" +
                       std::to_string(before) + " before it; measured: " + dev_.query_name + ")";
    std::fprintf(stderr, "clpool_replay: device %s\n",
                 common::escape_text(dev_.description).c_str());
  }

  void after_replay() override {
    if (!check_) return;
    const replay_check c = *check_;
    check_.reset();
    last_start_ = replay_start{.free_at_start = dev_.free_at_start,
                               .free_queried = c.free_queried,
                               .fill_accepted = c.before.accepted};
    if (!c.after_done) {
      throw device_untrusted("--device opencl: the device could not be checked after the replay (" +
                             c.after_error + "), so its answer cannot be trusted. " + instead);
    }
    if (c.after.accepted != c.before.accepted || c.after.enforced() != c.before.enforced()) {
      throw device_untrusted(
          "--device opencl: free memory on " + dev_.info.device_name +
          " changed during the replay: with the ballast placed it accepted " +
          std::to_string(c.before.accepted) + " bytes before the replay and " +
          std::to_string(c.after.accepted) + " after it (" +
          (c.after.accepted < c.before.accepted ? "something else allocated"
                                                : "something else released") +
          " memory on the device meanwhile, or the ballast was moved), so the replay's answer is "
          "not the device's and is not reported. Rerun when nothing else uses the device.");
    }
  }

  std::optional<replay_start> last_replay_start() const override { return last_start_; }

 private:
  // measured_device::above_max_alloc's word; "" for a device that reports no maximum.
  std::string above_max_alloc_word() const {
    if (dev_.info.max_alloc == 0) return "";
    switch (above_max_alloc_) {
      case above_max_alloc::refused_for_size:
        return "refused_for_size";
      case above_max_alloc::accepted:
        return "accepted";
      case above_max_alloc::unknown:
        break;
    }
    return "unknown";
  }

  opened_device dev_;
  backend_options options_;
  bool semantics_given_;
  std::optional<fill_result> whole_;
  above_max_alloc above_max_alloc_ = above_max_alloc::unknown;  // asked by check_device()
  std::optional<replay_check> check_;
  std::optional<replay_start> last_start_;
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

std::unique_ptr<device_backend> open_opencl_backend(std::string_view device,
                                                    const backend_options& options) {
  const opencl_target target = parse_opencl_target(device);
  if (options.profile_given) {
    throw config_error(
        "--profile cannot be used with --device opencl: a real device behaves as it does, and "
        "the report names the device, its driver and where it runs out of memory instead of a "
        "profile. To replay as a profile says, use --device sim or --device mockcl with --profile; "
        "to measure this device's profile, run clpool_probe --output FILE");
  }
  opened_device dev;
  try {
    dev.info = cl_device::select_device(
        target.platform.empty() ? std::nullopt : std::optional<std::string>(target.platform),
        target.index, {"--device opencl:PLATFORM", "--device opencl:PLATFORM:INDEX"});
  } catch (const cl_device::selection_error& e) {
    throw opencl_unavailable(e.what());
  }
  dev.max_alloc = dev.info.max_alloc != 0 ? dev.info.max_alloc : dev.info.global_mem;
  // The probe's free-memory queries (NVML on NVIDIA, AMD's device query), where the device has one.
  const cl_device::free_memory_query query = cl_device::find_free_memory_query(dev.info);
  const std::optional<std::uint64_t> free = query.read ? query.read() : std::nullopt;
  if (free) {
    dev.free_at_start = *free;
    dev.free_queried = true;
    dev.query = query.read;
    dev.query_name = query.name;
    dev.free_source = "queried: " + query.name;
  } else {
    dev.free_at_start = dev.info.global_mem;
    dev.free_source = "assumed: CL_DEVICE_GLOBAL_MEM_SIZE, the device has no free-memory query";
  }
  dev.description =
      dev.info.platform_name + " / " + dev.info.device_name + ", " +
      std::to_string(dev.free_at_start) + " bytes free at start (" +
      (dev.free_queried ? "measured: " + query.name
                        : std::string("as reported: the device has no free-memory query, so "
                                      "the ballast assumes all of CL_DEVICE_GLOBAL_MEM_SIZE "
                                      "is free")) +
      ")";
  std::fprintf(stderr, "clpool_replay: device %s\n", common::escape_text(dev.description).c_str());
  // The profile (not given) decided no semantics: the device's own failure point will.
  return std::make_unique<opencl_device_backend>(std::move(dev), options, options.semantics_given);
}

}  // namespace clpool::replay_cli
