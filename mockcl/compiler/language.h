// What a mock device reports about the OpenCL C language: fp64/fp16/int64, atomic capabilities,
// OpenCL C versions, the extensions and the OpenCL C features. One decision (decide_language)
// feeds every query that names them (api_platform.cc), so they agree with each other by
// construction: a feature is listed exactly when its capability is, an extension exactly when its
// queries say so.
//
// With no backing device the mock's own set answers. In backing mode POCL's compiler builds the
// programs, so the mock reports only what both it and POCL's device support (the intersection),
// read once from POCL's device queries when POCL is loaded.
#ifndef MOCKCL_COMPILER_LANGUAGE_H_
#define MOCKCL_COMPILER_LANGUAGE_H_

#include <CL/cl_icd.h>

#include <string>
#include <vector>

namespace mockcl {

struct language_caps {
  bool fp64 = false;   // cl_khr_fp64, __opencl_c_fp64, CL_DEVICE_DOUBLE_FP_CONFIG != 0.
  bool fp16 = false;   // cl_khr_fp16, CL_DEVICE_HALF_FP_CONFIG != 0.
  bool int64 = false;  // __opencl_c_int64 (a FULL_PROFILE device has it).
  // CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT: OpenCL C 2.0/3.0 launches may have partial groups.
  bool non_uniform_work_groups = false;
  cl_device_atomic_capabilities atomic_memory = 0;
  cl_device_atomic_capabilities atomic_fence = 0;
  std::vector<cl_version> c_versions;  // "OpenCL C" versions (CL_DEVICE_OPENCL_C_ALL_VERSIONS),
                                       // ascending; the device's API version (3.0) among them.
  std::vector<cl_name_version>
      extensions;  // Besides cl_khr_fp64 / cl_khr_fp16 (derived from the flags).
  // The OpenCL C features a backing device lists (empty for the mock's own set): a feature the
  // mock would derive but POCL's compiler does not define is dropped with its capability.
  std::vector<std::string> backing_features;
  // CL_DEVICE_IMAGE_SUPPORT: only a backing device's images (POCL holds and samples them; the
  // mock has no image engine of its own). With it come __opencl_c_images, and those of
  // __opencl_c_read_write_images / __opencl_c_3d_image_writes that the backing compiler defines.
  bool images = false;
};

// The mock GPU's own language: fp64, int64, OpenCL C 1.0-3.0, every atomic order and scope
// (OpenCL 3.0's minimum included), the int32 and int64 atomics and byte-addressable-store
// extensions.
language_caps mock_language();

// What a device reports: `mock` alone, or its intersection with `backing` (POCL's device).
language_caps decide_language(const language_caps& mock, const language_caps* backing);

// What mockcl's devices report now (api_platform.cc): mock_language(), or in backing mode its
// decision with POCL's device. Settles MOCKCL_BACKING's default, as a context does.
const language_caps& device_language();

// POCL's (or any ICD's) device, read through its dispatch table. Queries it cannot answer read
// as "not supported".
language_caps read_language(const cl_icd_dispatch& d, cl_device_id device);

// The derived answers.
std::vector<cl_name_version> extensions_with_version(const language_caps& caps);
std::string extension_string(const language_caps& caps);  // Space-separated names.
std::vector<cl_name_version> c_features(const language_caps& caps);
cl_device_fp_config double_fp_config(const language_caps& caps);
cl_device_fp_config half_fp_config(const language_caps& caps);

}  // namespace mockcl

#endif  // MOCKCL_COMPILER_LANGUAGE_H_
