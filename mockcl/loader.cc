#include "mockcl/loader.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "common/shared_library.h"
#include "mockcl/mockcl_c.h"
#include "mockcl/runtime/snapshot.h"

namespace mockcl::loader {
namespace {

// What makes a library the mockcl ICD rather than any ICD or any .so (the layer, say).
constexpr const char* required_symbols[] = {"clIcdGetPlatformIDsKHR", "mockcl_configure",
                                            "mockcl_reset",           "mockcl_snapshot_json",
                                            "mockcl_object_id",       "mockcl_memory_use"};

class icd_controller final : public controller {
 public:
  explicit icd_controller(void* lib)
      : configure_(reinterpret_cast<decltype(configure_)>(dlsym(lib, "mockcl_configure"))),
        reset_(reinterpret_cast<decltype(reset_)>(dlsym(lib, "mockcl_reset"))),
        snapshot_(reinterpret_cast<decltype(snapshot_)>(dlsym(lib, "mockcl_snapshot_json"))),
        object_id_(reinterpret_cast<decltype(object_id_)>(dlsym(lib, "mockcl_object_id"))),
        memory_use_(reinterpret_cast<decltype(memory_use_)>(dlsym(lib, "mockcl_memory_use"))) {}

  std::string configure_devices(std::string_view spec) override {
    return configure("devices", spec);
  }
  std::string configure_faults(std::string_view spec) override { return configure("faults", spec); }
  std::string add_fault(std::string_view rule) override { return configure("add_fault", rule); }
  std::string configure_schedule(std::string_view spec) override {
    return configure("schedule", spec);
  }
  std::string configure_call_log(std::string_view path) override {
    return configure("call_log", path);
  }
  std::string configure_backing(std::string_view mode) override {
    return configure("backing", mode);
  }
  void reset() override { reset_(); }
  accounting_snapshot snapshot() override {
    std::string buf(snapshot_(nullptr, 0) + 1, '\0');
    const size_t n = snapshot_(buf.data(), buf.size());
    buf.resize(n);
    auto s = snapshot_from_json(buf);
    if (!s.ok()) throw std::runtime_error("mockcl snapshot: " + s.error());
    return s.value();
  }
  uint64_t object_id(const void* handle) override { return object_id_(handle); }
  device_memory_use memory_use(int device) override {
    uint64_t out[3];
    memory_use_(device, out);
    return {out[0], out[1], out[2]};
  }

 private:
  std::string configure(const char* what, std::string_view value) {
    char err[1024] = {0};
    configure_(what, std::string(value).c_str(), err, sizeof err);
    return err;
  }
  decltype(&mockcl_configure) configure_;
  decltype(&mockcl_reset) reset_;
  decltype(&mockcl_snapshot_json) snapshot_;
  decltype(&mockcl_object_id) object_id_;
  decltype(&mockcl_memory_use) memory_use_;
};

std::vector<std::string> required_names() {
  return std::vector<std::string>(std::begin(required_symbols), std::end(required_symbols));
}

// The ELF checks (common/shared_library.h), as one sentence in this file's words: a file that
// is some other library is "not the mockcl ICD".
std::string file_refusal(const std::string& so_path) {
  const std::string why = clpool::common::shared_library_refusal(so_path, required_names());
  if (why.rfind("does not export ", 0) == 0) {
    return "is not the mockcl ICD: it " + why + " (bazel build //mockcl:libmockcl.so)";
  }
  return why;
}

// dlopen()s a checked ICD, or returns null with `error` set.
void* open_icd(const std::string& so_path, std::string& error) {
  // Look before dlopen: the loader trusts the file's headers, and a library cut short dies of
  // SIGBUS inside dlopen; its own messages for a text file are obscure too.
  if (error = file_refusal(so_path); !error.empty()) return nullptr;
  void* lib = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* e = dlerror();
    error = std::string("cannot be loaded: ") + (e ? e : "dlopen failed");
    return nullptr;
  }
  for (const char* name : required_symbols) {
    if (dlsym(lib, name) == nullptr) {
      dlclose(lib);
      error = std::string("is not the mockcl ICD: it does not export ") + name +
              " (bazel build //mockcl:libmockcl.so)";
      return nullptr;
    }
  }
  return lib;
}

}  // namespace

std::string check_icd(const std::string& so_path) {
  // The file first, then a load in a child process: a library the checks cannot fault still
  // costs only the child.
  std::string error = file_refusal(so_path);
  if (error.empty()) error = clpool::common::trial_load_refusal(so_path, required_names());
  if (error.rfind("does not export ", 0) == 0) {
    error = "is not the mockcl ICD: it " + error + " (bazel build //mockcl:libmockcl.so)";
  }
  return error;
}

std::string temp_root() {
  for (const char* name : {"TMPDIR", "TEST_TMPDIR"}) {
    const char* dir = std::getenv(name);
    if (dir != nullptr && *dir != '\0') return dir;
  }
  return "/tmp";
}

std::string point_loader_at(const std::string& so_path, bool with_pocl, std::string& error) {
  const std::string templ = temp_root() + "/mockcl-vendors-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    error = "cannot create a temporary directory from " + templ + ": " + std::strerror(errno);
    return "";
  }
  const std::string dir(buf.data());
  // A failure below removes the directory here: the caller only gets (and removes) a finished one.
  const auto fail = [&](const std::string& why) {
    error = why;
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    return std::string();
  };
  {
    std::ofstream f(dir + "/0-mockcl.icd");
    f << so_path << "\n";
    if (!f) return fail("cannot write " + dir + "/0-mockcl.icd");
  }
  if (with_pocl) {
    std::ifstream in("/etc/OpenCL/vendors/pocl.icd");
    if (!in) return fail("POCL is not installed (/etc/OpenCL/vendors/pocl.icd missing)");
    std::ofstream out(dir + "/1-pocl.icd");
    out << in.rdbuf();
    if (!out) return fail("cannot write " + dir + "/1-pocl.icd");
  }
  setenv("OCL_ICD_VENDORS", dir.c_str(), 1);
  setenv("OCL_ICD_PLATFORM_SORT", "none", 1);
  return dir;
}

std::unique_ptr<controller> icd_control(const std::string& so_path, std::string& error) {
  void* lib = open_icd(so_path, error);
  if (lib == nullptr) return nullptr;
  return std::make_unique<icd_controller>(lib);  // the library stays loaded for the process
}

}  // namespace mockcl::loader
