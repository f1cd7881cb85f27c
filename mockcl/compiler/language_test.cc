#include "mockcl/compiler/language.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace mockcl {
namespace {

bool has(const std::vector<cl_name_version>& list, const char* name) {
  return std::any_of(list.begin(), list.end(),
                     [&](const cl_name_version& nv) { return std::strcmp(nv.name, name) == 0; });
}

cl_name_version nv(const char* name) {
  cl_name_version v{};
  std::strcpy(v.name, name);
  v.version = CL_MAKE_VERSION(1, 0, 0);
  return v;
}

TEST(Language, TheMocksOwnSetIsConsistentAndMeetsTheMinimum) {
  const language_caps c = decide_language(mock_language(), nullptr);
  EXPECT_TRUE(c.fp64);
  EXPECT_FALSE(c.fp16);
  EXPECT_NE(double_fp_config(c), 0u);
  EXPECT_EQ(half_fp_config(c), 0u);
  EXPECT_TRUE(has(extensions_with_version(c), "cl_khr_fp64"));
  EXPECT_NE(extension_string(c).find("cl_khr_fp64"), std::string::npos);
  EXPECT_TRUE(has(extensions_with_version(c), "cl_khr_int64_base_atomics"));
  EXPECT_TRUE(has(extensions_with_version(c), "cl_khr_int64_extended_atomics"));
  EXPECT_TRUE(has(c_features(c), "__opencl_c_fp64"));
  EXPECT_TRUE(has(c_features(c), "__opencl_c_int64"));
  const auto mem_min = CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP;
  EXPECT_EQ(c.atomic_memory & mem_min, mem_min);
  EXPECT_EQ(c.atomic_fence & (mem_min | CL_DEVICE_ATOMIC_ORDER_ACQ_REL),
            mem_min | CL_DEVICE_ATOMIC_ORDER_ACQ_REL);
  EXPECT_NE(std::find(c.c_versions.begin(), c.c_versions.end(), CL_MAKE_VERSION(3, 0, 0)),
            c.c_versions.end());
}

// A backing device like POCL 3.1's: fp64 and fp16 differ, fewer atomic features, OpenCL C 1.x
// plus 3.0, some extensions the mock lacks.
TEST(Language, BackingModeReportsTheIntersection) {
  language_caps mock = mock_language();
  mock.fp16 = true;
  language_caps pocl;
  pocl.fp64 = false;
  pocl.fp16 = true;
  pocl.int64 = true;
  pocl.atomic_memory = mock.atomic_memory;  // Claims all-devices scope but lacks its feature.
  pocl.atomic_fence = CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_ORDER_ACQ_REL |
                      CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP;
  pocl.c_versions = {CL_MAKE_VERSION(1, 2, 0), CL_MAKE_VERSION(3, 0, 0)};
  pocl.extensions = {nv("cl_khr_byte_addressable_store"), nv("cl_khr_spir"),
                     nv("cl_khr_int64_base_atomics")};
  pocl.backing_features = {"__opencl_c_int64", "__opencl_c_atomic_order_acq_rel",
                           "__opencl_c_atomic_scope_device", "__opencl_c_images"};
  const language_caps c = decide_language(mock, &pocl);
  EXPECT_TRUE(mock.non_uniform_work_groups);
  EXPECT_FALSE(c.non_uniform_work_groups);  // POCL 3.1's device has none.
  EXPECT_FALSE(c.fp64);
  EXPECT_TRUE(c.fp16);
  EXPECT_EQ(double_fp_config(c), 0u);
  EXPECT_NE(half_fp_config(c), 0u);
  const auto ext = extensions_with_version(c);
  EXPECT_FALSE(has(ext, "cl_khr_fp64"));
  EXPECT_TRUE(has(ext, "cl_khr_fp16"));
  EXPECT_TRUE(has(ext, "cl_khr_byte_addressable_store"));
  EXPECT_FALSE(has(ext, "cl_khr_spir"));                       // POCL's alone.
  EXPECT_FALSE(has(ext, "cl_khr_global_int32_base_atomics"));  // The mock's alone.
  EXPECT_TRUE(
      has(ext, "cl_khr_int64_base_atomics"));  // Both have it (piglit's int64 atomics tests).
  EXPECT_FALSE(has(ext, "cl_khr_int64_extended_atomics"));
  EXPECT_EQ(c.atomic_memory & CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES, 0u);
  EXPECT_EQ(c.atomic_memory & CL_DEVICE_ATOMIC_ORDER_SEQ_CST, 0u);
  EXPECT_NE(c.atomic_memory & CL_DEVICE_ATOMIC_SCOPE_DEVICE, 0u);
  EXPECT_EQ(c.atomic_fence, pocl.atomic_fence);
  const auto f = c_features(c);
  EXPECT_TRUE(has(f, "__opencl_c_atomic_order_acq_rel"));
  EXPECT_TRUE(has(f, "__opencl_c_atomic_scope_device"));
  EXPECT_FALSE(has(f, "__opencl_c_atomic_order_seq_cst"));
  EXPECT_FALSE(has(f, "__opencl_c_fp64"));
  EXPECT_FALSE(has(f, "__opencl_c_images"));  // Never the mock's.
  EXPECT_EQ(c.c_versions,
            (std::vector<cl_version>{CL_MAKE_VERSION(1, 2, 0), CL_MAKE_VERSION(3, 0, 0)}));
  // A backing device with fp64 but without the feature: no fp64 either.
  pocl.fp64 = true;
  EXPECT_FALSE(decide_language(mock, &pocl).fp64);
  pocl.backing_features.push_back("__opencl_c_fp64");
  EXPECT_TRUE(decide_language(mock, &pocl).fp64);
}

}  // namespace
}  // namespace mockcl
