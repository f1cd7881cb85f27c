// FaultInjector (fault_injector.h).
#include <string>

#include "mockcl/fault_injector.h"
#include "mockcl/splitmix.h"

namespace mockcl {

std::string FaultInjector::configure(const std::vector<FaultRule>& rules, bool append) {
  if (!append) rules_.clear();
  for (const FaultRule& r : rules) {
    Rule s;
    s.rule = r;
    if (r.kind != FaultKind::kBytesAbove && r.entry != "*") {
      s.entry = entry_from_name(r.entry);
      if (!s.entry) return "unknown entry point '" + r.entry + "'";
    }
    s.rng = r.seed;
    rules_.push_back(s);
  }
  return "";
}

cl_int FaultInjector::on_call(Entry e, std::string& what) {
  for (Rule& f : rules_) {
    if (f.entry && *f.entry != e) continue;
    const cl_int status = f.rule.status ? f.rule.status : CL_OUT_OF_RESOURCES;
    if (f.rule.kind == FaultKind::kNthCall) {
      if (f.fired || ++f.count != f.rule.n) continue;
      f.fired = true;
    } else if (f.rule.kind == FaultKind::kProbability) {
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

cl_int FaultInjector::on_charge(uint64_t committed, uint64_t bytes, cl_int oom_status,
                                std::string& what) {
  for (const Rule& f : rules_) {
    if (f.rule.kind != FaultKind::kBytesAbove) continue;
    if (committed + bytes <= f.rule.threshold) continue;
    ++fired_;
    const cl_int s = f.rule.status ? f.rule.status : oom_status;
    what = "injected " + std::string(status_name(s)) + ": outstanding bytes would exceed " +
           std::to_string(f.rule.threshold);
    return s;
  }
  return 0;
}

cl_int FaultInjector::on_command(Entry e) {
  for (Rule& f : rules_) {
    if (f.rule.kind != FaultKind::kExec || (f.entry && *f.entry != e) || f.fired) continue;
    if (++f.count == f.rule.n) {
      f.fired = true;
      return f.rule.status ? f.rule.status : CL_OUT_OF_RESOURCES;
    }
  }
  return 0;
}

}  // namespace mockcl
