#include "mockcl/consistency.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

namespace mockcl::testing {
namespace {

struct consistency_checker {
  const cl_icd_dispatch& d;
  cl_device_id dev;
  std::vector<std::string> problems;

  void expect(bool ok, const std::string& what) {
    if (!ok) problems.push_back(what);
  }
  template <typename T>
  T get(cl_device_info param, const char* name) {
    T v{};
    expect(d.clGetDeviceInfo(dev, param, sizeof v, &v, nullptr) == CL_SUCCESS,
           std::string(name) + ": query failed");
    return v;
  }
  // A query that exists only with an extension the device may lack: without it, a refusal with
  // CL_INVALID_VALUE is as good as answering 0 (NVIDIA's driver refuses
  // CL_DEVICE_HALF_FP_CONFIG without cl_khr_fp16).
  template <typename T>
  T get_if(bool has_extension, cl_device_info param, const char* name) {
    T v{};
    const cl_int status = d.clGetDeviceInfo(dev, param, sizeof v, &v, nullptr);
    expect(status == CL_SUCCESS || (!has_extension && status == CL_INVALID_VALUE),
           std::string(name) + ": query failed");
    return status == CL_SUCCESS ? v : T{};
  }
  std::string str(cl_device_info param, const char* name) {
    size_t n = 0;
    if (d.clGetDeviceInfo(dev, param, 0, nullptr, &n) != CL_SUCCESS) {
      problems.push_back(std::string(name) + ": query failed");
      return "";
    }
    std::string s(n, '\0');
    d.clGetDeviceInfo(dev, param, n, s.data(), nullptr);
    s.resize(n ? n - 1 : 0);
    return s;
  }
  std::vector<cl_name_version> list(cl_device_info param, const char* name) {
    size_t n = 0;
    if (d.clGetDeviceInfo(dev, param, 0, nullptr, &n) != CL_SUCCESS) {
      problems.push_back(std::string(name) + ": query failed");
      return {};
    }
    expect(n % sizeof(cl_name_version) == 0,
           std::string(name) + ": size is not a multiple of cl_name_version");
    std::vector<cl_name_version> v(n / sizeof(cl_name_version));
    if (n) d.clGetDeviceInfo(dev, param, n, v.data(), nullptr);
    return v;
  }
};

std::set<std::string> words(const std::string& s) {
  std::set<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.insert(w);
  return out;
}

// "OpenCL 3.0 ..." -> 3.0 as a cl_version; 0 when it does not parse.
cl_version parse_version(const std::string& s, const std::string& prefix) {
  unsigned major = 0, minor = 0;
  if (s.compare(0, prefix.size(), prefix) != 0) return 0;
  if (std::sscanf(s.c_str() + prefix.size(), "%u.%u", &major, &minor) != 2) return 0;
  return CL_MAKE_VERSION(major, minor, 0);
}

// The device's extensions (both queries agree) and its OpenCL C features (each version 3.0.0).
struct device_words {
  std::set<std::string> extensions, features;
  bool feature(const char* f) const { return features.count(f) != 0; }
};

device_words check_extensions(consistency_checker& c) {
  // Extensions: the string and the list with versions name the same set.
  const std::set<std::string> ext = words(c.str(CL_DEVICE_EXTENSIONS, "CL_DEVICE_EXTENSIONS"));
  std::set<std::string> ext_v;
  for (const auto& nv :
       c.list(CL_DEVICE_EXTENSIONS_WITH_VERSION, "CL_DEVICE_EXTENSIONS_WITH_VERSION"))
    ext_v.insert(nv.name);
  c.expect(ext == ext_v, "CL_DEVICE_EXTENSIONS and CL_DEVICE_EXTENSIONS_WITH_VERSION differ");
  std::set<std::string> features;
  for (const auto& nv : c.list(CL_DEVICE_OPENCL_C_FEATURES, "CL_DEVICE_OPENCL_C_FEATURES")) {
    features.insert(nv.name);
    c.expect(nv.version == CL_MAKE_VERSION(3, 0, 0),
             std::string(nv.name) + ": feature version is not 3.0.0");
  }
  return {ext, features};
}

void check_fp(consistency_checker& c, const std::set<std::string>& ext, const device_words& w) {
  const auto feature = [&](const char* f) { return w.feature(f); };
  // fp64: the extension, the config, the vector widths and the feature agree.
  const bool fp64 = ext.count("cl_khr_fp64") != 0;
  const auto dfp =
      c.get<cl_device_fp_config>(CL_DEVICE_DOUBLE_FP_CONFIG, "CL_DEVICE_DOUBLE_FP_CONFIG");
  const auto dpref =
      c.get<cl_uint>(CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE, "PREFERRED_VECTOR_WIDTH_DOUBLE");
  const auto dnat =
      c.get<cl_uint>(CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE, "NATIVE_VECTOR_WIDTH_DOUBLE");
  c.expect(fp64 == (dfp != 0), "cl_khr_fp64 and CL_DEVICE_DOUBLE_FP_CONFIG disagree");
  c.expect(fp64 == (dpref != 0) && fp64 == (dnat != 0),
           "cl_khr_fp64 and the double vector widths disagree");
  c.expect(fp64 == feature("__opencl_c_fp64"), "cl_khr_fp64 and __opencl_c_fp64 disagree");
  const cl_device_fp_config dmin =
      CL_FP_FMA | CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN | CL_FP_DENORM;
  c.expect(!fp64 || (dfp & dmin) == dmin, "CL_DEVICE_DOUBLE_FP_CONFIG lacks the fp64 minimum");
  // fp16 likewise.
  const bool fp16 = ext.count("cl_khr_fp16") != 0;
  // CL_DEVICE_HALF_FP_CONFIG requires cl_khr_fp16 (OpenCL 3.0, the device queries' table).
  const auto hfp =
      c.get_if<cl_device_fp_config>(fp16, CL_DEVICE_HALF_FP_CONFIG, "CL_DEVICE_HALF_FP_CONFIG");
  const auto hpref =
      c.get<cl_uint>(CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF, "PREFERRED_VECTOR_WIDTH_HALF");
  const auto hnat = c.get<cl_uint>(CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF, "NATIVE_VECTOR_WIDTH_HALF");
  c.expect(fp16 == (hfp != 0), "cl_khr_fp16 and CL_DEVICE_HALF_FP_CONFIG disagree");
  c.expect(fp16 == (hpref != 0) && fp16 == (hnat != 0),
           "cl_khr_fp16 and the half vector widths disagree");
}

void check_atomics(consistency_checker& c, const device_words& w) {
  const auto feature = [&](const char* f) { return w.feature(f); };
  // Atomics: OpenCL 3.0's minimum, the implications between orders and scopes, and the features.
  const auto mem =
      c.get<cl_device_atomic_capabilities>(CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES, "ATOMIC_MEMORY");
  const auto fence =
      c.get<cl_device_atomic_capabilities>(CL_DEVICE_ATOMIC_FENCE_CAPABILITIES, "ATOMIC_FENCE");
  const cl_device_atomic_capabilities mem_min =
      CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP;
  const cl_device_atomic_capabilities fence_min = mem_min | CL_DEVICE_ATOMIC_ORDER_ACQ_REL;
  c.expect((mem & mem_min) == mem_min,
           "CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES lacks relaxed + work-group scope");
  c.expect((fence & fence_min) == fence_min,
           "CL_DEVICE_ATOMIC_FENCE_CAPABILITIES lacks relaxed + acq_rel + work-group");
  c.expect(!(mem & CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES) || (mem & CL_DEVICE_ATOMIC_SCOPE_DEVICE),
           "atomic all-devices scope without device scope");
  c.expect(!(mem & CL_DEVICE_ATOMIC_ORDER_SEQ_CST) || (mem & CL_DEVICE_ATOMIC_ORDER_ACQ_REL),
           "atomic seq_cst without acq_rel");
  const struct {
    const char* feature;
    cl_device_atomic_capabilities cap;
  } atomics[] = {
      {"__opencl_c_atomic_order_acq_rel", CL_DEVICE_ATOMIC_ORDER_ACQ_REL},
      {"__opencl_c_atomic_order_seq_cst", CL_DEVICE_ATOMIC_ORDER_SEQ_CST},
      {"__opencl_c_atomic_scope_device", CL_DEVICE_ATOMIC_SCOPE_DEVICE},
      {"__opencl_c_atomic_scope_all_devices", CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES},
  };
  for (const auto& a : atomics)
    c.expect(feature(a.feature) == ((mem & a.cap) != 0),
             std::string(a.feature) + " and the atomic capabilities disagree");
}

void check_optional_features(consistency_checker& c, const device_words& w) {
  const auto feature = [&](const char* f) { return w.feature(f); };
  // Optional features and the queries they go with (the CTS's features_macro pairs).
  const auto profile = c.str(CL_DEVICE_PROFILE, "CL_DEVICE_PROFILE");
  c.expect(profile != "FULL_PROFILE" || feature("__opencl_c_int64"),
           "a FULL_PROFILE device without __opencl_c_int64");
  auto flag = [&](cl_device_info p, const char* name) {
    return c.get<cl_bool>(p, name) == CL_TRUE;
  };
  const bool pipes = flag(CL_DEVICE_PIPE_SUPPORT, "CL_DEVICE_PIPE_SUPPORT");
  c.expect(pipes == feature("__opencl_c_pipes"),
           "CL_DEVICE_PIPE_SUPPORT and __opencl_c_pipes disagree");
  if (!pipes) {
    c.expect(c.get<cl_uint>(CL_DEVICE_MAX_PIPE_ARGS, "MAX_PIPE_ARGS") == 0 &&
                 c.get<cl_uint>(CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS,
                                "PIPE_MAX_ACTIVE_RESERVATIONS") == 0 &&
                 c.get<cl_uint>(CL_DEVICE_PIPE_MAX_PACKET_SIZE, "PIPE_MAX_PACKET_SIZE") == 0,
             "no pipe support but nonzero pipe limits");
  }
  c.expect(flag(CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT, "GENERIC_ADDRESS_SPACE_SUPPORT") ==
               feature("__opencl_c_generic_address_space"),
           "generic address space support and its feature disagree");
  c.expect(flag(CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT,
                "WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT") ==
               feature("__opencl_c_work_group_collective_functions"),
           "work-group collective support and its feature disagree");
  c.expect(flag(CL_DEVICE_IMAGE_SUPPORT, "CL_DEVICE_IMAGE_SUPPORT") == feature("__opencl_c_images"),
           "image support and __opencl_c_images disagree");
  c.expect((c.get<cl_uint>(CL_DEVICE_MAX_NUM_SUB_GROUPS, "MAX_NUM_SUB_GROUPS") != 0) ==
               feature("__opencl_c_subgroups"),
           "sub-groups and __opencl_c_subgroups disagree");
  c.expect((c.get<size_t>(CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE, "MAX_GLOBAL_VARIABLE_SIZE") != 0) ==
               feature("__opencl_c_program_scope_global_variables"),
           "global variable size and its feature disagree");
  const auto dse = c.get<cl_device_device_enqueue_capabilities>(
      CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, "DEVICE_ENQUEUE");
  c.expect(((dse & CL_DEVICE_QUEUE_SUPPORTED) != 0) == feature("__opencl_c_device_enqueue"),
           "device enqueue and its feature disagree");
  if (dse == 0) {
    c.expect(c.get<cl_command_queue_properties>(CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES,
                                                "QUEUE_ON_DEVICE_PROPERTIES") == 0 &&
                 c.get<cl_uint>(CL_DEVICE_MAX_ON_DEVICE_QUEUES, "MAX_ON_DEVICE_QUEUES") == 0 &&
                 c.get<cl_uint>(CL_DEVICE_MAX_ON_DEVICE_EVENTS, "MAX_ON_DEVICE_EVENTS") == 0,
             "no device enqueue but nonzero on-device queue limits");
  }
}

void check_versions(consistency_checker& c, const cl_icd_dispatch& d, cl_platform_id platform) {
  // Versions: strings against numbers, OpenCL C versions against the list.
  const cl_version dev_num =
      c.get<cl_version>(CL_DEVICE_NUMERIC_VERSION, "CL_DEVICE_NUMERIC_VERSION");
  const cl_version dev_str =
      parse_version(c.str(CL_DEVICE_VERSION, "CL_DEVICE_VERSION"), "OpenCL ");
  c.expect(dev_str != 0 &&
               dev_str == CL_MAKE_VERSION(CL_VERSION_MAJOR(dev_num), CL_VERSION_MINOR(dev_num), 0),
           "CL_DEVICE_VERSION and CL_DEVICE_NUMERIC_VERSION disagree");
  cl_version plat_num = 0;
  d.clGetPlatformInfo(platform, CL_PLATFORM_NUMERIC_VERSION, sizeof plat_num, &plat_num, nullptr);
  size_t n = 0;
  d.clGetPlatformInfo(platform, CL_PLATFORM_VERSION, 0, nullptr, &n);
  std::string plat(n, '\0');
  d.clGetPlatformInfo(platform, CL_PLATFORM_VERSION, n, plat.data(), nullptr);
  const cl_version plat_str = parse_version(plat, "OpenCL ");
  c.expect(plat_str != 0 && plat_str == CL_MAKE_VERSION(CL_VERSION_MAJOR(plat_num),
                                                        CL_VERSION_MINOR(plat_num), 0),
           "CL_PLATFORM_VERSION and CL_PLATFORM_NUMERIC_VERSION disagree");
  c.expect(dev_num <= plat_num, "the device's version is above its platform's");
  std::vector<cl_version> cvs;
  for (const auto& nv :
       c.list(CL_DEVICE_OPENCL_C_ALL_VERSIONS, "CL_DEVICE_OPENCL_C_ALL_VERSIONS")) {
    c.expect(std::string(nv.name) == "OpenCL C", std::string("unknown language '") + nv.name + "'");
    cvs.push_back(CL_MAKE_VERSION(CL_VERSION_MAJOR(nv.version), CL_VERSION_MINOR(nv.version), 0));
  }
  auto has_c = [&](cl_version v) { return std::find(cvs.begin(), cvs.end(), v) != cvs.end(); };
  const cl_version c_str =
      parse_version(c.str(CL_DEVICE_OPENCL_C_VERSION, "CL_DEVICE_OPENCL_C_VERSION"), "OpenCL C ");
  c.expect(c_str != 0 && has_c(c_str),
           "CL_DEVICE_OPENCL_C_VERSION is not in CL_DEVICE_OPENCL_C_ALL_VERSIONS");
  if (dev_num >= CL_MAKE_VERSION(3, 0, 0))
    c.expect(has_c(CL_MAKE_VERSION(3, 0, 0)), "an OpenCL 3.0 device without OpenCL C 3.0");
}

void check_il_and_built_ins(consistency_checker& c) {
  // IL and built-in kernels: the strings and the lists agree (both empty here).
  c.expect(c.str(CL_DEVICE_IL_VERSION, "CL_DEVICE_IL_VERSION").empty() ==
               c.list(CL_DEVICE_ILS_WITH_VERSION, "CL_DEVICE_ILS_WITH_VERSION").empty(),
           "CL_DEVICE_IL_VERSION and CL_DEVICE_ILS_WITH_VERSION disagree");
  c.expect(
      c.str(CL_DEVICE_BUILT_IN_KERNELS, "CL_DEVICE_BUILT_IN_KERNELS").empty() ==
          c.list(CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION, "BUILT_IN_KERNELS_WITH_VERSION").empty(),
      "built-in kernel string and list disagree");
}

}  // namespace

std::vector<std::string> device_consistency(const cl_icd_dispatch& d, cl_platform_id platform,
                                            cl_device_id device) {
  consistency_checker c{d, device, {}};
  const device_words w = check_extensions(c);
  check_fp(c, w.extensions, w);
  check_atomics(c, w);
  check_optional_features(c, w);
  check_versions(c, d, platform);
  check_il_and_built_ins(c);
  return c.problems;
}

}  // namespace mockcl::testing
