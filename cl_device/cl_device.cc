#include "cl_device/cl_device.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "common/text_escape.h"

namespace clpool::cl_device {
namespace {

std::vector<cl_platform_id> platforms() {
  cl_uint n = 0;
  // ocl-icd answers -1001 (CL_PLATFORM_NOT_FOUND_KHR) when it finds no ICD at all.
  if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) {
    throw selection_error(
        "no OpenCL platform found (no ICD installed, or OCL_ICD_VENDORS points at none)");
  }
  std::vector<cl_platform_id> p(n);
  if (clGetPlatformIDs(n, p.data(), nullptr) != CL_SUCCESS)
    throw selection_error("clGetPlatformIDs failed");
  return p;
}

std::vector<cl_device_id> devices(cl_platform_id p) {
  cl_uint n = 0;
  if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::vector<cl_device_id> d(n);
  if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, d.data(), nullptr) != CL_SUCCESS) return {};
  return d;
}

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  std::size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (clGetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return "";
  s.resize(s.find('\0') == std::string::npos ? n : s.find('\0'));
  return s;
}

std::string device_string(cl_device_id d, cl_device_info what) {
  std::size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (clGetDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return "";
  s.resize(s.find('\0') == std::string::npos ? n : s.find('\0'));
  return s;
}

template <class T>
T device_value(cl_device_id d, cl_device_info what) {
  T v{};
  if (clGetDeviceInfo(d, what, sizeof v, &v, nullptr) != CL_SUCCESS) return T{};
  return v;
}

bool is_gpu(cl_device_id d) {
  return (device_value<cl_device_type>(d, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU) != 0;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string platform_names(const std::vector<cl_platform_id>& ps) {
  std::string s;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    s +=
        (i ? ", " : "") + std::to_string(i) + " '" + platform_string(ps[i], CL_PLATFORM_NAME) + "'";
  }
  return s;
}

unsigned pick_platform(const std::vector<cl_platform_id>& ps, const std::string& arg,
                       const std::string& label) {
  const bool is_index = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](unsigned char c) {
    return std::isdigit(c);
  });
  if (is_index) {
    if (arg.size() > 9 || std::stoul(arg) >= ps.size()) {
      throw selection_error(label + " " + arg + ": no such platform (there are " +
                            std::to_string(ps.size()) + ": " + platform_names(ps) + ")");
    }
    return static_cast<unsigned>(std::stoul(arg));
  }
  if (arg.empty()) throw selection_error(label + ": empty (give an index or part of a name)");
  std::vector<unsigned> hits;
  for (unsigned i = 0; i < ps.size(); ++i) {
    if (lower(platform_string(ps[i], CL_PLATFORM_NAME)).find(lower(arg)) != std::string::npos)
      hits.push_back(i);
  }
  if (hits.size() != 1) {
    throw selection_error(label + " '" + arg + "': " + (hits.empty() ? "no" : "more than one") +
                          " platform name contains it (platforms: " + platform_names(ps) + ")");
  }
  return hits[0];
}

}  // namespace

device_info describe_device(cl_platform_id p, unsigned pi, cl_device_id d, unsigned di) {
  device_info info;
  info.platform = p;
  info.device = d;
  info.platform_index = pi;
  info.device_index = di;
  info.platform_name = platform_string(p, CL_PLATFORM_NAME);
  info.device_name = device_string(d, CL_DEVICE_NAME);
  info.vendor = device_string(d, CL_DEVICE_VENDOR);
  info.driver_version = device_string(d, CL_DRIVER_VERSION);
  info.device_version = device_string(d, CL_DEVICE_VERSION);
  info.extensions = device_string(d, CL_DEVICE_EXTENSIONS);
  info.gpu = is_gpu(d);
  info.global_mem = device_value<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE);
  info.max_alloc = device_value<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  return info;
}

device_info select_device(const std::optional<std::string>& platform,
                          const std::optional<unsigned>& device, const selection_labels& labels) {
  const std::vector<cl_platform_id> ps = platforms();
  if (!platform && !device) {
    for (unsigned pi = 0; pi < ps.size(); ++pi) {
      const std::vector<cl_device_id> ds = devices(ps[pi]);
      for (unsigned di = 0; di < ds.size(); ++di) {
        if (is_gpu(ds[di])) return describe_device(ps[pi], pi, ds[di], di);
      }
    }
    for (unsigned pi = 0; pi < ps.size(); ++pi) {
      const std::vector<cl_device_id> ds = devices(ps[pi]);
      if (!ds.empty()) return describe_device(ps[pi], pi, ds[0], 0);
    }
    throw selection_error("no OpenCL device found on " + std::to_string(ps.size()) +
                          " platform(s)");
  }
  const unsigned pi = platform ? pick_platform(ps, *platform, labels.platform) : 0;
  const std::vector<cl_device_id> ds = devices(ps[pi]);
  const std::string where =
      "platform " + std::to_string(pi) + " '" + platform_string(ps[pi], CL_PLATFORM_NAME) + "'";
  if (ds.empty()) throw selection_error(where + " has no devices");
  if (device) {
    if (*device >= ds.size()) {
      throw selection_error(labels.device + " " + std::to_string(*device) + ": no such device on " +
                            where + " (it has " + std::to_string(ds.size()) + ", numbered from 0)");
    }
    return describe_device(ps[pi], pi, ds[*device], *device);
  }
  for (unsigned di = 0; di < ds.size(); ++di) {
    if (is_gpu(ds[di])) return describe_device(ps[pi], pi, ds[di], di);
  }
  return describe_device(ps[pi], pi, ds[0], 0);
}

unsigned parse_device_index(const std::string& text, const std::string& flag) {
  if (text.empty() || text.size() > 9 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    throw selection_error(flag + ": '" + text + "' is not an index (0, 1, ...)");
  }
  return static_cast<unsigned>(std::stoul(text));
}

std::string list_devices() {
  const std::vector<cl_platform_id> ps = platforms();
  std::string s;
  for (unsigned pi = 0; pi < ps.size(); ++pi) {
    // Names as the driver says them, in the text rule: no terminal escape reaches the screen.
    s += "platform " + std::to_string(pi) + ": " +
         common::escape_text(platform_string(ps[pi], CL_PLATFORM_NAME)) + "\n";
    const std::vector<cl_device_id> ds = devices(ps[pi]);
    for (unsigned di = 0; di < ds.size(); ++di) {
      const device_info d = describe_device(ps[pi], pi, ds[di], di);
      s += "  device " + std::to_string(di) + ": " + common::escape_text(d.device_name) +
           (d.gpu ? " (GPU, " : " (") + std::to_string(d.global_mem >> 20) + " MiB, driver " +
           common::escape_text(d.driver_version) + ")\n";
    }
  }
  return s;
}

}  // namespace clpool::cl_device
