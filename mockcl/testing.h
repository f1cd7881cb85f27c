// Test helpers for packages that run OpenCL code over mockcl through the real ICD loader. They
// abort on failure (a test's setup is broken); production code uses mockcl/loader.h, which
// reports instead.
//
// Typical use in a cc_test with
//   data = ["//mockcl:libmockcl.so"], env = {"LIBMOCKCL_SO": "$(rootpath //mockcl:libmockcl.so)"}:
//   mockcl::testing::use_mock_only(mockcl::testing::mock_so_path());   // before any CL call
//   auto ctl = mockcl::testing::icd_control(mockcl::testing::mock_so_path());
//   ctl->configure_devices("gpu-64m");  ... clCreateBuffer(...) ...  ctl->snapshot();
#ifndef MOCKCL_TESTING_H_
#define MOCKCL_TESTING_H_

#include <CL/cl_icd.h>

#include <memory>
#include <string>

#include "mockcl/runtime/control.h"

namespace mockcl::testing {

// The absolute path of libmockcl.so: `path` if given, else $LIBMOCKCL_SO; relative paths are
// made absolute against the current directory (the runfiles root in a Bazel test). Aborts with
// a message if neither is set or the file does not exist.
std::string mock_so_path(const std::string& path = "");

// Points the ICD loader at the mock only: writes a temporary vendors directory holding
// mockcl.icd and sets OCL_ICD_VENDORS to it and OCL_ICD_PLATFORM_SORT=none. Must run before
// the process's first OpenCL call. Returns the directory.
std::string use_mock_only(const std::string& so_path);

// The same with POCL's .icd (a copy of /etc/OpenCL/vendors/pocl.icd) next to the mock's, so
// the loader lists both. ocl-icd reads the directory unsorted: find the mock by name
// (loader_mock_platform), not by position.
std::string use_mock_and_pocl(const std::string& so_path);

// A Control for the ICD instance the loader loaded (or will load) from `so_path`: dlopens that
// path (the loader then shares the same instance) and calls its mockcl_ C API.
std::unique_ptr<controller> icd_control(const std::string& so_path);

// A cl_icd_dispatch whose slots are the loader's exported functions (from libOpenCL.so.1),
// so a test body written against a dispatch table runs through the real loader. Slots the
// loader does not export are null.
const cl_icd_dispatch* loader_dispatch();

// The platform named "mockcl" as the loader reports it, or nullptr.
cl_platform_id loader_mock_platform();

// POCL's first device, loaded as mockcl's backing loads it (the library
// /etc/OpenCL/vendors/pocl.icd names, dlopened RTLD_LOCAL: the same instance the backing uses),
// with POCL's own dispatch table: what the backing device answers, to compare the mock's devices
// with. Aborts if POCL is missing.
struct direct_device {
  const cl_icd_dispatch* d = nullptr;
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
};
direct_device pocl_device();

}  // namespace mockcl::testing

#endif  // MOCKCL_TESTING_H_
