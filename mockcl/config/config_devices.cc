// The device grammar: presets ("gpu-1g", "nvidia-a100-40g", ...) and MOCKCL_DEVICES lists of them
// with options; and its canonical rendering (format_devices).
#include "mockcl/config/config.h"

#include <algorithm>

#include "common/byte_size.h"
#include "device_model/device_memory.h"
#include "mockcl/config/config_text.h"

namespace mockcl {

using config_text::parse_bool;
using config_text::parse_uint;
using config_text::quote;
using config_text::split;

namespace {

// MOCKCL_DEVICES's spelling ("256m"), from the one formatter.
std::string format_size(uint64_t v) {
  return clpool::common::format_bytes_exact(v, clpool::common::byte_units::letter);
}

// Max alloc for a capacity: a quarter, but at least min(capacity, 128 MiB), as OpenCL requires.
uint64_t default_max_alloc(uint64_t capacity) {
  uint64_t floor = std::min<uint64_t>(capacity, 128ull << 20);
  return std::max(capacity / 4, floor);
}

}  // namespace

std::vector<device_config> default_devices() { return {device_config{}}; }

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
    auto s = parse_size(size_text, {.device = true});
    if (!s.ok())
      return value_or_error<device_config>::fail("preset " + quote(text) + ": " + s.error());
    if (s.value() == 0)
      return value_or_error<device_config>::fail("preset " + quote(text) + ": capacity 0");
    d.capacity = s.value();
  }
  d.reported = d.capacity;
  d.max_alloc = default_max_alloc(d.capacity);
  d.pinned = d.gpu ? std::min<uint64_t>(d.capacity / 4, 1ull << 30) : d.capacity / 2;
  d.name = "mockcl " + std::string(kind) + "-" + format_size(d.capacity);
  return d;
}

namespace {

// Which of a device's figures its options set (else its preset's and profile's apply).
struct options_set {
  bool name = false, capacity = false, reported = false, max_alloc = false, pinned = false,
       semantics = false, oom_at = false, svm_oom_at = false;
};

// One key=value option of a device, applied to `d`. Returns the problem, "" when it is good.
// `what` is "device N (...): KEY", `where` "device N (...)".
std::string apply_device_option(std::string_view key, std::string_view val, const std::string& what,
                                const std::string& where, device_config& d, options_set& set) {
  if (key == "name") {
    if (val.empty()) return what + " is empty";
    if (val.find_first_of(";,:=") != std::string_view::npos)
      return what + " must not contain ; , : or =";
    d.name = std::string(val);
    set.name = true;
  } else if (key == "capacity" || key == "reported" || key == "max_alloc" || key == "pinned") {
    auto s = parse_size(val, {.device = key == "capacity"});
    if (!s.ok()) return what + ": " + s.error();
    if (key == "capacity") d.capacity = s.value(), set.capacity = true;
    if (key == "reported") d.reported = s.value(), set.reported = true;
    if (key == "max_alloc") d.max_alloc = s.value(), set.max_alloc = true;
    if (key == "pinned") d.pinned = s.value(), set.pinned = true;
  } else if (key == "semantics") {
    const std::optional<alloc_semantics> s = clpool::device_model::parse_semantics(val);
    if (!s) return what + ": " + quote(val) + " is not immediate, deferred or host_oom";
    d.semantics = *s;
    set.semantics = true;
  } else if (key == "oom_at") {
    if (val == "enqueue")
      d.oom_at_execution = false;
    else if (val == "execution")
      d.oom_at_execution = true;
    else
      return what + ": " + quote(val) + " is not enqueue or execution";
    set.oom_at = true;
  } else if (key == "svm_oom_at") {
    if (val == "creation")
      d.svm_first_use = false;
    else if (val == "first_use")
      d.svm_first_use = true;
    else
      return what + ": " + quote(val) + " is not creation or first_use";
    set.svm_oom_at = true;
  } else if (key == "profile") {
    if (val.empty()) return what + " is empty";
    try {
      d.model = clpool::device_model::load_profile(val);
    } catch (const clpool::device_model::profile_error& e) {
      return what + ": " + e.what();
    }
    d.profile = std::string(val);
  } else if (key == "maps") {
    if (val == "shared")
      d.maps = map_mode::shared;
    else if (val == "copy")
      d.maps = map_mode::copy;
    else
      return what + ": " + quote(val) + " is not shared or copy";
  } else if (key == "svm") {
    auto b = parse_bool(val, "svm");
    if (!b.ok()) return where + ": " + b.error();
    d.svm = b.value();
  } else if (key == "context_cost") {
    auto s = parse_size(val);
    if (!s.ok()) return what + ": " + s.error();
    d.context_cost = s.value();
  } else if (key == "free_query") {
    if (val == "amd")
      d.free_query = true;
    else if (val == "none")
      d.free_query = false;
    else
      return what + ": " + quote(val) + " is not amd or none";
  } else if (key == "type") {
    if (val == "gpu")
      d.gpu = true;
    else if (val == "cpu")
      d.gpu = false;
    else
      return what + ": " + quote(val) + " is not gpu or cpu";
  } else {
    return where + ": unknown option " + quote(key) +
           " (known: name, type, capacity, reported, max_alloc, semantics, oom_at, svm_oom_at, "
           "svm, pinned, profile, maps, context_cost, free_query)";
  }
  return "";
}

// A context cost the device could never hold, or one that would leave it nothing, makes every
// clCreateContext fail or every allocation after it: refused, as fault rules that could never fire
// are. Returns the problem, "" when the cost is 0 or leaves room.
std::string check_context_cost(const device_config& d, const std::string& where) {
  if (d.context_cost == 0) return "";
  const std::string what = where + ": context_cost " + format_size(d.context_cost);
  if (d.context_cost >= d.capacity) {
    return what + " is not smaller than capacity " + format_size(d.capacity) +
           ", so every context on it would fail or leave it no memory";
  }
  // The profile's headroom and page rounding, as the device commits a context (try_commit).
  const clpool::device_model::device_memory empty(d.model, d.capacity);
  if (!empty.fits(d.context_cost)) {
    return what + " does not fit in capacity " + format_size(d.capacity) + " (usable " +
           format_size(empty.usable()) + " by profile '" + d.profile +
           "'), so every context on it would fail";
  }
  return "";
}

// The figures the options left to their defaults, from the profile and the capacity; then the
// checks across them. Returns the problem, "" when the device is good.
std::string complete_device(device_config& d, const options_set& set, const std::string& where) {
  // The profile says where its device reports out-of-memory; semantics= and oom_at= override it.
  using clpool::device_model::refusal_point;
  if (!set.semantics) d.semantics = clpool::device_model::semantics_of(d.model);
  if (!set.oom_at) d.oom_at_execution = d.model.oom_at == refusal_point::execution;
  if (!set.svm_oom_at) d.svm_first_use = d.model.svm_oom_at == refusal_point::first_use;
  if (set.capacity) {
    if (d.capacity == 0) return where + ": capacity must be > 0";
    // The preset's name says its capacity ("mockcl gpu-256m"): a device given another says that.
    if (!set.name)
      d.name = std::string("mockcl ") + (d.gpu ? "gpu" : "cpu") + "-" + format_size(d.capacity);
    if (!set.reported) d.reported = d.capacity;
    if (!set.max_alloc) d.max_alloc = default_max_alloc(d.capacity);
    if (!set.pinned)
      d.pinned = d.gpu ? std::min<uint64_t>(d.capacity / 4, 1ull << 30) : d.capacity / 2;
  }
  if (d.reported == 0) return where + ": reported must be > 0";
  if (d.max_alloc == 0) return where + ": max_alloc must be > 0";
  if (d.max_alloc > d.reported) {
    return where + ": max_alloc " + format_size(d.max_alloc) + " exceeds reported size " +
           format_size(d.reported);
  }
  return check_context_cost(d, where);
}

// One device of the list: PRESET[:KEY=VALUE,...], the `index`-th (from 1).
value_or_error<device_config> parse_device(std::string_view item, std::size_t index) {
  using R = value_or_error<device_config>;
  const std::string where = "device " + std::to_string(index) + " (" + quote(item) + ")";
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
  options_set set;
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
      if (std::string error = apply_device_option(key, val, what, where, d, set); !error.empty()) {
        return R::fail(error);
      }
    }
  }
  if (std::string error = complete_device(d, set, where); !error.empty()) return R::fail(error);
  return d;
}

}  // namespace

value_or_error<std::vector<device_config>> parse_devices(std::string_view text) {
  using R = value_or_error<std::vector<device_config>>;
  if (text.empty()) return R::fail("device list is empty");
  std::vector<device_config> out;
  for (std::string_view item : split(text, ';')) {
    auto d = parse_device(item, out.size() + 1);
    if (!d.ok()) return R::fail(d.error());
    out.push_back(std::move(d.value()));
  }
  if (out.size() > 16)
    return R::fail("at most 16 devices are supported, got " + std::to_string(out.size()));
  return out;
}

std::string format_devices(const std::vector<device_config>& devices) {
  std::string s;
  for (const auto& d : devices) {
    if (!s.empty()) s += ';';
    s += d.gpu ? "gpu" : "cpu";
    s += ":profile=" + d.profile + ",name=" + d.name + ",capacity=" + std::to_string(d.capacity) +
         ",reported=" + std::to_string(d.reported) + ",max_alloc=" + std::to_string(d.max_alloc) +
         ",semantics=" + std::string(clpool::device_model::to_string(d.semantics)) +
         ",oom_at=" + (d.oom_at_execution ? "execution" : "enqueue") +
         ",svm=" + (d.svm ? "on" : "off") +
         ",svm_oom_at=" + (d.svm_first_use ? "first_use" : "creation") +
         ",pinned=" + std::to_string(d.pinned) +
         ",maps=" + (d.maps == map_mode::copy ? "copy" : "shared") +
         ",context_cost=" + std::to_string(d.context_cost) +
         ",free_query=" + (d.free_query ? "amd" : "none");
  }
  return s;
}

}  // namespace mockcl
