// The schedule grammar: MOCKCL_SCHEDULE (eager|lazy, seed=N, kernel_ns=N).
#include "mockcl/config/config.h"

#include <string>

#include "mockcl/config/config_text.h"

namespace mockcl {

using config_text::parse_bool;
using config_text::parse_uint;
using config_text::quote;
using config_text::split;

value_or_error<schedule_config> parse_schedule(std::string_view text) {
  using R = value_or_error<schedule_config>;
  if (text.empty()) return R::fail("schedule is empty");
  schedule_config s;
  bool mode_set = false, seed_set = false, kernel_ns_set = false;
  for (std::string_view item : split(text, ',')) {
    if (item == "eager" || item == "lazy") {
      if (mode_set) return R::fail("schedule mode given twice");
      mode_set = true;
      s.mode = item == "eager" ? schedule_mode::eager : schedule_mode::lazy;
    } else if (item.substr(0, 5) == "seed=") {
      if (seed_set) return R::fail("schedule seed given twice");
      seed_set = true;
      auto v = parse_uint(item.substr(5), "seed");
      if (!v.ok()) return R::fail(v.error());
      s.seed = v.value();
    } else if (item.substr(0, 10) == "kernel_ns=") {
      if (kernel_ns_set) return R::fail("schedule kernel_ns given twice");
      kernel_ns_set = true;
      auto v = parse_uint(item.substr(10), "kernel_ns");
      if (!v.ok()) return R::fail(v.error());
      if (v.value() > kMaxKernelNs)
        return R::fail(
            "kernel_ns " + std::to_string(v.value()) + " is more than one week of virtual time (" +
            std::to_string(kMaxKernelNs) +
            " ns), the most a kernel may take: longer ones could wrap the virtual clock");
      s.kernel_ns = v.value();
    } else {
      return R::fail("schedule item " + quote(item) + " is not eager, lazy, seed=N or kernel_ns=N");
    }
  }
  return s;
}

}  // namespace mockcl
