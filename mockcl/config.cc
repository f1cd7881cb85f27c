#include "mockcl/config.h"

#include "common/byte_size.h"
#include "common/cl_status.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "mockcl/entry_points.h"

namespace mockcl {
namespace {


std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    std::size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

value_or_error<uint64_t> parse_uint(std::string_view text, std::string_view what) {
  uint64_t v = 0;
  if (text.empty()) return value_or_error<uint64_t>::fail(std::string(what) + " is empty");
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range)
    return value_or_error<uint64_t>::fail(std::string(what) + " " + quote(text) + " is too large");
  if (ec != std::errc() || p != text.data() + text.size())
    return value_or_error<uint64_t>::fail(std::string(what) + " " + quote(text) +
                                   " is not a non-negative integer");
  return v;
}

value_or_error<bool> parse_bool(std::string_view text, std::string_view what) {
  if (text == "on" || text == "true" || text == "1") return true;
  if (text == "off" || text == "false" || text == "0") return false;
  return value_or_error<bool>::fail(std::string(what) + " " + quote(text) +
                             " is not one of on, off, true, false, 1, 0");
}

// MOCKCL_DEVICES's spelling ("256m"), from the one formatter.
std::string format_size(uint64_t v) {
  return clpool::common::format_bytes_exact(v, clpool::common::byte_units::letter);
}

std::string_view semantics_name(alloc_semantics s) {
  switch (s) {
    case alloc_semantics::immediate: return "immediate";
    case alloc_semantics::deferred: return "deferred";
    case alloc_semantics::host_oom: return "host_oom";
  }
  return "immediate";
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Entry points that never fail and are not counted (README: "clGet*Info, clRetain* and
// clRelease* never fail"), so an nth or prob rule on one could never fire.
bool never_counted(std::string_view entry) {
  return starts_with(entry, "clRetain") || starts_with(entry, "clRelease") ||
         (starts_with(entry, "clGet") && entry.size() > 4 && entry.substr(entry.size() - 4) == "Info");
}

// Only clEnqueue* entry points create commands, so only they can carry an exec rule.
bool enqueues(std::string_view entry) { return entry == "*" || starts_with(entry, "clEnqueue"); }

// Max alloc for a capacity: a quarter, but at least min(capacity, 128 MiB), as OpenCL requires.
uint64_t default_max_alloc(uint64_t capacity) {
  uint64_t floor = std::min<uint64_t>(capacity, 128ull << 20);
  return std::max(capacity / 4, floor);
}

}  // namespace

std::vector<device_config> default_devices() { return {device_config{}}; }

value_or_error<uint64_t> parse_size(std::string_view text) {
  std::string why;
  const std::optional<uint64_t> v = clpool::common::parse_byte_size(text, why);
  if (!v) return value_or_error<uint64_t>::fail("size " + quote(text) + " " + why);
  return *v;
}

value_or_error<uint64_t> parse_device_size(std::string_view text) {
  std::string why;
  const std::optional<uint64_t> v = clpool::common::parse_device_size(text, why);
  if (!v) return value_or_error<uint64_t>::fail("size " + quote(text) + " " + why);
  return *v;
}

value_or_error<int32_t> parse_status(std::string_view text) {
  if (const std::optional<int32_t> code = clpool::common::status_from_name(text)) {
    if (*code >= 0) return value_or_error<int32_t>::fail("status CL_SUCCESS is not an error");
    return *code;
  }
  if (!text.empty() && text[0] == '-') {
    int32_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && p == text.data() + text.size() && v < 0) return v;
  }
  return value_or_error<int32_t>::fail("status " + quote(text) +
                                " is neither a negative integer nor a known CL_ error name");
}

std::string_view status_name(int32_t status) { return clpool::common::status_name(status); }

value_or_error<device_config> parse_preset(std::string_view text) {
  device_config d;
  std::string_view kind = text;
  std::string_view size_text;
  if (auto dash = text.find('-'); dash != std::string_view::npos) {
    kind = text.substr(0, dash);
    size_text = text.substr(dash + 1);
  }
  if (kind == "gpu") {
    d.gpu = true;
    d.capacity = 256ull << 20;
    d.semantics = alloc_semantics::immediate;
  } else if (kind == "cpu") {
    d.gpu = false;
    d.capacity = 4ull << 30;
    d.semantics = alloc_semantics::immediate;
  } else {
    return value_or_error<device_config>::fail("unknown preset " + quote(text) +
                                       " (expected gpu, cpu, gpu-SIZE or cpu-SIZE)");
  }
  if (text.find('-') != std::string_view::npos) {
    auto s = parse_device_size(size_text);
    if (!s.ok()) return value_or_error<device_config>::fail("preset " + quote(text) + ": " + s.error());
    if (s.value() == 0) return value_or_error<device_config>::fail("preset " + quote(text) + ": capacity 0");
    d.capacity = s.value();
  }
  d.reported = d.capacity;
  d.max_alloc = default_max_alloc(d.capacity);
  d.pinned = d.gpu ? std::min<uint64_t>(d.capacity / 4, 1ull << 30) : d.capacity / 2;
  d.name = "mockcl " + std::string(kind) + "-" + format_size(d.capacity);
  return d;
}

value_or_error<std::vector<device_config>> parse_devices(std::string_view text) {
  using R = value_or_error<std::vector<device_config>>;
  if (text.empty()) return R::fail("device list is empty");
  std::vector<device_config> out;
  for (std::string_view item : split(text, ';')) {
    std::string where = "device " + std::to_string(out.size() + 1) + " (" + quote(item) + ")";
    std::string_view preset = item;
    std::string_view opts;
    bool has_opts = false;
    if (auto colon = item.find(':'); colon != std::string_view::npos) {
      preset = item.substr(0, colon);
      opts = item.substr(colon + 1);
      has_opts = true;
    }
    auto base = parse_preset(preset);
    if (!base.ok()) return R::fail(where + ": " + base.error());
    device_config d = base.value();
    bool capacity_set = false, reported_set = false, max_alloc_set = false, pinned_set = false;
    bool semantics_set = false, oom_at_set = false;
    if (has_opts) {
      if (opts.empty()) return R::fail(where + ": nothing after ':'");
      std::vector<std::string_view> seen;
      for (std::string_view kv : split(opts, ',')) {
        auto eq = kv.find('=');
        if (eq == std::string_view::npos)
          return R::fail(where + ": option " + quote(kv) + " is not key=value");
        std::string_view key = kv.substr(0, eq), val = kv.substr(eq + 1);
        std::string what = where + ": " + std::string(key);
        for (std::string_view k : seen)
          if (k == key) return R::fail(what + " given twice");
        seen.push_back(key);
        if (key == "name") {
          if (val.empty()) return R::fail(what + " is empty");
          if (val.find_first_of(";,:=") != std::string_view::npos)
            return R::fail(what + " must not contain ; , : or =");
          d.name = std::string(val);
        } else if (key == "capacity" || key == "reported" || key == "max_alloc" || key == "pinned") {
          const bool device_size = key == "capacity";
          auto s = device_size ? parse_device_size(val) : parse_size(val);
          if (!s.ok()) return R::fail(what + ": " + s.error());
          if (key == "capacity") d.capacity = s.value(), capacity_set = true;
          if (key == "reported") d.reported = s.value(), reported_set = true;
          if (key == "max_alloc") d.max_alloc = s.value(), max_alloc_set = true;
          if (key == "pinned") d.pinned = s.value(), pinned_set = true;
        } else if (key == "semantics") {
          if (val == "immediate") d.semantics = alloc_semantics::immediate;
          else if (val == "deferred") d.semantics = alloc_semantics::deferred;
          else if (val == "host_oom") d.semantics = alloc_semantics::host_oom;
          else return R::fail(what + ": " + quote(val) + " is not immediate, deferred or host_oom");
          semantics_set = true;
        } else if (key == "oom_at") {
          if (val == "enqueue") d.oom_at_execution = false;
          else if (val == "execution") d.oom_at_execution = true;
          else return R::fail(what + ": " + quote(val) + " is not enqueue or execution");
          oom_at_set = true;
        } else if (key == "profile") {
          if (val.empty()) return R::fail(what + " is empty");
          try {
            d.model = clpool::device_model::load_profile(val);
          } catch (const clpool::device_model::profile_error& e) {
            return R::fail(what + ": " + e.what());
          }
          d.profile = std::string(val);
        } else if (key == "maps") {
          if (val == "shared") d.maps = map_mode::shared;
          else if (val == "copy") d.maps = map_mode::copy;
          else return R::fail(what + ": " + quote(val) + " is not shared or copy");
        } else if (key == "svm") {
          auto b = parse_bool(val, "svm");
          if (!b.ok()) return R::fail(where + ": " + b.error());
          d.svm = b.value();
        } else if (key == "type") {
          if (val == "gpu") d.gpu = true;
          else if (val == "cpu") d.gpu = false;
          else return R::fail(what + ": " + quote(val) + " is not gpu or cpu");
        } else {
          return R::fail(where + ": unknown option " + quote(key) +
                          " (known: name, type, capacity, reported, max_alloc, semantics, oom_at, svm, pinned, profile, maps)");
        }
      }
    }
    // The profile says where its device reports out-of-memory; semantics= and oom_at= override it.
    using clpool::device_model::oom_point;
    if (!semantics_set) d.semantics = clpool::device_model::semantics_of(d.model);
    if (!oom_at_set) d.oom_at_execution = d.model.oom_at == oom_point::execution;
    if (capacity_set) {
      if (d.capacity == 0) return R::fail(where + ": capacity must be > 0");
      if (!reported_set) d.reported = d.capacity;
      if (!max_alloc_set) d.max_alloc = default_max_alloc(d.capacity);
      if (!pinned_set) d.pinned = d.gpu ? std::min<uint64_t>(d.capacity / 4, 1ull << 30) : d.capacity / 2;
    }
    if (d.reported == 0) return R::fail(where + ": reported must be > 0");
    if (d.max_alloc == 0) return R::fail(where + ": max_alloc must be > 0");
    if (d.max_alloc > d.reported)
      return R::fail(where + ": max_alloc " + format_size(d.max_alloc) + " exceeds reported size " +
                      format_size(d.reported));
    out.push_back(std::move(d));
  }
  if (out.size() > 16) return R::fail("at most 16 devices are supported, got " + std::to_string(out.size()));
  return out;
}

std::string format_devices(const std::vector<device_config>& devices) {
  std::string s;
  for (const auto& d : devices) {
    if (!s.empty()) s += ';';
    s += d.gpu ? "gpu" : "cpu";
    s += ":profile=" + d.profile + ",name=" + d.name + ",capacity=" + std::to_string(d.capacity) +
         ",reported=" + std::to_string(d.reported) + ",max_alloc=" + std::to_string(d.max_alloc) +
         ",semantics=" + std::string(semantics_name(d.semantics)) +
         ",oom_at=" + (d.oom_at_execution ? "execution" : "enqueue") + ",svm=" + (d.svm ? "on" : "off") +
         ",pinned=" + std::to_string(d.pinned) + ",maps=" + (d.maps == map_mode::copy ? "copy" : "shared");
  }
  return s;
}

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
      return R::fail(where + ": " + r.entry + " never fails (clGet*Info, clRetain* and clRelease* "
                      "are not counted), so the rule could never fire");
    if (r.kind == fault_kind::exec && !enqueues(r.entry))
      return R::fail(where + ": " + r.entry + " enqueues no command, so the rule could never fire "
                      "(exec rules name a clEnqueue* entry point or *)");
    auto n = parse_uint(parts[2], "N");
    if (!n.ok()) return R::fail(where + ": " + n.error());
    if (n.value() == 0) return R::fail(where + ": N counts from 1");
    r.n = n.value();
    if (auto e = status_at(3); !e.empty()) return R::fail(e);
  } else if (kind == "bytes") {
    if (parts.size() < 2 || parts.size() > 3) return R::fail(where + ": expected bytes:SIZE[:STATUS]");
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
      return R::fail(where + ": " + r.entry + " never fails (clGet*Info, clRetain* and clRelease* "
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
    return R::fail(where + ": unknown kind " + quote(kind) + " (expected nth, bytes, prob or exec)");
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
      s.kernel_ns = v.value();
    } else {
      return R::fail("schedule item " + quote(item) + " is not eager, lazy, seed=N or kernel_ns=N");
    }
  }
  return s;
}

value_or_error<backing_mode> parse_backing(std::string_view text) {
  if (text == "pocl") return backing_mode::pocl;
  if (text == "none") return backing_mode::none;
  return value_or_error<backing_mode>::fail("'" + std::string(text) + "' is not pocl or none");
}

value_or_error<runtime_config> config_from_env(const std::vector<std::pair<std::string, std::string>>& vars) {
  using R = value_or_error<runtime_config>;
  runtime_config c;
  c.devices = default_devices();
  std::vector<std::string> seen;
  for (const auto& var : vars) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in the lambda below.
    const std::string& name = var.first;
    const std::string& value = var.second;
    if (name.rfind("MOCKCL_", 0) != 0) continue;
    auto fail = [&](const std::string& why) { return R::fail(name + "=" + quote(value) + ": " + why); };
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
                      " (known: MOCKCL_DEVICES, MOCKCL_FAULTS, MOCKCL_SCHEDULE, MOCKCL_CALL_LOG, MOCKCL_BACKING,"
                      " MOCKCL_POCL_ICD)");
    }
  }
  return c;
}

}  // namespace mockcl
