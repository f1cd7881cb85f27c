#include "mockcl/backing/compute_shape.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace mockcl {
namespace {

// A fake device for read_shape: every query answers 8 (in its own size), except `broken`, which
// fails, and CL_DEVICE_MAX_COMPUTE_UNITS, which answers `units`.
cl_device_info broken = 0;
cl_uint units = 2;

cl_int CL_API_CALL fake_info(cl_device_id, cl_device_info param, size_t size, void* value,
                             size_t* size_ret) {
  if (param == broken) return CL_INVALID_VALUE;
  const size_t n = param == CL_DEVICE_MAX_WORK_ITEM_SIZES ? 3 * sizeof(size_t) : size;
  if (value) {
    unsigned char* out = static_cast<unsigned char*>(value);
    std::memset(out, 0, size);
    if (param == CL_DEVICE_MAX_COMPUTE_UNITS) {
      std::memcpy(out, &units, sizeof units);
    } else if (param == CL_DEVICE_MAX_WORK_ITEM_SIZES) {
      for (size_t i = 0; i < 3; ++i) out[i * sizeof(size_t)] = 8;
    } else {
      out[0] = 8;
    }
  }
  if (size_ret) *size_ret = n;
  return CL_SUCCESS;
}

cl_icd_dispatch fake() {
  cl_icd_dispatch d;
  std::memset(&d, 0, sizeof d);
  d.clGetDeviceInfo = fake_info;
  return d;
}

TEST(ComputeShape, ReadsEveryQueryOfTheBackingDevice) {
  broken = 0;
  units = 2;
  const cl_icd_dispatch d = fake();
  const char* error = "unset";
  const std::optional<compute_shape> s = read_shape(d, nullptr, error);
  ASSERT_TRUE(s.has_value()) << error;
  EXPECT_EQ(error, nullptr);
  EXPECT_EQ(s->compute_units, 2u);
  EXPECT_EQ(s->max_work_group, 8u);
  EXPECT_EQ(s->max_work_items[2], 8u);
  EXPECT_EQ(s->native_width[6], 8u);
  EXPECT_EQ(s->printf_buffer, 8u);
}

TEST(ComputeShape, AQueryThatFailsOrMakesNoSenseIsNamed) {
  const cl_icd_dispatch d = fake();
  const char* error = nullptr;
  broken = CL_DEVICE_LOCAL_MEM_TYPE;
  EXPECT_FALSE(read_shape(d, nullptr, error).has_value());
  EXPECT_STREQ(error, "CL_DEVICE_LOCAL_MEM_SIZE");
  broken = CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF;
  EXPECT_FALSE(read_shape(d, nullptr, error).has_value());
  EXPECT_STREQ(error, "CL_DEVICE_PREFERRED_VECTOR_WIDTH_*");
  broken = 0;
  units = 0;  // No compute unit: nothing could run there.
  EXPECT_FALSE(read_shape(d, nullptr, error).has_value());
  EXPECT_STREQ(error, "CL_DEVICE_MAX_COMPUTE_UNITS");
  units = 2;
}

TEST(ComputeShape, AnswersItsQueriesAndNoOther) {
  const compute_shape gpu = mock_shape(true);
  EXPECT_EQ(gpu.compute_units, 32u);
  EXPECT_EQ(mock_shape(false).compute_units, 4u);
  EXPECT_LE(gpu.max_work_group, gpu.max_work_items[0]);
  size_t wg = 0, n = 0;
  ASSERT_EQ(shape_info(gpu, true, false, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, &n),
            CL_SUCCESS);
  EXPECT_EQ(wg, 1024u);
  EXPECT_EQ(n, sizeof wg);
  size_t items[3] = {};
  ASSERT_EQ(
      shape_info(gpu, true, false, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(items[2], 64u);
  EXPECT_EQ(shape_info(gpu, true, false, CL_DEVICE_MAX_WORK_ITEM_SIZES, 8, items, nullptr),
            CL_INVALID_VALUE);
  cl_uint width = 9;
  ASSERT_EQ(shape_info(gpu, true, false, CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE, sizeof width, &width,
                       nullptr),
            CL_SUCCESS);
  EXPECT_EQ(width, 1u);
  ASSERT_EQ(shape_info(gpu, false, false, CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE, sizeof width,
                       &width, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(width, 0u);  // No fp64: no double vectors, whatever the device says.
  cl_device_fp_config fp = 1;
  ASSERT_EQ(shape_info(gpu, false, false, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(fp, 0u);
  ASSERT_EQ(shape_info(gpu, false, false, CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF, sizeof width,
                       &width, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(width, 0u);
  EXPECT_FALSE(shape_info(gpu, true, true, CL_DEVICE_NAME, 0, nullptr, nullptr).has_value());
  EXPECT_FALSE(
      shape_info(gpu, true, true, CL_DEVICE_GLOBAL_MEM_SIZE, 0, nullptr, nullptr).has_value());
}

}  // namespace
}  // namespace mockcl
