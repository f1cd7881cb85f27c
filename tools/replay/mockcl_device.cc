#include "tools/replay/mockcl_device.h"

#include <CL/cl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "mockcl/loader.h"
#include "pool/opencl/cl_error.h"
#include "tools/replay/cl_block_device.h"

extern char** environ;

namespace clpool::replay_cli {

using replay::device_backend;
using replay::device_spec;
using replay::replay_device;

namespace {

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) return path;
  return std::string(cwd) + "/" + path;
}

// `path`, absolute, once mockcl::loader has checked that it is the mock ICD; else
// mockcl_unavailable "LABEL: 'PATH' WHY" (a wrong file must never reach the ICD loader).
std::string checked(const std::string& label, const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) throw mockcl_unavailable(label + ": no such file: " + path);
  const std::string why = mockcl::loader::check_icd(absolute(path));
  if (!why.empty()) throw mockcl_unavailable(label + ": '" + path + "' " + why);
  return absolute(path);
}

// The platform the loader lists under the name "mockcl", or null.
cl_platform_id mock_platform() {
  cl_uint n = 0;
  if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) return nullptr;
  std::vector<cl_platform_id> ps(n);
  if (clGetPlatformIDs(n, ps.data(), nullptr) != CL_SUCCESS) return nullptr;
  for (cl_platform_id p : ps) {
    char name[256] = {0};
    if (clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr) == CL_SUCCESS &&
        std::string(name) == "mockcl") {
      return p;
    }
  }
  return nullptr;
}

// The replay configures the mock completely; a MOCKCL_* variable left in the caller's
// environment (faults, a schedule, a call log) would otherwise silently change every replay, or
// make the mock refuse its platform. Removed before the ICD is loaded, with a note naming each.
void drop_mockcl_environment() {
  std::vector<std::string> names;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv(*e);
    if (kv.rfind("MOCKCL_", 0) == 0) names.push_back(kv.substr(0, kv.find('=')));
  }
  for (const std::string& n : names) {
    std::fprintf(stderr,
                 "clpool_replay: note: ignoring %s from the environment: --device mockcl "
                 "configures the mock itself\n",
                 n.c_str());
    unsetenv(n.c_str());
  }
}

// Large enough that no request is CL_INVALID_BUFFER_SIZE: 2^63, above the largest size a trace
// names (2^62) even after the pool rounds it up to its bin (2^62 + 2^58 - 1 with 4 leading bits),
// so that every device calls such a request an out-of-memory.
constexpr std::uint64_t no_max_alloc = std::uint64_t{1} << 63;

class mockcl_device final : public cl_block_device {
 public:
  mockcl_device(mockcl::controller& control, cl_device_id device, const device_spec& spec)
      : cl_block_device(device, spec), control_(&control) {}

  ~mockcl_device() override {
    close();
    // The mock may still keep its last command's record (which holds the queue and context);
    // reset() retires it, so that the next device can reconfigure the mock.
    control_->reset();
  }

  // The mock's own ledger (the device model), so that pages and headroom count as they do there.
  std::uint64_t used_bytes() const noexcept override { return control_->memory_use(0).committed; }
  std::uint64_t peak_used_bytes() const noexcept override { return control_->memory_use(0).peak; }
  std::uint64_t requested_bytes() const noexcept override {
    return control_->memory_use(0).requested;
  }

 private:
  mockcl::controller* control_;
};

// Configures the mock for one replay device and returns its OpenCL device.
cl_device_id configure_mock(mockcl_backend& backend, const device_spec& spec,
                            const std::string& profile_ref) {
  mockcl::controller& ctl = backend.control();
  ctl.reset();
  // reset() restores the configuration the ICD read at load; the replay owns all of it (the
  // environment was cleared before loading, and this keeps it so whatever reset() restores).
  if (std::string err = ctl.configure_faults(""); !err.empty()) {
    throw mockcl_unavailable("mockcl refused to clear its faults: " + err);
  }
  if (std::string err = ctl.configure_call_log(""); !err.empty()) {
    throw mockcl_unavailable("mockcl refused to stop its call log: " + err);
  }
  // The mock refuses capacity 0; a 0-capacity device is emulated by refusing everything.
  mockcl::device_config mock;
  mock.name = "clpool_replay";
  mock.capacity = spec.capacity == 0 ? 1 : spec.capacity;
  mock.reported = no_max_alloc;
  mock.max_alloc = spec.max_alloc == clpool::unlimited ? no_max_alloc : spec.max_alloc;
  mock.semantics = spec.semantics;
  // As the MOCKCL_DEVICES grammar defaults them for a gpu of this capacity and profile.
  mock.oom_at_execution = spec.profile.oom_at == device_model::refusal_point::execution;
  mock.pinned = std::min<std::uint64_t>(mock.capacity / 4, std::uint64_t{1} << 30);
  mock.profile = profile_ref;
  mock.model = spec.profile;
  std::string err = ctl.configure_devices(std::vector<mockcl::device_config>{mock});
  if (err.empty()) err = ctl.configure_schedule("eager");
  if (err.empty()) err = ctl.configure_backing("none");  // blocks need capacity, not compute
  if (!err.empty()) {
    throw mockcl_unavailable("mockcl refused the replay's device (capacity " +
                             std::to_string(mock.capacity) + ", profile " + profile_ref +
                             "): " + err);
  }
  cl_platform_id platform = mock_platform();
  if (platform == nullptr) {
    throw mockcl_unavailable("the OpenCL ICD loader does not list the mockcl platform (loaded " +
                             backend.so_path() + " through OCL_ICD_VENDORS)");
  }
  cl_device_id device = nullptr;
  opencl::throw_if_failed(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr),
                          "clGetDeviceIDs");
  return device;
}

}  // namespace

std::string find_mockcl_so(const std::string& flag) {
  // Before check_icd() loads the library: the mock reads its environment when loaded.
  drop_mockcl_environment();
  if (!flag.empty()) return checked("--mockcl-so", flag);
  if (const char* env = std::getenv("LIBMOCKCL_SO"); env != nullptr && *env != '\0') {
    return checked("LIBMOCKCL_SO", env);
  }
  std::vector<std::string> candidates;
  if (const char* dir = std::getenv("RUNFILES_DIR"); dir != nullptr && *dir != '\0') {
    candidates.push_back(std::string(dir) + "/clpool/mockcl/libmockcl.so");
  }
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    const std::string self(exe, n);
    candidates.push_back(self + ".runfiles/clpool/mockcl/libmockcl.so");
    // Installed by tools/install.sh: PREFIX/bin/clpool_replay and PREFIX/lib/libmockcl.so.
    candidates.push_back(self.substr(0, self.rfind('/') + 1) + "../lib/libmockcl.so");
  }
  candidates.push_back(absolute("mockcl/libmockcl.so"));
  std::string looked;
  for (const std::string& c : candidates) {
    if (exists(c)) return checked("--device mockcl", c);
    looked += (looked.empty() ? " " : ", ") + c;
  }
  throw mockcl_unavailable(
      "--device mockcl: libmockcl.so not found; pass --mockcl-so PATH or set LIBMOCKCL_SO "
      "(bazel build //mockcl:libmockcl.so), or use --device sim. Looked at:" +
      looked);
}

mockcl_backend::mockcl_backend(std::string so_path, std::unique_ptr<mockcl::controller> control)
    : so_path_(std::move(so_path)), control_(std::move(control)) {}

mockcl_backend& mockcl_backend::open(const std::string& so_path) {
  static std::unique_ptr<mockcl_backend> backend;
  if (backend) {
    if (backend->so_path_ != so_path) {
      throw mockcl_unavailable("mockcl is already loaded from " + backend->so_path_ + ", not " +
                               so_path);
    }
    return *backend;
  }
  std::string error;
  std::error_code ignored;
  std::unique_ptr<mockcl::controller> control;
  drop_mockcl_environment();  // again, in case open() is called without find_mockcl_so()
  const std::string vendors = mockcl::loader::point_loader_at(so_path, false, error);
  if (vendors.empty() || !(control = mockcl::loader::icd_control(so_path, error))) {
    if (!vendors.empty()) std::filesystem::remove_all(vendors, ignored);
    throw mockcl_unavailable("--device mockcl: " + so_path + ": " + error);
  }
  // The ICD loader reads its vendors directory once, at the first OpenCL call: make that call
  // now and remove the directory, so that no exit (clean, bad input, out of memory) leaves it.
  cl_uint platforms = 0;
  clGetPlatformIDs(0, nullptr, &platforms);
  std::filesystem::remove_all(vendors, ignored);
  backend.reset(new mockcl_backend(so_path, std::move(control)));
  return *backend;
}

std::unique_ptr<replay_device> mockcl_backend::open_device(device_spec spec,
                                                           const std::string& profile_ref) {
  spec.backend = "mockcl";
  const cl_device_id device = configure_mock(*this, spec, profile_ref);
  return std::make_unique<mockcl_device>(control(), device, spec);
}

namespace {

class mockcl_device_backend final : public device_backend {
 public:
  mockcl_device_backend(mockcl_backend& mock, const backend_options& options)
      : mock_(&mock), options_(options) {}
  std::unique_ptr<replay_device> open(std::uint64_t capacity) override {
    return mock_->open_device({.capacity = capacity,
                               .semantics = options_.semantics,
                               .host_capacity = options_.host_capacity,
                               .max_alloc = options_.max_alloc,
                               .profile = options_.profile},
                              options_.profile_ref);
  }

 private:
  mockcl_backend* mock_;
  backend_options options_;
};

}  // namespace

std::unique_ptr<device_backend> open_mockcl_backend(const backend_options& options) {
  return std::make_unique<mockcl_device_backend>(
      mockcl_backend::open(find_mockcl_so(options.mockcl_so)), options);
}

}  // namespace clpool::replay_cli
