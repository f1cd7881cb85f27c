// The battery's device-query cross-checks (consistency.h, as the Khronos CTS's consistency and
// feature-macro tests check a device) run on every device the system's ICD loader lists: mockcl's
// rules held against a real driver (NVIDIA's, POCL), with no mock behind.
//
//   consistency_check [PLATFORM_PART]     e.g. OCL_ICD_VENDORS=/tmp/icd/nvidia.icd
//   consistency_check NVIDIA
//
// Prints each device with its inconsistencies (none: "consistent"). Exit 0 when every device
// checked is consistent, 1 when one is not, 2 when no platform matches.
#include <CL/cl.h>
#include <CL/cl_icd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "mockcl/consistency.h"

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string info(cl_platform_id p, cl_platform_info what) {
  char buf[1024] = {};
  clGetPlatformInfo(p, what, sizeof buf - 1, buf, nullptr);
  return buf;
}

std::string info(cl_device_id d, cl_device_info what) {
  char buf[1024] = {};
  clGetDeviceInfo(d, what, sizeof buf - 1, buf, nullptr);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string want = argc > 1 ? lower(argv[1]) : "";
  cl_uint n = 0;
  if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) {
    std::printf("consistency_check: no OpenCL platform\n");
    return 2;
  }
  std::vector<cl_platform_id> platforms(n);
  clGetPlatformIDs(n, platforms.data(), nullptr);
  int checked = 0, inconsistent = 0;
  for (cl_platform_id p : platforms) {
    const std::string name = info(p, CL_PLATFORM_NAME);
    if (!want.empty() && lower(name).find(want) == std::string::npos) continue;
    // The loader hands out the driver's own handles, whose first member is its dispatch table.
    const cl_icd_dispatch& d = **reinterpret_cast<cl_icd_dispatch* const*>(p);
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS) continue;
    std::vector<cl_device_id> devices(nd);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devices.data(), nullptr);
    for (cl_device_id dev : devices) {
      ++checked;
      const std::vector<std::string> problems = mockcl::testing::device_consistency(d, p, dev);
      std::printf("%s / %s (%s, %s): %s\n", name.c_str(), info(dev, CL_DEVICE_NAME).c_str(),
                  info(dev, CL_DEVICE_VERSION).c_str(), info(dev, CL_DRIVER_VERSION).c_str(),
                  problems.empty()
                      ? "consistent"
                      : (std::to_string(problems.size()) + " inconsistencies").c_str());
      for (const std::string& s : problems) std::printf("  %s\n", s.c_str());
      if (!problems.empty()) ++inconsistent;
    }
  }
  if (checked == 0) {
    std::printf("consistency_check: no platform matches '%s'\n", want.c_str());
    return 2;
  }
  return inconsistent == 0 ? 0 : 1;
}
