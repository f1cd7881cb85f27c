// Configuration of the mock runtime and its one parser, shared by the environment variables
// (MOCKCL_DEVICES, MOCKCL_FAULTS, MOCKCL_SCHEDULE, MOCKCL_CALL_LOG) and the control API.
// Pure functions: string in, config or a descriptive error out; nothing throws, so a fuzzer
// can drive them directly. The grammar is documented in mockcl/README.md.
#ifndef MOCKCL_CONFIG_CONFIG_H_
#define MOCKCL_CONFIG_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/byte_size.h"
#include "device_model/profile.h"

namespace mockcl {

// A value or a human-readable error message (never both).
template <typename T>
class value_or_error {
 public:
  value_or_error(T value) : v_(std::move(value)) {}  // NOLINT: implicit on purpose.
  static value_or_error fail(std::string message) {
    return value_or_error(error_tag{std::move(message)});
  }
  bool ok() const { return v_.index() == 0; }
  const T& value() const { return std::get<0>(v_); }
  T& value() { return std::get<0>(v_); }
  const std::string& error() const { return std::get<1>(v_).message; }

 private:
  struct error_tag {
    std::string message;
  };
  explicit value_or_error(error_tag e) : v_(std::move(e)) {}
  std::variant<T, error_tag> v_;
};

// How a device reports running out of global memory (real drivers differ): the device model's
// enum, so the mock, the replay and the profiles share one list. immediate: charged at creation,
// clCreateBuffer fails with the profile's status. deferred: charged at first use
// (migrate/write/fill/map/copy/kernel), the enqueue or the command fails. host_oom: charged at
// creation, reported as CL_OUT_OF_HOST_MEMORY (Intel-like).
using clpool::device_model::alloc_semantics;

// How clEnqueueMapBuffer gives the host a buffer's bytes.
enum class map_mode {
  shared,  // the mapped pointer is the buffer's own storage (a shared-memory device, e.g. POCL's
           // CPU device): host writes reach the device at once, whatever the rules say.
  copy,    // a discrete device: a mapping is a separate host copy, filled from the buffer when
           // the map executes (unless CL_MAP_WRITE_INVALIDATE_REGION) and written back when the
           // unmap executes (write maps only). A command that starts while its buffer (or a
           // buffer of the same family) is mapped against it is reported
           // (misuse_reports::used_while_mapped).
};

// One simulated device.
struct device_config {
  std::string name = "mockcl gpu-256m";  // CL_DEVICE_NAME.
  bool gpu = true;                       // CL_DEVICE_TYPE_GPU, else CL_DEVICE_TYPE_CPU.
  uint64_t capacity = 256ull << 20;      // Enforced global memory capacity in bytes.
  uint64_t reported = 256ull << 20;      // CL_DEVICE_GLOBAL_MEM_SIZE (may differ from capacity).
  uint64_t max_alloc =
      128ull << 20;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE; above: CL_INVALID_BUFFER_SIZE.
  alloc_semantics semantics = alloc_semantics::immediate;
  bool oom_at_execution = false;     // Deferred only: charge when the command executes, so
                                     // out-of-memory shows in its event status, not the enqueue.
  bool svm = true;                   // Coarse-grain buffer SVM supported.
  bool svm_first_use = false;        // An SVM block is charged at its first command (svm_oom_at=
                                     // first_use), not at clSVMAlloc: the profile's svm_oom_at.
  uint64_t pinned = 64ull << 20;     // Budget for CL_MEM_ALLOC_HOST_PTR / USE_HOST_PTR buffers.
  map_mode maps = map_mode::shared;  // maps=shared|copy: what a mapped pointer is (see map_mode).
  // How device memory is committed (pages, packing, headroom) and whether max_alloc is enforced:
  // the device model's profile (device_model/profile.h), by the name or path it was given as.
  std::string profile = "exact";
  clpool::device_model::device_profile model;
  // Device memory each live context on the device takes (as a real driver's context does:
  // NVIDIA's commits some when it is created), committed at clCreateContext and given back when
  // the context is destroyed; 0: contexts are free.
  uint64_t context_cost = 0;
  // free_query=amd: answers CL_DEVICE_GLOBAL_FREE_MEMORY_AMD (free KiB: capacity - committed) and
  // lists cl_amd_device_attribute_query, so that the tools' free-memory queries can be tested.
  bool free_query = false;
  bool operator==(const device_config&) const = default;
};

enum class schedule_mode {
  eager,  // the scheduler runs after every enqueue: ready commands complete at once.
  lazy,   // commands run only on clFlush, clFinish, clWaitForEvents and blocking calls.
};

// The longest kernel_ns accepted: one week of virtual time. A longer one (2^64 - 1) wrapped the
// virtual clock at its first launch; this leaves room for millions of weeks before the clock
// saturates (mock_runtime::execute).
inline constexpr uint64_t kMaxKernelNs = 7ull * 24 * 3600 * 1000000000ull;

struct schedule_config {
  schedule_mode mode = schedule_mode::eager;
  uint64_t seed = 0;           // 0: out-of-order queues run ready commands FIFO; else seeded pick.
  uint64_t kernel_ns = 10000;  // Virtual duration of one kernel launch, at most kMaxKernelNs.
  bool operator==(const schedule_config&) const = default;
};

enum class fault_kind {
  nth_call,     // the Nth call (1-based, counted from the rule's installation) of `entry` fails.
  bytes_above,  // an allocation that would take a device's outstanding bytes above `threshold`.
  probability,  // each call of `entry` fails with probability p, from `seed`.
  exec,         // the Nth command enqueued through `entry` is accepted but executes with `status`.
};

struct fault_rule {
  fault_kind kind = fault_kind::nth_call;
  std::string entry;       // Entry point name (nth_call, probability, exec).
  uint64_t n = 0;          // nth_call, exec.
  uint64_t threshold = 0;  // bytes_above.
  double p = 0;            // probability.
  uint64_t seed = 0;       // probability.
  int32_t status = 0;      // Error to report; 0 means the rule's default (see README).
  bool operator==(const fault_rule&) const = default;
};

// Everything the environment can set.
// MOCKCL_BACKING: where kernels run and buffer bytes live.
enum class backing_mode {
  automatic,  // not given: pocl when POCL's ICD can be loaded (decided at the first context), else
              // kNone.
  none,       // no compute: kernels are timed no-ops, bytes live in host memory (fast; fuzzers,
              // benchmarks).
  pocl,  // a backing POCL device runs the kernels and holds the bytes (mockcl/backing/backing.h).
};

// "pocl" | "none"; anything else is an error.
value_or_error<backing_mode> parse_backing(std::string_view text);

struct runtime_config {
  std::vector<device_config> devices;  // Never empty once parsed.
  backing_mode backing = backing_mode::automatic;
  std::string pocl_icd;  // MOCKCL_POCL_ICD: a .icd file or POCL's library; empty: default.
  schedule_config schedule;
  std::vector<fault_rule> faults;
  std::string call_log;  // Path of the JSON-lines call log; empty: off.
};

// The default device list: one "gpu-256m" device.
std::vector<device_config> default_devices();

// Parses a byte size in the one size grammar of common/byte_size.h: 4096, 256m, 512MiB, 8GiB
// (any case; "8GB" is refused as ambiguous), with `rules` (a device's capacity: at most 2^62
// bytes). Errors read "size 'TEXT' why".
value_or_error<uint64_t> parse_size(std::string_view text, clpool::common::size_rules rules = {});

// Parses an OpenCL status: a negative integer or a name such as CL_OUT_OF_RESOURCES.
value_or_error<int32_t> parse_status(std::string_view text);

// The name of an OpenCL status code ("CL_SUCCESS", ...), or "CL_UNKNOWN_ERROR"
// (common/cl_status.h).
std::string_view status_name(int32_t status);

// Parses one preset ("gpu", "gpu-8g", "cpu", "cpu-2g", ...) into a device.
value_or_error<device_config> parse_preset(std::string_view text);

// MOCKCL_DEVICES: device (';' device)*, device = preset [':' key=value (',' key=value)*].
value_or_error<std::vector<device_config>> parse_devices(std::string_view text);

// Renders devices back into the MOCKCL_DEVICES grammar; parse_devices(format_devices(d)) == d.
std::string format_devices(const std::vector<device_config>& devices);

// MOCKCL_FAULTS: rule (';' rule)*; see README for the four rule forms.
value_or_error<std::vector<fault_rule>> parse_faults(std::string_view text);

// One fault rule, e.g. "nth:clCreateBuffer:3:CL_OUT_OF_RESOURCES".
value_or_error<fault_rule> parse_fault(std::string_view text);

// MOCKCL_SCHEDULE: item (',' item)*, item = eager | lazy | seed=N | kernel_ns=N.
value_or_error<schedule_config> parse_schedule(std::string_view text);

// The whole configuration from environment variables given as (name, value) pairs. Every
// variable whose name starts with MOCKCL_ must be a known one with a valid, non-empty value.
value_or_error<runtime_config> config_from_env(
    const std::vector<std::pair<std::string, std::string>>& vars);

}  // namespace mockcl

#endif  // MOCKCL_CONFIG_CONFIG_H_
