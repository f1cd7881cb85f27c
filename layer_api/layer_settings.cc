#include "layer_api/layer_settings.h"

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
  if (value < 0.0 || value > 1.0) {
    return {std::nullopt, "must be between 0 and 1 inclusive: " + quoted(text)};
  }
  return {value, {}};
}

parse_result parse_layer_settings(const std::vector<env_entry>& entries) {
  layer_settings s;
  std::vector<std::string> errors;
  std::set<std::string_view> seen;
  bool seed_given = false;

  for (const auto& entry : entries) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda below.
    const std::string_view name = entry.first;
    const std::string_view value = entry.second;
    if (name.substr(0, env_prefix.size()) != env_prefix) continue;
    if (!seen.insert(name).second) {
      errors.push_back(shown_name(name) + " is set more than once");
      continue;
    }
    auto fail = [&](const std::string& problem) {
      errors.push_back(shown_name(name) + " " + problem);
    };

    if (name == env_trace) {
      if (value.empty()) {
        fail("is empty; set it to the path of the trace file to write");
      } else if (value.find('\0') != std::string_view::npos) {
        fail("contains a NUL byte");
      } else {
        s.trace_path = std::string(value);
      }
    } else if (name == env_budget) {
      // A budget is a device's size: the one limit of every capacity (common::max_device_bytes),
      // as --budget and clpool_replay --capacity have it.
      const u64_or_error r = parse_byte_size(value, {.device = true});
      if (!r.value) {
        fail(r.error);
      } else if (*r.value == 0) {
        fail("must be greater than 0 bytes (unset it for no budget)");
      } else {
        s.budget_bytes = r.value;
      }
    } else if (name == env_fail_nth) {
      u64_or_error r = parse_u64(value);
      if (!r.value) {
        fail(r.error);
      } else if (*r.value == 0) {
        fail("must be at least 1 (allocations are counted from 1)");
      } else {
        s.fail_nth = r.value;
      }
    } else if (name == env_fail_prob) {
      probability_or_error r = parse_probability(value);
      if (!r.value) {
        fail(r.error);
      } else {
        s.fail_probability = r.value;
      }
    } else if (name == env_profile) {
      try {
        s.profile = device_model::load_profile(value);
      } catch (const device_model::profile_error& e) {
        fail(std::string("is not a usable profile: ") + e.what());
      }
    } else if (name == env_stacks) {
      if (value != "none" && value != "native" && value != "python" && value != "all") {
        fail("must be none, native, python or all, got " + quoted(value));
      } else {
        s.stacks = std::string(value);
      }
    } else if (name == env_seed) {
      u64_or_error r = parse_u64(value);
      if (!r.value) {
        fail(r.error);
      } else {
        s.seed = *r.value;
        seed_given = true;
      }
    } else {
      errors.push_back(shown_name(name) +
                       " is not a setting of the clpool layer (known: CLPOOL_LAYER_TRACE, "
                       "CLPOOL_LAYER_BUDGET, CLPOOL_LAYER_PROFILE, CLPOOL_LAYER_FAIL_NTH, "
                       "CLPOOL_LAYER_FAIL_PROB, CLPOOL_LAYER_SEED, CLPOOL_LAYER_STACKS)");
    }
  }
  if (seed_given && !s.fail_probability && seen.count(env_fail_prob) == 0) {
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
  if (s.profile && s.budget_bytes) {
    if (std::string why = device_model::capacity_refusal(*s.profile, *s.budget_bytes, env_budget); !why.empty()) {
      errors.push_back(why);
    }
  }
  if (!errors.empty()) return {std::nullopt, std::move(errors)};
  return {std::move(s), {}};
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

}  // namespace clpool::layer
