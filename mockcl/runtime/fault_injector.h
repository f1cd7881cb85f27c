// fault_injector: the installed MOCKCL_FAULTS rules and their counters, apart from the runtime
// that consults them. It decides; the runtime reports and applies. The four rule forms:
//   nth:ENTRY:N        the Nth call of ENTRY fails          (on_call)
//   prob:ENTRY:P:SEED  each call of ENTRY fails with P      (on_call)
//   bytes:T            a charge taking committed above T fails (on_charge)
//   exec:ENTRY:N       the Nth command ENTRY enqueues executes with an error (on_command)
// Not thread-safe: the runtime's lock is held around every call.
#ifndef MOCKCL_RUNTIME_FAULT_INJECTOR_H_
#define MOCKCL_RUNTIME_FAULT_INJECTOR_H_

#include <CL/cl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mockcl/api/entry_points.h"
#include "mockcl/config/config.h"

namespace mockcl {

class fault_injector {
 public:
  // Installs `rules` (after the current ones when `append`); counters restart. "" on success,
  // else the problem (an unknown entry point), with the rules before it installed.
  std::string configure(const std::vector<fault_rule>& rules, bool append);

  bool empty() const noexcept { return rules_.empty(); }

  // The status this call of `e` fails with (nth and probability rules), or 0. `what` receives
  // the report line when one fires.
  cl_int on_call(entry_point e, std::string& what);
  // The status a charge of `bytes` fails with when `committed` bytes are committed (bytes_above
  // rules; `oom_status` is a rule's default status), or 0.
  cl_int on_charge(uint64_t committed, uint64_t bytes, cl_int oom_status, std::string& what);
  // The status the command being enqueued through `e` will execute with (exec rules), or 0.
  // Counted when the command executes with it (fired()).
  cl_int on_command(entry_point e);

  // An injected failure took effect (on_call's and on_charge's count themselves).
  void fired() noexcept { ++fired_; }
  uint64_t fired_count() const noexcept { return fired_; }
  void reset_count() noexcept { fired_ = 0; }

 private:
  struct installed_rule {
    fault_rule rule;
    std::optional<entry_point> entry;  // nullopt: any entry point ("*")
    uint64_t count = 0;
    uint64_t rng = 0;
    bool fired = false;
  };
  std::vector<installed_rule> rules_;
  uint64_t fired_ = 0;
};

}  // namespace mockcl

#endif  // MOCKCL_RUNTIME_FAULT_INJECTOR_H_
