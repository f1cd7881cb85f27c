#include "mockcl/testing.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "mockcl/loader.h"

namespace mockcl::testing {
namespace {

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "mockcl::testing: %s\n", msg.c_str());
  std::abort();
}

std::string make_vendor_dir(const std::string& so_path, bool with_pocl) {
  std::string error;
  const std::string dir = loader::point_loader_at(so_path, with_pocl, error);
  if (dir.empty()) die(error);
  return dir;
}

cl_icd_dispatch build_loader_table() {
  void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) die(std::string("cannot load the ICD loader libOpenCL.so.1: ") + dlerror());
  cl_icd_dispatch d;
  std::memset(&d, 0, sizeof d);
#define MOCKCL_ENTRY(name) d.name = reinterpret_cast<decltype(d.name)>(dlsym(lib, #name));
#include "mockcl/api/entry_points.inc"
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

std::unique_ptr<controller> icd_control(const std::string& so_path) {
  std::string error;
  std::unique_ptr<controller> control = loader::icd_control(so_path, error);
  if (!control) die(so_path + " " + error);
  return control;
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

direct_device pocl_device() {
  std::ifstream icd("/etc/OpenCL/vendors/pocl.icd");
  std::string lib;
  if (!std::getline(icd, lib)) die("no POCL ICD at /etc/OpenCL/vendors/pocl.icd");
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) die("cannot load POCL '" + lib + "': " + dlerror());
  using get_address_fn = void*(CL_API_CALL*)(const char*);
  using get_ids_fn = cl_int(CL_API_CALL*)(cl_uint, cl_platform_id*, cl_uint*);
  auto address = reinterpret_cast<get_address_fn>(dlsym(h, "clGetExtensionFunctionAddress"));
  if (!address) die(lib + " has no clGetExtensionFunctionAddress");
  auto ids = reinterpret_cast<get_ids_fn>(address("clIcdGetPlatformIDsKHR"));
  direct_device out;
  cl_uint n = 0;
  if (!ids || ids(1, &out.platform, &n) != CL_SUCCESS || n == 0) die(lib + " lists no platform");
  out.d = *reinterpret_cast<const cl_icd_dispatch* const*>(out.platform);
  if (out.d->clGetDeviceIDs(out.platform, CL_DEVICE_TYPE_ALL, 1, &out.device, nullptr) !=
      CL_SUCCESS)
    die(lib + " has no device");
  return out;
}

}  // namespace mockcl::testing
