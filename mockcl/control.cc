#include "mockcl/control.h"

#include <cstdlib>
#include <mutex>

#include "mockcl/runtime.h"

namespace mockcl {
namespace {

class InProcess final : public Control {
 public:
  std::string configure_devices(std::string_view spec) override {
    auto d = parse_devices(spec);
    if (!d.ok()) return d.error();
    Runtime& rt = Runtime::get();
    std::unique_lock<Lock> lk(rt.mu);
    return rt.configure_devices(d.value());
  }
  std::string configure_faults(std::string_view spec) override {
    std::vector<FaultRule> rules;
    if (!spec.empty()) {
      auto f = parse_faults(spec);
      if (!f.ok()) return f.error();
      rules = f.value();
    }
    Runtime& rt = Runtime::get();
    std::unique_lock<Lock> lk(rt.mu);
    return rt.configure_faults(rules, false);
  }
  std::string add_fault(std::string_view rule) override {
    auto f = parse_fault(rule);
    if (!f.ok()) return f.error();
    Runtime& rt = Runtime::get();
    std::unique_lock<Lock> lk(rt.mu);
    return rt.configure_faults({f.value()}, true);
  }
  std::string configure_schedule(std::string_view spec) override {
    auto s = parse_schedule(spec);
    if (!s.ok()) return s.error();
    Runtime& rt = Runtime::get();
    std::unique_lock<Lock> lk(rt.mu);
    return rt.configure_schedule(s.value());
  }
  std::string configure_call_log(std::string_view path) override {
    Runtime& rt = Runtime::get();
    std::unique_lock<Lock> lk(rt.mu);
    return rt.configure_call_log(std::string(path));
  }
  std::string configure_backing(std::string_view mode) override {
    auto b = parse_backing(mode);
    if (!b.ok()) return "backing: " + b.error();
    Runtime& rt = Runtime::get();
    std::unique_lock<Lock> lk(rt.mu);
    const char* icd = std::getenv("MOCKCL_POCL_ICD");
    return rt.configure_backing(b.value(), icd ? icd : "");
  }
  void reset() override { Runtime::get().reset(); }
  Snapshot snapshot() override { return Runtime::get().snapshot(); }
  uint64_t object_id(const void* handle) override { return Runtime::get().object_id(handle); }
  MemoryUse memory_use(int device) override {
    Runtime& rt = Runtime::get();
    std::unique_lock<Lock> lk(rt.mu);
    if (device < 0 || static_cast<size_t>(device) >= rt.devices.size()) return {};
    const auto& m = rt.devices[device].memory;
    return {m.committed(), m.peak_committed(), m.requested()};
  }
};

}  // namespace

const cl_icd_dispatch* dispatch() { return Runtime::get().table; }

cl_platform_id platform() { return &Runtime::get().platform; }

Control& control() {
  static InProcess* c = new InProcess();
  return *c;
}

}  // namespace mockcl
