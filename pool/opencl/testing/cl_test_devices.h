// Runs OpenCL tests over every platform and device the ICD loader finds, like PyOpenCL's test
// generator. Set CLPOOL_TEST_DEVICES to restrict them: a comma-separated list of entries
// "PLATFORM" or "PLATFORM:INDEX", where PLATFORM matches (case-insensitively, as a substring) the
// platform's name, vendor or ICD suffix, and INDEX is the device's index on that platform.
// Examples: "pocl", "mockcl:0", "pocl,mockcl:1".
//
//   class my_test : public clpool::opencl::testing::device_test {};
//   TEST_P(my_test, works) { ...context(), queue(), other_queue()... }
//   CLPOOL_INSTANTIATE_DEVICE_TESTS(my_test);
#ifndef CLPOOL_POOL_OPENCL_TESTING_CL_TEST_DEVICES_H_
#define CLPOOL_POOL_OPENCL_TESTING_CL_TEST_DEVICES_H_

#include <CL/cl.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "pool/opencl/cl_object.h"

namespace clpool::opencl::testing {

struct test_device {
  cl_platform_id platform = nullptr;  // null: the "no device found" placeholder
  cl_device_id device = nullptr;
  std::string id;         // e.g. "pocl:0": lower-case ICD suffix (or platform name) and index
  std::string full_name;  // platform name / device name
};

// Prints the device's id and name in test failure messages.
void PrintTo(const test_device& d, std::ostream* os);

// The devices to test, after CLPOOL_TEST_DEVICES. When none is found the list holds one
// placeholder whose tests skip with the reason. Sets POCL_CACHE_DIR to $TEST_TMPDIR (when unset)
// before the first OpenCL call.
const std::vector<test_device>& test_devices();

// A test name from a device: "pocl_0".
std::string test_device_name(const ::testing::TestParamInfo<test_device>& info);

// A context and queues on one device.
class device_env {
 public:
  // Opens a context and queues on `d`. Returns "" when ready, or the reason to skip (no device).
  // Throws cl_error when the device cannot be opened.
  std::string open(const test_device& d);

  const test_device& device_info() const { return info_; }
  cl_device_id device() const { return info_.device; }
  cl_context context() const { return context_.get(); }
  cl_command_queue queue() const { return queue_.get(); }        // in-order
  cl_command_queue other_queue() const { return other_.get(); }  // in-order, same context
  // An out-of-order queue, or nullptr when the device cannot make one.
  cl_command_queue out_of_order_queue() const { return ooo_.get(); }

  // "" when the device supports coarse-grain SVM, else the reason to skip.
  std::string svm_missing() const;

  // A new queue on the device.
  queue_ref make_queue(cl_command_queue_properties props = 0) const;

  // Reference counts, for leak checks: allocators and blocks hold references to contexts and
  // queues (and on most implementations live memory objects and events hold them too).
  cl_uint context_refs() const;
  static cl_uint queue_refs(cl_command_queue q);

  // context_refs(), after giving the implementation up to a second to reach `expected`:
  // implementations (POCL) drop the references of finished commands and released objects on their
  // own threads, even after clFinish returns. Returns the last count seen.
  cl_uint context_refs_settled(cl_uint expected) const;

  // The reference counts of the context and both queues, for leak checks around a test.
  struct reference_counts {
    cl_uint context = 0;
    cl_uint queue = 0;
    cl_uint other_queue = 0;
    bool operator==(const reference_counts&) const = default;
  };
  reference_counts references() const;

  // Finishes both queues, gives the implementation up to a second to drop what its own threads
  // still hold (POCL's events keep their queue until retired), then EXPECTs each count equal.
  void expect_references_settle_to(const reference_counts& expected) const;

 private:
  test_device info_;
  context_ref context_;
  queue_ref queue_;
  queue_ref other_;
  queue_ref ooo_;
};

// Parameterised over test_devices(); skips when there is no device.
class device_test : public ::testing::TestWithParam<test_device>, public device_env {
 protected:
  void SetUp() override {
    const std::string reason = open(GetParam());
    if (!reason.empty()) GTEST_SKIP() << reason;
  }
};

// Skips the test unless the env's device supports SVM.
#define CLPOOL_SKIP_WITHOUT_SVM(env)                           \
  do {                                                         \
    const std::string clpool_reason = (env).svm_missing();     \
    if (!clpool_reason.empty()) GTEST_SKIP() << clpool_reason; \
  } while (0)

// Whether a device enforces CL_DEVICE_MAX_MEM_ALLOC_SIZE, asked of the device rather than
// assumed: NVIDIA's driver does not (max_alloc + 1 bytes are created and used), POCL and AMD give
// CL_INVALID_BUFFER_SIZE (-61). The probe creates max_alloc + 1 bytes and releases the buffer
// without using it (lazy drivers commit nothing).
struct max_alloc_probe {
  std::uint64_t max_alloc = 0;
  cl_int status = CL_SUCCESS;  // what clCreateBuffer(max_alloc + 1) answered
  bool enforced() const { return status == CL_INVALID_BUFFER_SIZE; }
  std::string description;  // e.g. "pocl:0 (...) enforces CL_DEVICE_MAX_MEM_ALLOC_SIZE ..."
};
max_alloc_probe probe_max_alloc(const device_env& env);

// A user event (a "gate"): commands that wait on it do not start until open_gate(). Lets tests
// hold a queue's work back and observe what another queue does meanwhile.
event_ref make_gate(cl_context context);
void open_gate(cl_event gate);

// CL_EVENT_COMMAND_EXECUTION_STATUS of `event` (an error status when the query fails).
cl_int event_status(cl_event event);

// Polls until `event` is complete or `ms` milliseconds pass; true if it completed.
bool completes_within(cl_event event, int ms);

}  // namespace clpool::opencl::testing

#define CLPOOL_INSTANTIATE_DEVICE_TESTS(suite)                                             \
  INSTANTIATE_TEST_SUITE_P(AllDevices, suite,                                              \
                           ::testing::ValuesIn(::clpool::opencl::testing::test_devices()), \
                           ::clpool::opencl::testing::test_device_name)

#endif  // CLPOOL_POOL_OPENCL_TESTING_CL_TEST_DEVICES_H_
