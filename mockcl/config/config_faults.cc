// The fault grammar: MOCKCL_FAULTS rules (nth, prob, exec, charge ...).
#include "mockcl/config/config.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "mockcl/api/entry_points.h"
#include "mockcl/config/config_text.h"

namespace mockcl {

using config_text::parse_bool;
using config_text::parse_uint;
using config_text::quote;
using config_text::split;

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Entry points that never fail and are not counted (README: "clGet*Info, clRetain* and
// clRelease* never fail"), so an nth or prob rule on one could never fire.
bool never_counted(std::string_view entry) {
  return starts_with(entry, "clRetain") || starts_with(entry, "clRelease") ||
         (starts_with(entry, "clGet") && entry.size() > 4 &&
          entry.substr(entry.size() - 4) == "Info");
}

// Only clEnqueue* entry points create commands, so only they can carry an exec rule.
bool enqueues(std::string_view entry) { return entry == "*" || starts_with(entry, "clEnqueue"); }

}  // namespace

value_or_error<fault_rule> parse_fault(std::string_view text) {
  using R = value_or_error<fault_rule>;
  auto parts = split(text, ':');
  std::string where = "fault rule " + quote(text);
  fault_rule r;
  auto entry_ok = [&](std::string_view e) -> std::string {
    if (e != "*" && !entry_from_name(e)) return where + ": unknown entry point " + quote(e);
    return "";
  };
  auto status_at = [&](std::size_t i) -> std::string {
    if (parts.size() <= i) return "";
    auto s = parse_status(parts[i]);
    if (!s.ok()) return where + ": " + s.error();
    r.status = s.value();
    return "";
  };
  std::string_view kind = parts[0];
  if (kind == "nth" || kind == "exec") {
    if (parts.size() < 3 || parts.size() > 4)
      return R::fail(where + ": expected " + std::string(kind) + ":ENTRY:N[:STATUS]");
    r.kind = kind == "nth" ? fault_kind::nth_call : fault_kind::exec;
    if (auto e = entry_ok(parts[1]); !e.empty()) return R::fail(e);
    r.entry = std::string(parts[1]);
    if (r.kind == fault_kind::nth_call && never_counted(r.entry))
      return R::fail(where + ": " + r.entry +
                     " never fails (clGet*Info, clRetain* and clRelease* "
                     "are not counted), so the rule could never fire");
    if (r.kind == fault_kind::exec && !enqueues(r.entry))
      return R::fail(where + ": " + r.entry +
                     " enqueues no command, so the rule could never fire "
                     "(exec rules name a clEnqueue* entry point or *)");
    auto n = parse_uint(parts[2], "N");
    if (!n.ok()) return R::fail(where + ": " + n.error());
    if (n.value() == 0) return R::fail(where + ": N counts from 1");
    r.n = n.value();
    if (auto e = status_at(3); !e.empty()) return R::fail(e);
  } else if (kind == "bytes") {
    if (parts.size() < 2 || parts.size() > 3)
      return R::fail(where + ": expected bytes:SIZE[:STATUS]");
    r.kind = fault_kind::bytes_above;
    auto s = parse_size(parts[1]);
    if (!s.ok()) return R::fail(where + ": " + s.error());
    r.threshold = s.value();
    if (auto e = status_at(2); !e.empty()) return R::fail(e);
  } else if (kind == "prob") {
    if (parts.size() < 4 || parts.size() > 5)
      return R::fail(where + ": expected prob:ENTRY:P:SEED[:STATUS]");
    r.kind = fault_kind::probability;
    if (auto e = entry_ok(parts[1]); !e.empty()) return R::fail(e);
    r.entry = std::string(parts[1]);
    if (never_counted(r.entry))
      return R::fail(where + ": " + r.entry +
                     " never fails (clGet*Info, clRetain* and clRelease* "
                     "are not counted), so the rule could never fire");
    std::string p(parts[2]);
    char* end = nullptr;
    double v = p.empty() ? NAN : std::strtod(p.c_str(), &end);
    if (p.empty() || end != p.c_str() + p.size() || !(v >= 0.0 && v <= 1.0))
      return R::fail(where + ": probability " + quote(parts[2]) + " is not a number in [0, 1]");
    r.p = v;
    auto seed = parse_uint(parts[3], "seed");
    if (!seed.ok()) return R::fail(where + ": " + seed.error());
    r.seed = seed.value();
    if (auto e = status_at(4); !e.empty()) return R::fail(e);
  } else {
    return R::fail(where + ": unknown kind " + quote(kind) +
                   " (expected nth, bytes, prob or exec)");
  }
  return r;
}

value_or_error<std::vector<fault_rule>> parse_faults(std::string_view text) {
  using R = value_or_error<std::vector<fault_rule>>;
  std::vector<fault_rule> out;
  if (text.empty()) return R::fail("fault list is empty");
  for (std::string_view item : split(text, ';')) {
    auto r = parse_fault(item);
    if (!r.ok()) return R::fail(r.error());
    out.push_back(r.value());
  }
  return out;
}

}  // namespace mockcl
