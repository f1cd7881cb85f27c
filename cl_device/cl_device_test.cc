// Choosing an OpenCL device, on mockcl loaded as the only ICD with a CPU device first and a GPU
// second: the defaults (the first GPU), indices and name parts, every refusal's words (with the
// caller's labels), the listing, and no free-memory query on a device without one.
#include "cl_device/cl_device.h"

#include <gtest/gtest.h>

#include <string>

#include "cl_device/free_memory.h"
#include "mockcl/testing.h"

namespace clpool::cl_device {
namespace {

constexpr std::uint64_t MiB = 1 << 20;

class ClDevice : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    mockcl::testing::use_mock_only(mockcl::testing::mock_so_path());
    control_ = mockcl::testing::icd_control(mockcl::testing::mock_so_path()).release();
    ASSERT_EQ(control_->configure_devices("cpu-32m;gpu-64m"), "");
  }
  static mockcl::controller* control_;
};
mockcl::controller* ClDevice::control_ = nullptr;

std::string refusal(const std::optional<std::string>& platform,
                    const std::optional<unsigned>& device, const selection_labels& labels = {}) {
  try {
    select_device(platform, device, labels);
  } catch (const selection_error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST_F(ClDevice, TheDefaultIsTheFirstGpu) {
  const device_info d = select_device(std::nullopt, std::nullopt);
  EXPECT_TRUE(d.gpu);
  EXPECT_EQ(d.platform_index, 0u);
  EXPECT_EQ(d.device_index, 1u);
  EXPECT_EQ(d.platform_name, "mockcl");
  EXPECT_EQ(d.global_mem, 64 * MiB);
  EXPECT_GT(d.max_alloc, 0u);
  EXPECT_NE(d.device, nullptr);
  EXPECT_FALSE(d.driver_version.empty());
  // A platform alone: its first GPU too.
  EXPECT_EQ(select_device("0", std::nullopt).device_index, 1u);
}

TEST_F(ClDevice, AnIndexOrAPartOfTheName) {
  const device_info cpu = select_device("0", 0u);
  EXPECT_FALSE(cpu.gpu);
  EXPECT_EQ(cpu.global_mem, 32 * MiB);
  EXPECT_EQ(select_device("MOCK", 0u).device, cpu.device) << "a name part, any case";
  EXPECT_EQ(select_device(std::nullopt, 1u).device_index, 1u) << "a device alone: platform 0";
  const device_info again = describe_device(cpu.platform, 0, cpu.device, 0);
  EXPECT_EQ(again.device_name, cpu.device_name);
  EXPECT_EQ(again.global_mem, cpu.global_mem);
}

TEST_F(ClDevice, RefusalsNameWhatExists) {
  EXPECT_EQ(refusal("3", std::nullopt), "--platform 3: no such platform (there are 1: 0 'mockcl')");
  EXPECT_EQ(refusal("nvidia", std::nullopt),
            "--platform 'nvidia': no platform name contains it (platforms: 0 'mockcl')");
  EXPECT_EQ(refusal("", std::nullopt), "--platform: empty (give an index or part of a name)");
  EXPECT_EQ(refusal("0", 2u),
            "--device 2: no such device on platform 0 'mockcl' (it has 2, numbered from 0)");
  EXPECT_EQ(refusal("9999999999", std::nullopt).rfind("--platform 9999999999: no such platform", 0),
            0u);
  const selection_labels labels{"--device opencl:PLATFORM", "--device opencl::INDEX"};
  EXPECT_EQ(refusal("7", std::nullopt, labels).rfind("--device opencl:PLATFORM 7: ", 0), 0u);
  EXPECT_EQ(refusal("0", 5u, labels).rfind("--device opencl::INDEX 5: ", 0), 0u);
}

TEST_F(ClDevice, TheListingNamesEveryDeviceWithItsIndices) {
  const std::string list = list_devices();
  EXPECT_EQ(list.rfind("platform 0: mockcl\n", 0), 0u) << list;
  EXPECT_NE(list.find("  device 0: "), std::string::npos) << list;
  EXPECT_NE(list.find(" (32 MiB, driver "), std::string::npos) << list;
  EXPECT_NE(list.find("  device 1: "), std::string::npos) << list;
  EXPECT_NE(list.find(" (GPU, 64 MiB, driver "), std::string::npos) << list;
}

// A name is whatever the driver says: listed in the text rule, so no escape reaches a terminal
// and the listing stays one line per device.
TEST_F(ClDevice, TheListingEscapesControlCharactersInNames) {
  ASSERT_EQ(control_->configure_devices("gpu-64m:name=\x1b[31mred\nfake"), "");
  const std::string list = list_devices();
  ASSERT_EQ(control_->configure_devices("cpu-32m;gpu-64m"), "");
  EXPECT_NE(list.find("  device 0: \\x1B[31mred\\x0Afake (GPU, 64 MiB"), std::string::npos) << list;
  EXPECT_EQ(list.find('\x1b'), std::string::npos) << list;
}

TEST_F(ClDevice, NoFreeMemoryQueryOnADeviceWithoutOne) {
  const free_memory_query q = find_free_memory_query(select_device(std::nullopt, std::nullopt));
  EXPECT_TRUE(q.name.empty()) << q.name;
}

}  // namespace
}  // namespace clpool::cl_device
