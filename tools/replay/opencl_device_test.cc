// --device opencl's checks on mockcl loaded as an ordinary ICD, in-process so that "another
// program" can act on the same device while a replay runs: a second context on the same
// cl_device_id, which shares the device's memory as another process's context does on a real
// driver. A change of free memory during the replay must be detected and the replay refused
// (device_untrusted), not folded into its answer; an undisturbed replay passes.
#include "tools/replay/opencl_device.h"

#include <CL/cl.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "device_model/profile.h"
#include "mockcl/testing.h"

namespace clpool::replay_cli {

using replay::alloc_semantics;
using replay::device_backend;
using replay::device_untrusted;
using replay::parse_config;
using replay::replay_config;
using replay::replay_report;
using replay::replay_stream;

namespace {

using trace::trace_action;
using trace::trace_event;

// A trace in memory that calls `hook(i)` as it hands out event i.
struct hooked_source {
  std::vector<trace_event> events;
  std::function<void(std::size_t)> hook = nullptr;
  std::size_t i = 0;
  bool next(trace_event& e) {
    if (i == events.size()) return false;
    if (hook) hook(i);
    e = events[i++];
    return true;
  }
  std::uint64_t line() const { return i; }
  std::string name() const { return "hooked"; }
  std::uint64_t bytes_consumed() const { return 0; }
  std::uint64_t total_bytes() const { return 0; }
};

// 40 allocations of 1 MiB, each freed at once.
std::vector<trace_event> small_trace() {
  std::vector<trace_event> ev;
  for (std::uint64_t k = 0; k < 40; ++k) {
    ev.push_back({.seq = 2 * k, .action = trace_action::alloc, .id = k + 1, .size = 1 << 20});
    ev.push_back({.seq = 2 * k + 1, .action = trace_action::free, .id = k + 1, .size = 0});
  }
  return ev;
}

// "Another program": its own context on the device, holding buffers it has used.
class other_program {
 public:
  explicit other_program(cl_device_id device) {
    cl_int s = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &s);
    queue_ = clCreateCommandQueueWithProperties(context_, device, nullptr, &s);
  }
  ~other_program() {
    release();
    clReleaseCommandQueue(queue_);
    clReleaseContext(context_);
  }
  void hold(std::uint64_t bytes) {
    cl_int s = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &s);
    ASSERT_EQ(s, CL_SUCCESS);
    ASSERT_EQ(clEnqueueMigrateMemObjects(queue_, 1, &m, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0,
                                         nullptr, nullptr),
              CL_SUCCESS);
    clFinish(queue_);
    held_.push_back(m);
  }
  void release() {
    for (cl_mem m : held_) clReleaseMemObject(m);
    held_.clear();
    clFinish(queue_);
  }

 private:
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::vector<cl_mem> held_;
};

cl_device_id the_device() {
  cl_platform_id p = nullptr;
  cl_device_id d = nullptr;
  clGetPlatformIDs(1, &p, nullptr);
  clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, nullptr);
  return d;
}

class OpenclDevice : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    mockcl::testing::use_mock_only(mockcl::testing::mock_so_path());
    control_ = mockcl::testing::icd_control(mockcl::testing::mock_so_path()).release();
  }
  void SetUp() override {
    control_->reset();
    ASSERT_EQ(control_->configure_devices("gpu-1g:profile=nvidia"), "");
    backend_options o;
    o.profile = device_model::load_profile("nvidia");
    backend_ = open_opencl_backend("opencl", o);
    backend_->check_device();
  }
  void TearDown() override { backend_.reset(); }

  static mockcl::controller* control_;
  std::unique_ptr<device_backend> backend_;
};
mockcl::controller* OpenclDevice::control_ = nullptr;

TEST_F(OpenclDevice, AnUndisturbedReplayIsTrusted) {
  hooked_source src{small_trace()};
  const replay_report r = replay_stream(src, replay_config{}, backend_->open(128 << 20));
  EXPECT_TRUE(r.ok());
  EXPECT_NO_THROW(backend_->after_replay());
  ASSERT_TRUE(r.device.measured.has_value());
  EXPECT_EQ(r.device.measured->failure_point,
            "first use (clEnqueueMigrateMemObjects: -4 CL_MEM_OBJECT_ALLOCATION_FAILURE)");
  EXPECT_EQ(r.device.semantics, alloc_semantics::deferred);
}

TEST_F(OpenclDevice, AnotherProgramAllocatingDuringTheReplayIsDetected) {
  other_program other(the_device());
  hooked_source src{small_trace(), [&](std::size_t i) {
                      if (i == 30) other.hold(32 << 20);
                    }};
  const replay_report r = replay_stream(src, parse_config("nopool"), backend_->open(128 << 20));
  try {
    backend_->after_replay();
    FAIL() << "a replay during which 32 MiB were taken was trusted";
  } catch (const device_untrusted& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("changed during the replay"), std::string::npos) << what;
    EXPECT_NE(what.find("something else allocated"), std::string::npos) << what;
    EXPECT_NE(what.find("Rerun when nothing else uses the device"), std::string::npos) << what;
  }
}

TEST_F(OpenclDevice, AnotherProgramReleasingDuringTheReplayIsDetected) {
  other_program other(the_device());
  other.hold(64 << 20);  // held before the replay's ballast: the ballast still fits at 256 MiB
  hooked_source src{small_trace(), [&](std::size_t i) {
                      if (i == 10) other.release();
                    }};
  replay_stream(src, replay_config{}, backend_->open(256 << 20));
  try {
    backend_->after_replay();
    FAIL() << "a replay during which 64 MiB were released was trusted";
  } catch (const device_untrusted& e) {
    EXPECT_NE(std::string(e.what()).find("something else released"), std::string::npos) << e.what();
  }
}

// Memory taken so that the ballast cannot fit: refused as before, naming the free memory assumed.
TEST_F(OpenclDevice, ABallastThatCannotFitIsRefused) {
  other_program other(the_device());
  other.hold(512 << 20);
  hooked_source src{small_trace()};
  try {
    replay_stream(src, replay_config{}, backend_->open(256 << 20));
    FAIL() << "a ballast that cannot fit was accepted";
  } catch (const opencl_unavailable& e) {
    EXPECT_NE(std::string(e.what()).find("could not hold the ballast"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace clpool::replay_cli
