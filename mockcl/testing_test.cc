// //mockcl:testing with POCL beside the mock: the loader lists both (in directory order, so
// find the mock by name), and the control reaches the loaded mock instance.
#include "mockcl/testing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

TEST(Testing, MockAndPoclTogether) {
  std::string so = mockcl::testing::mock_so_path();
  mockcl::testing::use_mock_and_pocl(so);
  const cl_icd_dispatch* d = mockcl::testing::loader_dispatch();
  cl_uint n = 0;
  ASSERT_EQ(d->clGetPlatformIDs(0, nullptr, &n), CL_SUCCESS);
  ASSERT_EQ(n, 2u);
  std::vector<cl_platform_id> ps(n);
  d->clGetPlatformIDs(n, ps.data(), nullptr);
  std::vector<std::string> names;
  for (cl_platform_id p : ps) {
    char name[256] = {0};
    d->clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names[0], "Portable Computing Language");
  EXPECT_EQ(names[1], "mockcl");
  cl_platform_id mock = mockcl::testing::loader_mock_platform();
  ASSERT_NE(mock, nullptr);
  auto ctl = mockcl::testing::icd_control(so);
  ctl->reset();
  ASSERT_EQ(ctl->configure_devices("gpu-1m"), "");
  cl_device_id dev;
  ASSERT_EQ(d->clGetDeviceIDs(mock, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr), CL_SUCCESS);
  cl_int err;
  cl_context ctx = d->clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem m = d->clCreateBuffer(ctx, 0, 1 << 20, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(ctl->snapshot().devices.at(0).outstanding, 1u << 20);
  EXPECT_NE(ctl->object_id(m), 0u);
  d->clReleaseMemObject(m);
  d->clReleaseContext(ctx);
  EXPECT_EQ(ctl->snapshot().live.at("context"), 0u);
}

}  // namespace
