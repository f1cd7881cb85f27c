#include "pool/opencl/testing/cl_test_devices.h"

#include <CL/cl_ext.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "pool/opencl/cl_error.h"

namespace clpool::opencl::testing {

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  size_t size = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string s(size, '\0');
  if (clGetPlatformInfo(p, what, size, s.data(), nullptr) != CL_SUCCESS) return {};
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

struct filter_entry {
  std::string platform;
  int index = -1;
};

std::vector<filter_entry> parse_filter(const char* text) {
  std::vector<filter_entry> entries;
  if (text == nullptr) return entries;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    filter_entry e;
    const auto colon = item.find(':');
    e.platform = lower(item.substr(0, colon));
    if (colon != std::string::npos) e.index = std::atoi(item.c_str() + colon + 1);
    entries.push_back(e);
  }
  return entries;
}

std::vector<test_device> find_devices() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  if (tmp != nullptr) setenv("POCL_CACHE_DIR", tmp, /*overwrite=*/0);
  const std::vector<filter_entry> filter = parse_filter(std::getenv("CLPOOL_TEST_DEVICES"));
  std::vector<test_device> found;
  cl_uint n = 0;
  if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) return found;
  std::vector<cl_platform_id> platforms(n);
  if (clGetPlatformIDs(n, platforms.data(), nullptr) != CL_SUCCESS) return found;
  for (cl_platform_id p : platforms) {
    const std::string name = platform_string(p, CL_PLATFORM_NAME);
    const std::string vendor = platform_string(p, CL_PLATFORM_VENDOR);
    std::string suffix = lower(platform_string(p, CL_PLATFORM_ICD_SUFFIX_KHR));
    if (suffix.empty()) suffix = lower(name.substr(0, name.find(' ')));
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
    std::vector<cl_device_id> devices(nd);
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devices.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_uint i = 0; i < nd; ++i) {
      bool wanted = filter.empty();
      for (const filter_entry& f : filter) {
        const bool platform_match = lower(name).find(f.platform) != std::string::npos ||
                                    lower(vendor).find(f.platform) != std::string::npos ||
                                    suffix.find(f.platform) != std::string::npos;
        if (platform_match && (f.index < 0 || f.index == static_cast<int>(i))) wanted = true;
      }
      if (!wanted) continue;
      test_device d;
      d.platform = p;
      d.device = devices[i];
      d.id = suffix + ":" + std::to_string(i);
      d.full_name = name + " / " + device_name(devices[i]);
      found.push_back(d);
    }
  }
  return found;
}
}  // namespace

void PrintTo(const test_device& d, std::ostream* os) { *os << d.id << " (" << d.full_name << ")"; }

const std::vector<test_device>& test_devices() {
  static const std::vector<test_device> devices = [] {
    std::vector<test_device> d = find_devices();
    if (d.empty()) d.push_back(test_device{nullptr, nullptr, "none:0", "no OpenCL device found"});
    return d;
  }();
  return devices;
}

std::string test_device_name(const ::testing::TestParamInfo<test_device>& info) {
  std::string name;
  for (char c : info.param.id) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name + "_" + std::to_string(info.index);
}

std::string device_env::open(const test_device& d) {
  info_ = d;
  if (d.device == nullptr) {
    const char* filter = std::getenv("CLPOOL_TEST_DEVICES");
    return std::string("no OpenCL device found (CLPOOL_TEST_DEVICES=") + (filter ? filter : "") +
           ")";
  }
  ::testing::Test::RecordProperty("device", d.full_name);
  cl_int status = CL_SUCCESS;
  cl_device_id dev = d.device;
  context_ = context_ref::adopt(clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &status));
  throw_if_failed(status, "clCreateContext", d.full_name);
  queue_ = make_queue();
  other_ = make_queue();
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
  cl_command_queue ooo = clCreateCommandQueueWithProperties(context(), dev, props, &status);
  if (status == CL_SUCCESS) ooo_ = queue_ref::adopt(ooo);
  return {};
}

queue_ref device_env::make_queue(cl_command_queue_properties p) const {
  cl_int status = CL_SUCCESS;
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, p, 0};
  cl_command_queue q = clCreateCommandQueueWithProperties(context(), device(), props, &status);
  throw_if_failed(status, "clCreateCommandQueueWithProperties");
  return queue_ref::adopt(q);
}

std::string device_env::svm_missing() const {
  if ((device_svm_capabilities(device()) & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) == 0) {
    return info_.full_name + " has no SVM support (CL_DEVICE_SVM_CAPABILITIES)";
  }
  return {};
}

cl_uint device_env::context_refs() const {
  cl_uint refs = 0;
  clGetContextInfo(context(), CL_CONTEXT_REFERENCE_COUNT, sizeof(refs), &refs, nullptr);
  return refs;
}

cl_uint device_env::context_refs_settled(cl_uint expected) const {
  cl_uint refs = context_refs();
  for (int i = 0; i < 200 && refs != expected; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    refs = context_refs();
  }
  return refs;
}

device_env::reference_counts device_env::references() const {
  return reference_counts{context_refs(), queue_refs(queue()), queue_refs(other_queue())};
}

void device_env::expect_references_settle_to(const reference_counts& expected) const {
  clFinish(queue());
  clFinish(other_queue());
  reference_counts now = references();
  for (int i = 0; i < 200 && !(now == expected); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    now = references();
  }
  EXPECT_EQ(now.queue, expected.queue) << "queue references leaked";
  EXPECT_EQ(now.other_queue, expected.other_queue) << "other queue references leaked";
  EXPECT_EQ(now.context, expected.context) << "context references leaked";
}

cl_uint device_env::queue_refs(cl_command_queue q) {
  cl_uint refs = 0;
  clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof(refs), &refs, nullptr);
  return refs;
}

max_alloc_probe probe_max_alloc(const device_env& env) {
  max_alloc_probe p;
  p.max_alloc = device_max_alloc(env.device());
  const std::uint64_t bytes = p.max_alloc + 1;
  cl_mem m = clCreateBuffer(env.context(), CL_MEM_READ_WRITE, static_cast<size_t>(bytes), nullptr,
                            &p.status);
  if (m != nullptr) clReleaseMemObject(m);
  const std::string who = env.device_info().id + " (" + env.device_info().full_name + ")";
  const std::string created =
      "creating CL_DEVICE_MAX_MEM_ALLOC_SIZE + 1 = " + std::to_string(bytes) + " bytes gave " +
      status_name(p.status);
  p.description = who + (p.enforced() ? " enforces" : " does not enforce") +
                  " CL_DEVICE_MAX_MEM_ALLOC_SIZE: " + created;
  return p;
}

event_ref make_gate(cl_context context) {
  cl_int status = CL_SUCCESS;
  cl_event e = clCreateUserEvent(context, &status);
  throw_if_failed(status, "clCreateUserEvent");
  return event_ref::adopt(e);
}

void open_gate(cl_event gate) {
  throw_if_failed(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
}

cl_int event_status(cl_event event) {
  cl_int s = 0;
  const cl_int q = clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(s), &s, nullptr);
  return q == CL_SUCCESS ? s : q;
}

bool completes_within(cl_event event, int ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (true) {
    const cl_int s = event_status(event);
    if (s == CL_COMPLETE) return true;
    if (s < 0) return false;
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace clpool::opencl::testing
