// fault_injector (fault_injector.h).
#include <string>

#include "mockcl/runtime/fault_injector.h"
#include "mockcl/runtime/splitmix.h"

namespace mockcl {

std::string fault_injector::configure(const std::vector<fault_rule>& rules, bool append) {
  if (!append) rules_.clear();
  for (const fault_rule& r : rules) {
    installed_rule s;
    s.rule = r;
    if (r.kind != fault_kind::bytes_above && r.entry != "*") {
      s.entry = entry_from_name(r.entry);
      if (!s.entry) return "unknown entry point '" + r.entry + "'";
    }
    s.rng = r.seed;
    rules_.push_back(s);
  }
  return "";
}

cl_int fault_injector::on_call(entry_point e, std::string& what) {
  for (installed_rule& f : rules_) {
    if (f.entry && *f.entry != e) continue;
    const cl_int status = f.rule.status ? f.rule.status : CL_OUT_OF_RESOURCES;
    if (f.rule.kind == fault_kind::nth_call) {
      if (f.fired || ++f.count != f.rule.n) continue;
      f.fired = true;
    } else if (f.rule.kind == fault_kind::probability) {
      const double u = static_cast<double>(splitmix(f.rng) >> 11) * 0x1.0p-53;
      if (!(u < f.rule.p)) continue;
    } else {
      continue;
    }
    ++fired_;
    what = "injected " + std::string(status_name(status)) + " into " + std::string(entry_name(e));
    return status;
  }
  return 0;
}

cl_int fault_injector::on_charge(uint64_t committed, uint64_t bytes, cl_int oom_status,
                                 std::string& what) {
  for (const installed_rule& f : rules_) {
    if (f.rule.kind != fault_kind::bytes_above) continue;
    if (committed + bytes <= f.rule.threshold) continue;
    ++fired_;
    const cl_int s = f.rule.status ? f.rule.status : oom_status;
    what = "injected " + std::string(status_name(s)) + ": outstanding bytes would exceed " +
           std::to_string(f.rule.threshold);
    return s;
  }
  return 0;
}

cl_int fault_injector::on_command(entry_point e) {
  for (installed_rule& f : rules_) {
    if (f.rule.kind != fault_kind::exec || (f.entry && *f.entry != e) || f.fired) continue;
    if (++f.count == f.rule.n) {
      f.fired = true;
      return f.rule.status ? f.rule.status : CL_OUT_OF_RESOURCES;
    }
  }
  return 0;
}

}  // namespace mockcl
