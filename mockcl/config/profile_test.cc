// mockcl devices with a device-model profile (MOCKCL_DEVICES "...:profile=nvidia"): memory is
// committed in the profile's pages, out-of-memory appears where the profile says, max_alloc is
// enforced only where the profile says so, and the headroom is never handed out.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <vector>

#include "mockcl/config/config.h"
#include "mockcl/runtime/control.h"

namespace {

constexpr size_t MiB = 1 << 20;

class MockclProfile : public ::testing::Test {
 protected:
  void configure(const std::string& devices) {
    ctl_.reset();
    ASSERT_EQ(ctl_.configure_devices(devices), "");
    cl_device_id dev;
    ASSERT_EQ(d_->clGetDeviceIDs(mockcl::platform(), CL_DEVICE_TYPE_ALL, 1, &dev, nullptr),
              CL_SUCCESS);
    cl_int err;
    ctx_ = d_->clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    q_ = d_->clCreateCommandQueueWithProperties(ctx_, dev, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
  }
  void TearDown() override {
    for (cl_mem m : mems_) d_->clReleaseMemObject(m);
    if (q_) d_->clReleaseCommandQueue(q_);
    if (ctx_) d_->clReleaseContext(ctx_);
    ctl_.reset();
  }
  // Creates a buffer (kept for TearDown); returns clCreateBuffer's status.
  cl_int create(size_t bytes, cl_mem* out = nullptr) {
    cl_int err;
    cl_mem m = d_->clCreateBuffer(ctx_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    if (m) mems_.push_back(m);
    if (out) *out = m;
    return err;
  }
  cl_int first_use(cl_mem m) {
    return d_->clEnqueueMigrateMemObjects(q_, 1, &m, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0,
                                          nullptr, nullptr);
  }
  uint64_t outstanding() { return ctl_.snapshot().devices.at(0).outstanding; }

  const cl_icd_dispatch* d_ = mockcl::dispatch();
  mockcl::controller& ctl_ = mockcl::control();
  cl_context ctx_ = nullptr;
  cl_command_queue q_ = nullptr;
  std::vector<cl_mem> mems_;
};

TEST_F(MockclProfile, NvidiaCommitsPagesAtFirstUse) {
  configure("gpu-1g:profile=nvidia");
  cl_mem a, b, c;
  ASSERT_EQ(create(1 * MiB, &a), CL_SUCCESS);
  EXPECT_EQ(outstanding(), 0u) << "nothing is committed at creation";
  ASSERT_EQ(first_use(a), CL_SUCCESS);
  EXPECT_EQ(outstanding(), 2 * MiB) << "a shared 2 MiB page";
  ASSERT_EQ(create(1 * MiB, &b), CL_SUCCESS);
  ASSERT_EQ(first_use(b), CL_SUCCESS);
  EXPECT_EQ(outstanding(), 2 * MiB) << "two 1 MiB buffers share a page";
  ASSERT_EQ(create(2 * MiB + 1, &c), CL_SUCCESS);
  ASSERT_EQ(first_use(c), CL_SUCCESS);
  EXPECT_EQ(outstanding(), 6 * MiB) << "2 MiB + 1 takes two whole pages";
  d_->clReleaseMemObject(c);
  mems_.pop_back();
  EXPECT_EQ(outstanding(), 2 * MiB) << "released memory returns at once";
}

TEST_F(MockclProfile, NvidiaFailsTheFirstUseAndKeepsItsHeadroom) {
  configure("gpu-64m:profile=nvidia");
  int used = 0;
  cl_int status = CL_SUCCESS;
  for (int i = 0; i < 40 && status == CL_SUCCESS; ++i) {
    cl_mem m;
    ASSERT_EQ(create(2 * MiB, &m), CL_SUCCESS) << "creation never fails for lack of memory";
    status = first_use(m);
    used += status == CL_SUCCESS;
  }
  EXPECT_EQ(status, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(used, 30) << "64 MiB free, 2.625 MiB of headroom: 30 pages";
  // The context stays usable: a small buffer that shares no page still fails, after a free it fits.
  d_->clReleaseMemObject(mems_.front());
  mems_.erase(mems_.begin());
  cl_mem m;
  ASSERT_EQ(create(4096, &m), CL_SUCCESS);
  EXPECT_EQ(first_use(m), CL_SUCCESS);
}

TEST_F(MockclProfile, MaxAllocIsEnforcedOnlyWhereTheProfileSaysSo) {
  configure("gpu-64m:profile=nvidia");
  cl_mem big;
  EXPECT_EQ(create(size_t{16} << 30, &big), CL_SUCCESS) << "NVIDIA: 16 GiB is created";
  EXPECT_EQ(first_use(big), CL_MEM_OBJECT_ALLOCATION_FAILURE) << "and fails at first use";
  TearDown();
  mems_.clear();
  q_ = nullptr;
  ctx_ = nullptr;
  configure("gpu-64m:profile=exact");
  EXPECT_EQ(create(size_t{16} << 30), CL_INVALID_BUFFER_SIZE);
  TearDown();
  mems_.clear();
  q_ = nullptr;
  ctx_ = nullptr;
  configure("gpu-64m:profile=pocl");
  EXPECT_EQ(create(size_t{16} << 30), CL_INVALID_BUFFER_SIZE);
}

TEST_F(MockclProfile, ExplicitSemanticsOverrideTheProfile) {
  configure("gpu-64m:profile=nvidia,semantics=immediate");
  EXPECT_EQ(create(32 * MiB), CL_SUCCESS);
  EXPECT_EQ(outstanding(), 32 * MiB);
  EXPECT_EQ(create(32 * MiB), CL_MEM_OBJECT_ALLOCATION_FAILURE) << "headroom: 61.375 MiB usable";
}

// An injected bytes: failure decides without charging: the device's pages, peak and where
// the next request goes are as if the refused request had never come.
TEST_F(MockclProfile, AnInjectedChargeFailureLeavesTheLedgerAlone) {
  configure("gpu-64m:profile=nvidia,semantics=immediate");
  ASSERT_EQ(create(1 * MiB), CL_SUCCESS);
  EXPECT_EQ(outstanding(), 2 * MiB);
  ASSERT_EQ(ctl_.add_fault("bytes:1"), "");
  EXPECT_EQ(create(2 * MiB), CL_MEM_OBJECT_ALLOCATION_FAILURE) << "it would need a new page";
  EXPECT_EQ(ctl_.snapshot().devices.at(0).peak, 2 * MiB) << "the refused page was never committed";
  ASSERT_EQ(ctl_.configure_faults(""), "");
  ASSERT_EQ(create(1 * MiB), CL_SUCCESS);
  EXPECT_EQ(outstanding(), 2 * MiB) << "still shares the first page";
}

TEST(MockclProfileConfig, ParsesRoundTripsAndRefusesBadProfiles) {
  auto r = mockcl::parse_devices("gpu-4g:profile=nvidia");
  ASSERT_TRUE(r.ok()) << r.error();
  const mockcl::device_config& d = r.value().at(0);
  EXPECT_EQ(d.profile, "nvidia");
  EXPECT_EQ(d.semantics, mockcl::alloc_semantics::deferred);
  EXPECT_FALSE(d.model.max_alloc_enforced);
  EXPECT_EQ(mockcl::parse_devices(mockcl::format_devices(r.value())).value(), r.value());

  EXPECT_EQ(mockcl::parse_devices("gpu").value().at(0).profile, "exact");
  for (const auto& [text, fragment] : std::vector<std::pair<const char*, const char*>>{
           {"gpu:profile=amd", "profile: profile 'amd': no such built-in profile"},
           {"gpu:profile=", "profile is empty"},
           {"gpu:profile=/no/such.profile", "/no/such.profile: cannot be opened"},
       }) {
    auto bad = mockcl::parse_devices(text);
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_NE(bad.error().find(fragment), std::string::npos) << bad.error();
  }
}

}  // namespace
