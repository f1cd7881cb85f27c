#include "mockcl/testing.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "mockcl/mockcl_c.h"
#include "mockcl/snapshot.h"

namespace mockcl::testing {
namespace {

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "mockcl::testing: %s\n", msg.c_str());
  std::abort();
}

std::string make_vendor_dir(const std::string& so_path, bool with_pocl) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/mockcl-vendors-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) die("cannot create a temporary directory from " + templ);
  std::string dir(buf.data());
  {
    std::ofstream f(dir + "/0-mockcl.icd");
    f << so_path << "\n";
  }
  if (with_pocl) {
    std::ifstream in("/etc/OpenCL/vendors/pocl.icd");
    if (!in) die("POCL is not installed (/etc/OpenCL/vendors/pocl.icd missing)");
    std::ofstream out(dir + "/1-pocl.icd");
    out << in.rdbuf();
  }
  setenv("OCL_ICD_VENDORS", dir.c_str(), 1);
  setenv("OCL_ICD_PLATFORM_SORT", "none", 1);
  return dir;
}

template <typename F>
F sym(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (!p) die(std::string("libmockcl.so does not export ") + name);
  return reinterpret_cast<F>(p);
}

class IcdControl final : public Control {
 public:
  explicit IcdControl(void* lib)
      : configure_(sym<decltype(configure_)>(lib, "mockcl_configure")),
        reset_(sym<decltype(reset_)>(lib, "mockcl_reset")),
        snapshot_(sym<decltype(snapshot_)>(lib, "mockcl_snapshot_json")),
        object_id_(sym<decltype(object_id_)>(lib, "mockcl_object_id")),
        memory_use_(sym<decltype(memory_use_)>(lib, "mockcl_memory_use")) {}

  std::string configure_devices(std::string_view spec) override { return configure("devices", spec); }
  std::string configure_faults(std::string_view spec) override { return configure("faults", spec); }
  std::string add_fault(std::string_view rule) override { return configure("add_fault", rule); }
  std::string configure_schedule(std::string_view spec) override { return configure("schedule", spec); }
  std::string configure_call_log(std::string_view path) override { return configure("call_log", path); }
  void reset() override { reset_(); }
  Snapshot snapshot() override {
    std::string buf(snapshot_(nullptr, 0) + 1, '\0');
    size_t n = snapshot_(buf.data(), buf.size());
    buf.resize(n);
    auto s = snapshot_from_json(buf);
    if (!s.ok()) die(s.error());
    return s.value();
  }
  uint64_t object_id(const void* handle) override { return object_id_(handle); }
  MemoryUse memory_use(int device) override {
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

cl_icd_dispatch build_loader_table() {
  void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) die(std::string("cannot load the ICD loader libOpenCL.so.1: ") + dlerror());
  cl_icd_dispatch d;
  std::memset(&d, 0, sizeof d);
#define MOCKCL_ENTRY(name) \
  d.name = reinterpret_cast<decltype(d.name)>(dlsym(lib, #name));
#include "mockcl/entry_points.inc"
#undef MOCKCL_ENTRY
  return d;
}

}  // namespace

std::string mock_so_path(const std::string& path) {
  std::string p = path;
  if (p.empty()) {
    const char* e = std::getenv("LIBMOCKCL_SO");
    if (!e || !*e) die("LIBMOCKCL_SO is not set (set it to $(rootpath //mockcl:libmockcl.so))");
    p = e;
  }
  if (p[0] != '/') {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) die("getcwd failed");
    p = std::string(cwd) + "/" + p;
  }
  struct stat st;
  if (stat(p.c_str(), &st) != 0) die("libmockcl.so not found at " + p);
  return p;
}

std::string use_mock_only(const std::string& so_path) { return make_vendor_dir(so_path, false); }

std::string use_mock_and_pocl(const std::string& so_path) { return make_vendor_dir(so_path, true); }

std::unique_ptr<Control> icd_control(const std::string& so_path) {
  void* lib = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) die("cannot dlopen " + so_path + ": " + dlerror());
  return std::make_unique<IcdControl>(lib);
}

const cl_icd_dispatch* loader_dispatch() {
  static const cl_icd_dispatch table = build_loader_table();
  return &table;
}

cl_platform_id loader_mock_platform() {
  const cl_icd_dispatch* d = loader_dispatch();
  cl_uint n = 0;
  if (d->clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) return nullptr;
  std::vector<cl_platform_id> ps(n);
  d->clGetPlatformIDs(n, ps.data(), nullptr);
  for (cl_platform_id p : ps) {
    char name[256] = {0};
    if (d->clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr) == CL_SUCCESS &&
        std::string(name) == "mockcl")
      return p;
  }
  return nullptr;
}

}  // namespace mockcl::testing
