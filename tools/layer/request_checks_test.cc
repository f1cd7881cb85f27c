// clSVMAlloc's argument checks against a context whose devices a fake dispatch table describes:
// which requests are invalid whatever the devices, and which depend on their SVM capabilities and
// reported CL_DEVICE_MAX_MEM_ALLOC_SIZE.
#include "tools/layer/request_checks.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace clpool::layer {
namespace {

// The fake context's devices: their SVM capabilities and max allocation.
struct fake_device {
  cl_device_svm_capabilities svm = 0;
  cl_ulong max_alloc = 0;
};
std::vector<fake_device> devices;

cl_int CL_API_CALL context_info(cl_context, cl_context_info name, size_t size, void* value,
                                size_t* size_ret) {
  if (name != CL_CONTEXT_DEVICES) return CL_INVALID_VALUE;
  const size_t bytes = devices.size() * sizeof(cl_device_id);
  if (size_ret != nullptr) *size_ret = bytes;
  if (value != nullptr) {
    if (size < bytes) return CL_INVALID_VALUE;
    auto* ids = static_cast<cl_device_id*>(value);
    for (size_t i = 0; i < devices.size(); ++i) ids[i] = reinterpret_cast<cl_device_id>(i + 1);
  }
  return CL_SUCCESS;
}

cl_int CL_API_CALL device_info(cl_device_id id, cl_device_info name, size_t size, void* value,
                               size_t*) {
  const fake_device& d = devices.at(reinterpret_cast<size_t>(id) - 1);
  if (name == CL_DEVICE_SVM_CAPABILITIES && size >= sizeof d.svm) {
    std::memcpy(value, &d.svm, sizeof d.svm);
  } else if (name == CL_DEVICE_MAX_MEM_ALLOC_SIZE && size >= sizeof d.max_alloc) {
    std::memcpy(value, &d.max_alloc, sizeof d.max_alloc);
  } else {
    return CL_INVALID_VALUE;
  }
  return CL_SUCCESS;
}

// A dispatch table whose context and device queries answer from `devices`.
cl_icd_dispatch fake_table() {
  cl_icd_dispatch target{};
  target.clGetContextInfo = context_info;
  target.clGetDeviceInfo = device_info;
  return target;
}
const cl_icd_dispatch table = fake_table();

svm_request check(cl_svm_mem_flags flags, std::uint64_t size, cl_uint alignment = 0,
                  std::uint64_t cap = ~std::uint64_t{0}, bool enforced = true) {
  device_model::device_profile profile;
  profile.max_alloc_enforced = enforced;
  return check_svm_request(table, reinterpret_cast<cl_context>(1), flags, size, alignment, profile,
                           cap);
}

// Invalid arguments only: a request above the max allocation is valid but refused for its size.
bool invalid(cl_svm_mem_flags flags, std::uint64_t size, cl_uint alignment = 0) {
  const svm_request r = check(flags, size, alignment);
  EXPECT_FALSE(r.invalid && r.above_max_alloc);
  return r.invalid;
}

constexpr cl_device_svm_capabilities coarse = CL_DEVICE_SVM_COARSE_GRAIN_BUFFER;
constexpr cl_device_svm_capabilities fine = coarse | CL_DEVICE_SVM_FINE_GRAIN_BUFFER;

TEST(SvmRequest, TheArgumentsAloneWhateverTheDevices) {
  devices = {{fine | CL_DEVICE_SVM_ATOMICS, 1 << 30}};
  EXPECT_FALSE(invalid(CL_MEM_READ_WRITE, 4096));
  EXPECT_FALSE(invalid(CL_MEM_READ_WRITE, 4096, 64));  // a power of two
  EXPECT_TRUE(invalid(CL_MEM_READ_WRITE, 0));
  EXPECT_TRUE(invalid(CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 4096));
  EXPECT_TRUE(invalid(CL_MEM_READ_WRITE | CL_MEM_SVM_ATOMICS, 4096));  // atomics need fine grain
  EXPECT_TRUE(invalid(CL_MEM_READ_WRITE | (cl_svm_mem_flags{1} << 40), 4096));
  EXPECT_TRUE(invalid(CL_MEM_READ_WRITE, 4096, 3));
}

// Invalid only when no device of the context supports SVM: a device without it, beside one with
// it, leaves a coarse-grain request valid. A fine-grain or atomics request needs every device.
TEST(SvmRequest, AContextWithOneSvmDeviceTakesPlainRequests) {
  devices = {{coarse, 1 << 30}, {0, 1 << 30}};
  EXPECT_FALSE(invalid(CL_MEM_READ_WRITE, 4096));
  EXPECT_TRUE(invalid(CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, 4096));
  devices = {{0, 1 << 30}, {0, 1 << 30}};
  EXPECT_TRUE(invalid(CL_MEM_READ_WRITE, 4096));
  devices = {{fine, 1 << 30}, {coarse, 1 << 30}};
  EXPECT_TRUE(invalid(CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, 4096));
  devices = {{fine, 1 << 30}, {fine, 1 << 30}};
  EXPECT_FALSE(invalid(CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, 4096));
}

// Above the smallest reported max allocation (capped at the budget) where the profile enforces
// it (the default profile does).
// A refusal for its size, not an invalid argument; the limit it is above is given.
TEST(SvmRequest, AboveTheSmallestReportedMaxAlloc) {
  devices = {{coarse, 1 << 30}, {coarse, 1 << 20}};
  EXPECT_TRUE(check(CL_MEM_READ_WRITE, 1 << 20).valid());
  const svm_request above = check(CL_MEM_READ_WRITE, (1 << 20) + 1);
  EXPECT_FALSE(above.invalid);
  EXPECT_EQ(above.above_max_alloc, std::optional<std::uint64_t>(1 << 20));
  EXPECT_EQ(check(CL_MEM_READ_WRITE, 8192, 0, 4096).above_max_alloc,  // the cap, a budget
            std::optional<std::uint64_t>(4096));
  // Where the profile does not enforce it (nvidia's), the driver decides.
  EXPECT_TRUE(check(CL_MEM_READ_WRITE, (1 << 20) + 1, 0, ~std::uint64_t{0}, false).valid());
  // Invalid arguments come first: a size 0 or a bad alignment is no size refusal.
  const svm_request both = check(CL_MEM_READ_WRITE, (1 << 20) + 1, 3);
  EXPECT_TRUE(both.invalid);
  EXPECT_FALSE(both.above_max_alloc);
}

// The layer's clGetDeviceInfo and the checks use one rule for what a device reports under a
// budget: the driver's figure, or the budget when that is smaller.
TEST(ReportedUnderBudget, TheSmallerOfTheDriversFigureAndTheBudget) {
  EXPECT_EQ(reported_under_budget(4ull << 30, 1ull << 30), 1ull << 30);
  EXPECT_EQ(reported_under_budget(1ull << 20, 1ull << 30), 1ull << 20);
  EXPECT_EQ(reported_under_budget(~0ull, ~0ull), ~0ull);  // no budget: the driver's figure
  devices = {{coarse, 4ull << 30}, {coarse, 2ull << 30}};
  EXPECT_EQ(context_max_alloc(table, reinterpret_cast<cl_context>(1), /*largest=*/true, 3ull << 30),
            3ull << 30);
  EXPECT_EQ(
      context_max_alloc(table, reinterpret_cast<cl_context>(1), /*largest=*/false, 3ull << 30),
      2ull << 30);
  EXPECT_EQ(
      context_max_alloc(table, reinterpret_cast<cl_context>(1), /*largest=*/false, 1ull << 30),
      1ull << 30);
}

}  // namespace
}  // namespace clpool::layer
