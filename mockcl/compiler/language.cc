#include "mockcl/compiler/language.h"

#include <algorithm>
#include <cstring>

namespace mockcl {
namespace {

constexpr cl_version k100 = CL_MAKE_VERSION(1, 0, 0);
constexpr cl_version k300 = CL_MAKE_VERSION(3, 0, 0);

cl_name_version named(const char* name, cl_version v) {
  cl_name_version nv{};
  nv.version = v;
  std::strncpy(nv.name, name, CL_NAME_VERSION_MAX_NAME_SIZE - 1);
  return nv;
}

bool has_name(const std::vector<cl_name_version>& list, const char* name) {
  for (const auto& nv : list)
    if (std::strcmp(nv.name, name) == 0) return true;
  return false;
}

// The OpenCL C features tied to an atomic memory capability (OpenCL 3.0, table of features).
struct atomic_feature {
  const char* name;
  cl_device_atomic_capabilities cap;
};
constexpr atomic_feature kAtomicFeatures[] = {
    {"__opencl_c_atomic_order_acq_rel", CL_DEVICE_ATOMIC_ORDER_ACQ_REL},
    {"__opencl_c_atomic_order_seq_cst", CL_DEVICE_ATOMIC_ORDER_SEQ_CST},
    {"__opencl_c_atomic_scope_device", CL_DEVICE_ATOMIC_SCOPE_DEVICE},
    {"__opencl_c_atomic_scope_all_devices", CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES},
};

template <typename T>
T query(const cl_icd_dispatch& d, cl_device_id dev, cl_device_info param) {
  T v{};
  if (d.clGetDeviceInfo(dev, param, sizeof v, &v, nullptr) != CL_SUCCESS) return T{};
  return v;
}

std::vector<cl_name_version> query_list(const cl_icd_dispatch& d, cl_device_id dev,
                                        cl_device_info param) {
  size_t n = 0;
  if (d.clGetDeviceInfo(dev, param, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::vector<cl_name_version> out(n / sizeof(cl_name_version));
  if (d.clGetDeviceInfo(dev, param, out.size() * sizeof(cl_name_version), out.data(), nullptr) !=
      CL_SUCCESS)
    return {};
  return out;
}

}  // namespace

language_caps mock_language() {
  language_caps c;
  c.fp64 = true;
  c.int64 = true;
  c.non_uniform_work_groups = true;
  c.atomic_memory = CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_ORDER_ACQ_REL |
                    CL_DEVICE_ATOMIC_ORDER_SEQ_CST | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP |
                    CL_DEVICE_ATOMIC_SCOPE_DEVICE | CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES;
  c.atomic_fence = c.atomic_memory | CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM;
  c.c_versions = {CL_MAKE_VERSION(1, 0, 0), CL_MAKE_VERSION(1, 1, 0), CL_MAKE_VERSION(1, 2, 0),
                  CL_MAKE_VERSION(2, 0, 0), CL_MAKE_VERSION(3, 0, 0)};
  // Extensions of the language alone (no entry point to implement), which in backing mode come from
  // POCL's compiler where it has them: the 32-bit atomics, and the 64-bit ones (a GPU's such as
  // NVIDIA's lists them; piglit's int64 atomics tests run only where a device does).
  for (const char* e : {"cl_khr_byte_addressable_store", "cl_khr_global_int32_base_atomics",
                        "cl_khr_global_int32_extended_atomics", "cl_khr_local_int32_base_atomics",
                        "cl_khr_local_int32_extended_atomics", "cl_khr_int64_base_atomics",
                        "cl_khr_int64_extended_atomics"})
    c.extensions.push_back(named(e, k100));
  return c;
}

language_caps decide_language(const language_caps& mock, const language_caps* backing) {
  if (!backing) return mock;
  language_caps c;
  c.fp64 = mock.fp64 && backing->fp64;
  c.fp16 = mock.fp16 && backing->fp16;
  c.int64 = mock.int64 && backing->int64;
  c.non_uniform_work_groups = mock.non_uniform_work_groups && backing->non_uniform_work_groups;
  c.atomic_memory = mock.atomic_memory & backing->atomic_memory;
  c.atomic_fence = mock.atomic_fence & backing->atomic_fence;
  // A capability whose feature POCL's compiler does not define is not reported either.
  for (const atomic_feature& f : kAtomicFeatures)
    if (std::find(backing->backing_features.begin(), backing->backing_features.end(), f.name) ==
        backing->backing_features.end())
      c.atomic_memory &= ~f.cap;
  if (std::find(backing->backing_features.begin(), backing->backing_features.end(),
                "__opencl_c_fp64") == backing->backing_features.end())
    c.fp64 = false;
  for (cl_version v : mock.c_versions)
    if (std::find(backing->c_versions.begin(), backing->c_versions.end(), v) !=
        backing->c_versions.end())
      c.c_versions.push_back(v);
  for (const cl_name_version& e : mock.extensions)
    if (has_name(backing->extensions, e.name)) c.extensions.push_back(e);
  c.backing_features = backing->backing_features;
  c.images = backing->images;
  // Writes to 3D images come with images, where the backing device has them: a device listing 3D
  // image formats for writing must list the extension (the CTS's consistency_3d_image_writes).
  if (c.images)
    for (const cl_name_version& e : backing->extensions)
      if (std::strcmp(e.name, "cl_khr_3d_image_writes") == 0) c.extensions.push_back(e);
  return c;
}

language_caps read_language(const cl_icd_dispatch& d, cl_device_id dev) {
  language_caps c;
  std::vector<cl_name_version> exts = query_list(d, dev, CL_DEVICE_EXTENSIONS_WITH_VERSION);
  c.fp64 = has_name(exts, "cl_khr_fp64") &&
           query<cl_device_fp_config>(d, dev, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
  c.fp16 = has_name(exts, "cl_khr_fp16") &&
           query<cl_device_fp_config>(d, dev, CL_DEVICE_HALF_FP_CONFIG) != 0;
  c.non_uniform_work_groups =
      query<cl_bool>(d, dev, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT) == CL_TRUE;
  c.atomic_memory =
      query<cl_device_atomic_capabilities>(d, dev, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES);
  c.atomic_fence =
      query<cl_device_atomic_capabilities>(d, dev, CL_DEVICE_ATOMIC_FENCE_CAPABILITIES);
  for (const cl_name_version& v : query_list(d, dev, CL_DEVICE_OPENCL_C_ALL_VERSIONS))
    if (std::strcmp(v.name, "OpenCL C") == 0)
      c.c_versions.push_back(
          CL_MAKE_VERSION(CL_VERSION_MAJOR(v.version), CL_VERSION_MINOR(v.version), 0));
  // An OpenCL 3.0 device's compiler must take -cl-std=CL3.0 (the CTS's opencl_c_versions); POCL 3.1
  // does without listing OpenCL C 3.0.
  if (query<cl_version>(d, dev, CL_DEVICE_NUMERIC_VERSION) >= CL_MAKE_VERSION(3, 0, 0) &&
      std::find(c.c_versions.begin(), c.c_versions.end(), k300) == c.c_versions.end())
    c.c_versions.push_back(k300);
  for (const cl_name_version& f : query_list(d, dev, CL_DEVICE_OPENCL_C_FEATURES))
    c.backing_features.push_back(f.name);
  c.int64 = std::find(c.backing_features.begin(), c.backing_features.end(), "__opencl_c_int64") !=
            c.backing_features.end();
  c.extensions = std::move(exts);
  c.images = query<cl_bool>(d, dev, CL_DEVICE_IMAGE_SUPPORT) == CL_TRUE;
  return c;
}

std::vector<cl_name_version> extensions_with_version(const language_caps& caps) {
  std::vector<cl_name_version> out = caps.extensions;
  if (caps.fp64) out.push_back(named("cl_khr_fp64", k100));
  if (caps.fp16) out.push_back(named("cl_khr_fp16", k100));
  return out;
}

std::string extension_string(const language_caps& caps) {
  std::string s;
  for (const cl_name_version& e : extensions_with_version(caps))
    s += (s.empty() ? "" : " ") + std::string(e.name);
  return s;
}

std::vector<cl_name_version> c_features(const language_caps& caps) {
  std::vector<cl_name_version> out;
  if (caps.int64) out.push_back(named("__opencl_c_int64", k300));
  if (caps.fp64) out.push_back(named("__opencl_c_fp64", k300));
  for (const atomic_feature& f : kAtomicFeatures)
    if (caps.atomic_memory & f.cap) out.push_back(named(f.name, k300));
  if (caps.images) {
    out.push_back(named("__opencl_c_images", k300));
    for (const char* f : {"__opencl_c_read_write_images", "__opencl_c_3d_image_writes"})
      if (std::find(caps.backing_features.begin(), caps.backing_features.end(), f) !=
          caps.backing_features.end())
        out.push_back(named(f, k300));
  }
  return out;
}

cl_device_fp_config double_fp_config(const language_caps& caps) {
  // OpenCL 1.2's minimum for a device with cl_khr_fp64 (it covers 2.0's too).
  return caps.fp64 ? CL_FP_FMA | CL_FP_ROUND_TO_NEAREST | CL_FP_ROUND_TO_ZERO | CL_FP_ROUND_TO_INF |
                         CL_FP_INF_NAN | CL_FP_DENORM
                   : 0;
}

cl_device_fp_config half_fp_config(const language_caps& caps) {
  return caps.fp16 ? CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN : 0;
}

}  // namespace mockcl
