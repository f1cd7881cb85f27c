#include "layer_api/layer_settings.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "common/byte_size.h"

namespace clpool::layer {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Quotes a user value for an error message, cutting very long values so messages stay readable.
std::string quoted(std::string_view value) {
  constexpr std::size_t max_shown = 64;
  std::string out = "\"";
  for (std::size_t i = 0; i < value.size() && i < max_shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c >= 0x7f) {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (value.size() > max_shown) out += "...";
  out += "\"";
  return out;
}

// A variable's name for a message: as is, or quoted and escaped when it holds bytes a terminal
// would not show (only possible through parse_layer_settings_text).
std::string shown_name(std::string_view name) {
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) return quoted(name);
  }
  return std::string(name);
}

}  // namespace

std::string parse_result::error_text() const {
  std::string out;
  for (const std::string& e : errors) {
    if (!out.empty()) out += '\n';
    out += e;
  }
  return out;
}

u64_or_error parse_u64(std::string_view text) {
  if (text.empty()) return {std::nullopt, "is empty"};
  std::uint64_t value = 0;
  for (char c : text) {
    if (!is_digit(c)) {
      return {std::nullopt,
              "is not a non-negative decimal integer (digits 0-9 only): " + quoted(text)};
    }
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
      return {std::nullopt, "is too large for 64 bits: " + quoted(text)};
    }
    value = value * 10 + digit;
  }
  return {value, {}};
}

u64_or_error parse_byte_size(std::string_view text, common::size_rules rules) {
  std::string why;
  const std::optional<std::uint64_t> v = common::parse_size(text, rules, why);
  if (!v) return {std::nullopt, quoted(text) + " " + why};
  return {v, {}};
}

probability_or_error parse_probability(std::string_view text) {
  if (text.empty()) return {std::nullopt, "is empty"};
  // Validate the shape ourselves: from_chars would also accept "inf", "nan" and exponents.
  std::size_t i = 0;
  std::size_t int_digits = 0;
  while (i < text.size() && is_digit(text[i])) ++i, ++int_digits;
  std::size_t frac_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && is_digit(text[i])) ++i, ++frac_digits;
  }
  if (i != text.size() || int_digits + frac_digits == 0) {
    return {std::nullopt,
            "is not a decimal probability between 0 and 1 (e.g. 0.01): " + quoted(text)};
  }
  double value = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return {std::nullopt,
            "is not a decimal probability between 0 and 1 (e.g. 0.01): " + quoted(text)};
  }
  // Above 1 is decided on the text, not on the double: "1.0000000000000000000001" rounds to 1.0.
  // The shape above leaves digits only, so the value is above 1 exactly when its integer part,
  // without leading zeros, is more than "1", or is "1" with a non-zero digit after the point.
  const std::string_view int_part = text.substr(0, int_digits);
  const std::size_t first_nonzero = int_part.find_first_not_of('0');
  const std::string_view whole =
      first_nonzero == std::string_view::npos ? std::string_view() : int_part.substr(first_nonzero);
  const std::string_view frac = text.substr(std::min(text.size(), int_digits + 1));
  const bool above_one =
      whole.size() > 1 || (whole == "1" && frac.find_first_not_of('0') != std::string_view::npos);
  if (above_one || value < 0.0 || value > 1.0) {
    return {std::nullopt, "must be between 0 and 1 inclusive: " + quoted(text)};
  }
  return {value, {}};
}

namespace {

// What the settings parsed so far hold, and what was given (for the checks across variables).
struct parse_state {
  layer_settings s;
  bool seed_given = false;
};

// Each variable's rule: applies `value` to `st`, or returns the problem ("" when it is good).
using apply_fn = std::string (*)(std::string_view value, parse_state& st);

std::string apply_trace(std::string_view value, parse_state& st) {
  if (value.empty()) return "is empty; set it to the path of the trace file to write";
  if (value.find('\0') != std::string_view::npos) return "contains a NUL byte";
  st.s.trace_path = std::string(value);
  return "";
}

std::string apply_errors(std::string_view value, parse_state& st) {
  if (value.empty())
    return "is empty; set it to the path of a file to append the layer's errors to";
  if (value.find('\0') != std::string_view::npos) return "contains a NUL byte";
  st.s.errors_path = std::string(value);
  return "";
}

std::string apply_report(std::string_view value, parse_state& st) {
  if (value.empty())
    return "is empty; set it to the path of a file to append the layer's report to";
  if (value.find('\0') != std::string_view::npos) return "contains a NUL byte";
  st.s.report_path = std::string(value);
  return "";
}

std::string apply_fail_until_free(std::string_view value, parse_state& st) {
  if (value != "0" && value != "1") return "must be 1 (on) or 0 (off), got " + quoted(value);
  st.s.fail_until_free = value == "1";
  return "";
}

std::string apply_keep_trace(std::string_view value, parse_state& st) {
  if (value != "0" && value != "1") return "must be 1 (on) or 0 (off), got " + quoted(value);
  st.s.keep_trace = value == "1";
  return "";
}

std::string apply_fail_first_use_nth(std::string_view value, parse_state& st) {
  const u64_or_error r = parse_u64(value);
  if (!r.value) return r.error;
  if (*r.value == 0) return "must be at least 1 (first uses are counted from 1)";
  st.s.fail_first_use_nth = r.value;
  return "";
}

std::string apply_budget(std::string_view value, parse_state& st) {
  // A budget is a device's size: the one limit of every capacity (common::max_device_bytes),
  // as --budget and clpool_replay --capacity have it.
  const u64_or_error r = parse_byte_size(value, {.device = true});
  if (!r.value) return r.error;
  if (*r.value == 0) return "must be greater than 0 bytes (unset it for no budget)";
  st.s.budget_bytes = r.value;
  return "";
}

std::string apply_profile(std::string_view value, parse_state& st) {
  try {
    st.s.profile = device_model::load_profile(value);
  } catch (const device_model::profile_error& e) {
    return std::string("is not a usable profile: ") + e.what();
  }
  return "";
}

std::string apply_fail_nth(std::string_view value, parse_state& st) {
  const u64_or_error r = parse_u64(value);
  if (!r.value) return r.error;
  if (*r.value == 0) return "must be at least 1 (allocations are counted from 1)";
  st.s.fail_nth = r.value;
  return "";
}

std::string apply_fail_prob(std::string_view value, parse_state& st) {
  const probability_or_error r = parse_probability(value);
  if (!r.value) return r.error;
  st.s.fail_probability = r.value;
  return "";
}

std::string apply_seed(std::string_view value, parse_state& st) {
  const u64_or_error r = parse_u64(value);
  if (!r.value) return r.error;
  st.s.seed = *r.value;
  st.seed_given = true;
  return "";
}

std::string apply_stacks(std::string_view value, parse_state& st) {
  if (value != "none" && value != "native" && value != "python" && value != "all") {
    return "must be none, native, python or all, got " + quoted(value);
  }
  st.s.stacks = std::string(value);
  return "";
}

// The layer's settings, one row each: the option table every CLPOOL_LAYER_* variable is read by.
struct setting_row {
  std::string_view name;
  apply_fn apply;
};
constexpr setting_row setting_table[] = {
    {env_trace, apply_trace},
    {env_budget, apply_budget},
    {env_profile, apply_profile},
    {env_fail_nth, apply_fail_nth},
    {env_fail_prob, apply_fail_prob},
    {env_seed, apply_seed},
    {env_stacks, apply_stacks},
    {env_errors, apply_errors},
    {env_report, apply_report},
    {env_fail_first_use_nth, apply_fail_first_use_nth},
    {env_fail_until_free, apply_fail_until_free},
    {env_keep_trace, apply_keep_trace},
};

std::string unknown_setting(std::string_view name) {
  std::string known;
  for (const setting_row& row : setting_table)
    known += (known.empty() ? "" : ", ") + std::string(row.name);
  return shown_name(name) + " is not a setting of the clpool layer (known: " + known + ")";
}

// The rules across variables: a variable that means nothing without another.
void check_together(const parse_state& st, const std::set<std::string_view>& seen,
                    std::vector<std::string>& errors) {
  const layer_settings& s = st.s;
  if (st.seed_given && !s.fail_probability && seen.count(env_fail_prob) == 0) {
    errors.push_back(std::string(env_seed) + " is set but " + std::string(env_fail_prob) +
                     " is not; the seed only drives random fault injection");
  }
  if (s.stacks != "none" && !s.trace_path && seen.count(env_trace) == 0) {
    errors.push_back(std::string(env_stacks) + " is set but " + std::string(env_trace) +
                     " is not; stacks are recorded in the trace");
  }
  if (s.profile && !s.budget_bytes && seen.count(env_budget) == 0) {
    errors.push_back(std::string(env_profile) + " is set but " + std::string(env_budget) +
                     " is not; the profile shapes the budget's device");
  }
  if (s.keep_trace && !s.trace_path && seen.count(env_trace) == 0) {
    errors.push_back(std::string(env_keep_trace) + " is set but " + std::string(env_trace) +
                     " is not; it keeps that trace");
  }
  if (s.fail_until_free && !s.fail_nth && !s.fail_first_use_nth) {
    errors.push_back(std::string(env_fail_until_free) + " is set but neither " +
                     std::string(env_fail_nth) + " nor " + std::string(env_fail_first_use_nth) +
                     " is: it keeps the device full after their failure");
  }
  if (s.fail_first_use_nth && (!s.budget_bytes || !s.profile ||
                               s.profile->oom_at == device_model::refusal_point::creation)) {
    errors.push_back(std::string(env_fail_first_use_nth) + " needs " + std::string(env_budget) +
                     " and a " + std::string(env_profile) +
                     " whose device commits memory at first use (nvidia); "
                     "with one that fails at creation, fail an allocation with " +
                     std::string(env_fail_nth));
  }
  if (s.profile && s.budget_bytes) {
    if (std::string why = device_model::capacity_refusal(*s.profile, *s.budget_bytes, env_budget);
        !why.empty()) {
      errors.push_back(why);
    }
  }
}

}  // namespace

parse_result parse_layer_settings(const std::vector<env_entry>& entries) {
  parse_state st;
  std::vector<std::string> errors;
  std::set<std::string_view> seen;
  for (const auto& [name, value] : entries) {
    if (name.substr(0, env_prefix.size()) != env_prefix) continue;
    if (!seen.insert(name).second) {
      errors.push_back(shown_name(name) + " is set more than once");
      continue;
    }
    const setting_row* row = nullptr;
    for (const setting_row& r : setting_table) {
      if (r.name == name) row = &r;
    }
    if (row == nullptr) {
      errors.push_back(unknown_setting(name));
    } else if (const std::string problem = row->apply(value, st); !problem.empty()) {
      errors.push_back(shown_name(name) + " " + problem);
    }
  }
  check_together(st, seen, errors);
  if (!errors.empty()) return {std::nullopt, std::move(errors)};
  return {std::move(st.s), {}};
}

parse_result parse_layer_settings_from_environ(const char* const* envp) {
  std::vector<env_entry> entries;
  for (; envp != nullptr && *envp != nullptr; ++envp) {
    const std::string_view entry(*envp);
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;  // not NAME=value; no setting of ours
    entries.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return parse_layer_settings(entries);
}

parse_result parse_layer_settings_text(std::string_view text) {
  std::vector<env_entry> entries;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    if (line.empty()) continue;
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      entries.emplace_back(line, std::string_view());
    } else {
      entries.emplace_back(line.substr(0, eq), line.substr(eq + 1));
    }
  }
  return parse_layer_settings(entries);
}

bool charges_buffers_at_first_use(const layer_settings& s) {
  return s.budget_bytes && s.profile && s.profile->oom_at != device_model::refusal_point::creation;
}

bool charges_svm_at_first_use(const layer_settings& s) {
  return s.budget_bytes && s.profile &&
         s.profile->svm_oom_at == device_model::refusal_point::first_use;
}

}  // namespace clpool::layer
