#include "mockcl/runtime/control.h"

#include <cstdlib>
#include <mutex>

#include "mockcl/runtime/runtime.h"

namespace mockcl {
namespace {

class in_process_controller final : public controller {
 public:
  std::string configure_devices(std::string_view spec) override {
    auto d = parse_devices(spec);
    if (!d.ok()) return d.error();
    mock_runtime& rt = mock_runtime::get();
    std::unique_lock<runtime_lock> lk(rt.mu);
    return rt.configure_devices(d.value());
  }
  std::string configure_faults(std::string_view spec) override {
    std::vector<fault_rule> rules;
    if (!spec.empty()) {
      auto f = parse_faults(spec);
      if (!f.ok()) return f.error();
      rules = f.value();
    }
    mock_runtime& rt = mock_runtime::get();
    std::unique_lock<runtime_lock> lk(rt.mu);
    return rt.configure_faults(rules, false);
  }
  std::string add_fault(std::string_view rule) override {
    auto f = parse_fault(rule);
    if (!f.ok()) return f.error();
    mock_runtime& rt = mock_runtime::get();
    std::unique_lock<runtime_lock> lk(rt.mu);
    return rt.configure_faults({f.value()}, true);
  }
  std::string configure_schedule(std::string_view spec) override {
    auto s = parse_schedule(spec);
    if (!s.ok()) return s.error();
    mock_runtime& rt = mock_runtime::get();
    std::unique_lock<runtime_lock> lk(rt.mu);
    return rt.configure_schedule(s.value());
  }
  std::string configure_call_log(std::string_view path) override {
    mock_runtime& rt = mock_runtime::get();
    std::unique_lock<runtime_lock> lk(rt.mu);
    return rt.configure_call_log(std::string(path));
  }
  std::string configure_backing(std::string_view mode) override {
    auto b = parse_backing(mode);
    if (!b.ok()) return "backing: " + b.error();
    mock_runtime& rt = mock_runtime::get();
    std::unique_lock<runtime_lock> lk(rt.mu);
    const char* icd = std::getenv("MOCKCL_POCL_ICD");
    return rt.configure_backing(b.value(), icd ? icd : "");
  }
  void reset() override { mock_runtime::get().reset(); }
  accounting_snapshot snapshot() override { return mock_runtime::get().snapshot(); }
  uint64_t object_id(const void* handle) override { return mock_runtime::get().object_id(handle); }
  device_memory_use memory_use(int device) override {
    mock_runtime& rt = mock_runtime::get();
    std::unique_lock<runtime_lock> lk(rt.mu);
    if (device < 0 || static_cast<size_t>(device) >= rt.devices.size()) return {};
    const auto& m = rt.devices[device].memory;
    return {m.committed(), m.peak_committed(), m.requested()};
  }
};

}  // namespace

const cl_icd_dispatch* dispatch() { return mock_runtime::get().table; }

cl_platform_id platform() { return &mock_runtime::get().platform; }

controller& control() {
  static in_process_controller* c = new in_process_controller();
  return *c;
}

}  // namespace mockcl
