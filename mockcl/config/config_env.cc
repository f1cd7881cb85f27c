// The environment: MOCKCL_BACKING's pocl|none, and every MOCKCL_* variable together
// (config_from_env), each checked by its own grammar.
#include "mockcl/config/config.h"

#include "mockcl/config/config_text.h"

namespace mockcl {

using config_text::parse_bool;
using config_text::parse_uint;
using config_text::quote;
using config_text::split;

value_or_error<backing_mode> parse_backing(std::string_view text) {
  if (text == "pocl") return backing_mode::pocl;
  if (text == "none") return backing_mode::none;
  return value_or_error<backing_mode>::fail("'" + std::string(text) + "' is not pocl or none");
}

value_or_error<runtime_config> config_from_env(
    const std::vector<std::pair<std::string, std::string>>& vars) {
  using R = value_or_error<runtime_config>;
  runtime_config c;
  c.devices = default_devices();
  std::vector<std::string> seen;
  for (const auto& var : vars) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in the lambda below.
    const std::string& name = var.first;
    const std::string& value = var.second;
    if (name.rfind("MOCKCL_", 0) != 0) continue;
    auto fail = [&](const std::string& why) {
      return R::fail(name + "=" + quote(value) + ": " + why);
    };
    for (const std::string& n : seen)
      if (n == name) return R::fail(name + " given twice");
    seen.push_back(name);
    if (name == "MOCKCL_DEVICES") {
      auto d = parse_devices(value);
      if (!d.ok()) return fail(d.error());
      c.devices = d.value();
    } else if (name == "MOCKCL_FAULTS") {
      auto f = parse_faults(value);
      if (!f.ok()) return fail(f.error());
      c.faults = f.value();
    } else if (name == "MOCKCL_SCHEDULE") {
      auto s = parse_schedule(value);
      if (!s.ok()) return fail(s.error());
      c.schedule = s.value();
    } else if (name == "MOCKCL_CALL_LOG") {
      if (value.empty()) return fail("path is empty");
      c.call_log = value;
    } else if (name == "MOCKCL_BACKING") {
      auto b = parse_backing(value);
      if (!b.ok()) return fail(b.error());
      c.backing = b.value();
    } else if (name == "MOCKCL_POCL_ICD") {
      if (value.empty()) return fail("path is empty");
      c.pocl_icd = value;
    } else {
      return R::fail("unknown variable " + name +
                     " (known: MOCKCL_DEVICES, MOCKCL_FAULTS, MOCKCL_SCHEDULE, MOCKCL_CALL_LOG, "
                     "MOCKCL_BACKING,"
                     " MOCKCL_POCL_ICD)");
    }
  }
  return c;
}

}  // namespace mockcl
