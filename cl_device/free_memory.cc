#include "cl_device/free_memory.h"

#include <dlfcn.h>

#include <cstdio>
#include <memory>

namespace clpool::cl_device {
namespace {

constexpr cl_device_info device_global_free_memory_amd = 0x4039;
constexpr cl_device_info device_pci_bus_id_nv = 0x4008;
constexpr cl_device_info device_pci_slot_id_nv = 0x4009;
constexpr cl_device_info device_pci_domain_id_nv = 0x400A;

bool has_extension(const device_info& d, const std::string& ext) {
  return (" " + d.extensions + " ").find(" " + ext + " ") != std::string::npos;
}

free_memory_query amd_query(const device_info& d) {
  free_memory_query q;
  cl_device_id dev = d.device;
  q.name = "CL_DEVICE_GLOBAL_FREE_MEMORY_AMD";
  q.read = [dev]() -> std::optional<std::uint64_t> {
    std::size_t kib[2] = {0, 0};  // total free, largest free block
    if (clGetDeviceInfo(dev, device_global_free_memory_amd, sizeof kib, kib, nullptr) !=
        CL_SUCCESS) {
      return std::nullopt;
    }
    return std::uint64_t{kib[0]} * 1024;
  };
  if (!q.read())
    return {.name = "", .note = "CL_DEVICE_GLOBAL_FREE_MEMORY_AMD did not answer", .read = {}};
  return q;
}

// NVML's C API, the few entry points used (nvml.h, stable since CUDA 6).
struct nvml_memory {
  unsigned long long total, free, used;
};
using nvml_device = void*;
struct nvml_api {
  void* lib = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_bus_id)(const char*, nvml_device*) = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*by_index)(unsigned, nvml_device*) = nullptr;
  int (*memory)(nvml_device, nvml_memory*) = nullptr;
  ~nvml_api() {
    if (shutdown) shutdown();
    if (lib) dlclose(lib);
  }
};

template <class F>
void bind(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
}

free_memory_query nvml_query(const device_info& d) {
  auto api = std::make_shared<nvml_api>();
  api->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (api->lib == nullptr)
    return {.name = "", .note = "libnvidia-ml.so.1 cannot be loaded", .read = {}};
  bind(api->lib, api->init, "nvmlInit_v2");
  bind(api->lib, api->by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
  bind(api->lib, api->count, "nvmlDeviceGetCount_v2");
  bind(api->lib, api->by_index, "nvmlDeviceGetHandleByIndex_v2");
  bind(api->lib, api->memory, "nvmlDeviceGetMemoryInfo");
  if (!api->init || !api->by_bus_id || !api->count || !api->by_index || !api->memory ||
      api->init() != 0) {
    return {.name = "", .note = "NVML does not initialise", .read = {}};
  }
  bind(api->lib, api->shutdown, "nvmlShutdown");
  nvml_device dev = nullptr;
  cl_uint bus = 0, slot = 0, domain = 0;
  if (clGetDeviceInfo(d.device, device_pci_bus_id_nv, sizeof bus, &bus, nullptr) == CL_SUCCESS &&
      clGetDeviceInfo(d.device, device_pci_slot_id_nv, sizeof slot, &slot, nullptr) == CL_SUCCESS) {
    // Older drivers lack the domain query; domain 0 is then the only one they support.
    if (clGetDeviceInfo(d.device, device_pci_domain_id_nv, sizeof domain, &domain, nullptr) !=
        CL_SUCCESS)
      domain = 0;
    char id[32];
    std::snprintf(id, sizeof id, "%08x:%02x:%02x.%x", domain, bus & 0xff, (slot >> 3) & 0x1f,
                  slot & 7);
    if (api->by_bus_id(id, &dev) != 0) dev = nullptr;
  }
  unsigned n = 0;
  if (dev == nullptr && api->count(&n) == 0 && n == 1 && api->by_index(0, &dev) != 0) dev = nullptr;
  if (dev == nullptr)
    return {
        .name = "", .note = "no NVML device matches the OpenCL device's PCI address", .read = {}};
  free_memory_query q;
  q.name = "NVML nvmlDeviceGetMemoryInfo";
  q.read = [api, dev]() -> std::optional<std::uint64_t> {
    nvml_memory m{};
    if (api->memory(dev, &m) != 0) return std::nullopt;
    return m.free;
  };
  return q;
}

}  // namespace

free_memory_query find_free_memory_query(const device_info& d) {
  if (has_extension(d, "cl_amd_device_attribute_query")) return amd_query(d);
  if (d.vendor.find("NVIDIA") != std::string::npos) return nvml_query(d);
  return {};
}

}  // namespace clpool::cl_device
