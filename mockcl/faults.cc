// Fault injection: the Nth-call, probability and bytes-above rules (exec rules are decided
// when a command is created, in scheduler.cc). Members of Runtime; the lock is held.
#include <string>

#include "mockcl/runtime.h"

namespace mockcl {
namespace {

// SplitMix64: a small, seedable generator, so a probability rule replays identically.
uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

cl_int Runtime::call_fault(Entry e) {
  for (auto& f : faults_) {
    if (f.entry && *f.entry != e) continue;
    cl_int status = f.rule.status ? f.rule.status : CL_OUT_OF_RESOURCES;
    if (f.rule.kind == FaultKind::kNthCall) {
      if (f.fired || ++f.count != f.rule.n) continue;
      f.fired = true;
    } else if (f.rule.kind == FaultKind::kProbability) {
      double u = static_cast<double>(splitmix(f.rng) >> 11) * 0x1.0p-53;
      if (!(u < f.rule.p)) continue;
    } else {
      continue;
    }
    ++faults_fired_;
    report(std::string("injected ") + std::string(status_name(status)) + " into " + std::string(entry_name(e)));
    return status;
  }
  return 0;
}

cl_int Runtime::bytes_fault(int dev, uint64_t bytes) {
  DeviceState& d = devices[dev];
  for (auto& f : faults_) {
    if (f.rule.kind != FaultKind::kBytesAbove) continue;
    if (d.memory.committed() + bytes <= f.rule.threshold) continue;
    ++faults_fired_;
    cl_int s = f.rule.status ? f.rule.status
               : oom_status(d);
    report("injected " + std::string(status_name(s)) + ": outstanding bytes would exceed " +
           std::to_string(f.rule.threshold));
    return s;
  }
  return 0;
}

}  // namespace mockcl
