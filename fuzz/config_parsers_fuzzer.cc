// Fuzzer 4a: the parsers of environment configuration, mockcl's (//mockcl:config: MOCKCL_DEVICES,
// MOCKCL_FAULTS, MOCKCL_SCHEDULE, sizes, statuses, presets, the whole environment) and the
// OpenCL layer's (//layer_api:layer_settings: CLPOOL_LAYER_* text, u64, byte sizes,
// probabilities).
//
// The LAST byte picks the parser (FuzzedDataProvider takes integers from the end); the rest is its
// text. Besides "no crash, no sanitizer report,
// no exception" each parser is checked against what its header promises:
//   - a result is a value or an error, never both, and errors are never empty messages;
//   - parsing is deterministic (a second parse gives the same result);
//   - round trips: parse_devices(format_devices(d)) == d for every device list that parsed
//     (presets and whole environments included); parse_size(to_string(n)) == n and
//     parse_status(status_name(s)) == s for every value that parsed; layer settings rendered
//     back into CLPOOL_LAYER_* lines parse to the same budget, fail_nth and trace path;
//   - reference models, written from the grammars in the headers: layer parse_u64 ("decimal
//     digits only, no sign, no spaces, no overflow"), parse_byte_size (common/byte_size.h's
//     one size grammar) and parse_probability ("a plain decimal number in [0, 1]").
// A mismatch prints the parser, the input (escaped) and what differed, then aborts.
#include <fuzzer/FuzzedDataProvider.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "layer_api/layer_settings.h"
#include "mockcl/config/config.h"

namespace {

std::string escaped(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

struct failure_context {
  const char* parser = "";
  std::string_view input;
};
failure_context g_context;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr,
               "\n==== config_parsers_fuzzer: %s broke its contract ====\ninput: \"%s\"\n%s\n",
               g_context.parser, escaped(g_context.input).c_str(), what.c_str());
  std::fflush(stderr);
  std::abort();
}

void expect(bool condition, const std::string& what) {
  if (!condition) fail(what);
}

template <typename T>
void expect_result_shape(const mockcl::value_or_error<T>& r) {
  if (!r.ok()) expect(!r.error().empty(), "an error result with an empty message");
}

void check_devices_round_trip(const std::vector<mockcl::device_config>& devices) {
  expect(!devices.empty(), "a device list that parsed is empty");
  const std::string text = mockcl::format_devices(devices);
  const auto again = mockcl::parse_devices(text);
  expect(again.ok(), "format_devices() output \"" + escaped(text) +
                         "\" does not parse: " + (again.ok() ? "" : again.error()));
  expect(again.value() == devices,
         "parse_devices(format_devices(d)) != d; format_devices gave \"" + escaped(text) + "\"");
}

// --- mockcl ---------------------------------------------------------------------------------

void fuzz_size(std::string_view text) {
  const auto r = mockcl::parse_size(text);
  expect_result_shape(r);
  if (!r.ok()) return;
  const auto again = mockcl::parse_size(std::to_string(r.value()));
  expect(again.ok() && again.value() == r.value(),
         "parse_size(to_string(" + std::to_string(r.value()) + ")) does not give it back");
}

void fuzz_status(std::string_view text) {
  const auto r = mockcl::parse_status(text);
  expect_result_shape(r);
  if (!r.ok()) return;
  expect(r.value() < 0, "parse_status accepted a non-negative status " + std::to_string(r.value()));
  const std::string_view name = mockcl::status_name(r.value());
  if (name != "CL_UNKNOWN_ERROR") {  // common/cl_status.h: the name of every unlisted code
    const auto again = mockcl::parse_status(name);
    expect(again.ok() && again.value() == r.value(),
           "parse_status(status_name(" + std::to_string(r.value()) + ")) does not give it back");
  }
  const auto by_number = mockcl::parse_status(std::to_string(r.value()));
  expect(by_number.ok() && by_number.value() == r.value(),
         "parse_status(\"" + std::to_string(r.value()) + "\") does not give it back");
}

void fuzz_preset(std::string_view text) {
  const auto r = mockcl::parse_preset(text);
  expect_result_shape(r);
  if (r.ok()) check_devices_round_trip({r.value()});
}

void fuzz_devices(std::string_view text) {
  const auto r = mockcl::parse_devices(text);
  expect_result_shape(r);
  if (!r.ok()) return;
  check_devices_round_trip(r.value());
  const auto again = mockcl::parse_devices(text);
  expect(again.ok() && again.value() == r.value(), "parse_devices is not deterministic");
}

void fuzz_faults(std::string_view text) {
  const auto r = mockcl::parse_faults(text);
  expect_result_shape(r);
  const auto again = mockcl::parse_faults(text);
  expect(again.ok() == r.ok(), "parse_faults is not deterministic");
  if (!r.ok()) return;
  expect(again.value() == r.value(), "parse_faults is not deterministic");
  for (const mockcl::fault_rule& rule : r.value()) {
    if (rule.kind == mockcl::fault_kind::probability) {
      expect(rule.p >= 0.0 && rule.p <= 1.0, "a probability rule with p outside [0, 1]");
    }
    expect(rule.status <= 0, "a fault rule with a positive status");
  }
  // One rule alone parses the same through parse_fault.
  if (r.value().size() == 1 && text.find(';') == std::string_view::npos) {
    const auto one = mockcl::parse_fault(text);
    expect(one.ok() && one.value() == r.value()[0], "parse_fault and parse_faults disagree");
  }
}

void fuzz_schedule(std::string_view text) {
  const auto r = mockcl::parse_schedule(text);
  expect_result_shape(r);
  const auto again = mockcl::parse_schedule(text);
  expect(again.ok() == r.ok() && (!r.ok() || again.value() == r.value()),
         "parse_schedule is not deterministic");
}

// Environment: NAME=VALUE lines; names often get the MOCKCL_ prefix so the parser sees them.
void fuzz_env(FuzzedDataProvider& in) {
  static constexpr const char* kNames[] = {"MOCKCL_DEVICES",  "MOCKCL_FAULTS", "MOCKCL_SCHEDULE",
                                           "MOCKCL_CALL_LOG", "MOCKCL_",       "PATH"};
  std::vector<std::pair<std::string, std::string>> vars;
  while (in.remaining_bytes() > 0 && vars.size() < 8) {
    std::string name = in.ConsumeBool() ? kNames[in.ConsumeIntegralInRange<unsigned>(0, 5)]
                                        : in.ConsumeRandomLengthString(32);
    vars.emplace_back(std::move(name), in.ConsumeRandomLengthString(256));
  }
  std::string all;
  for (const auto& [k, v] : vars) all += k + "=" + v + "\n";
  g_context.input = all;  // for the failure report
  const auto r = mockcl::config_from_env(vars);
  expect_result_shape(r);
  if (r.ok()) check_devices_round_trip(r.value().devices);
  g_context.input = {};
}

// --- layer ----------------------------------------------------------------------------------

bool all_digits(std::string_view s) {
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// The documented grammar: decimal digits only, no sign, no spaces, no overflow past 2^64 - 1.
std::optional<std::uint64_t> reference_u64(std::string_view s) {
  if (s.empty() || !all_digits(s)) return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// common/byte_size.h: blanks around, digits, blanks, then B, KiB..EiB or k..e, any case.
std::optional<std::uint64_t> reference_byte_size(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  std::size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
  const std::optional<std::uint64_t> n = reference_u64(s.substr(0, digits));
  if (!n) return std::nullopt;
  std::string_view rest = s.substr(digits);
  while (!rest.empty() && blank(rest.front())) rest.remove_prefix(1);
  std::string unit;
  for (char c : rest) unit += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  unsigned shift = 0;
  if (unit.empty() || unit == "b") {
    shift = 0;
  } else if (unit == "kib" || unit == "k") {
    shift = 10;
  } else if (unit == "mib" || unit == "m") {
    shift = 20;
  } else if (unit == "gib" || unit == "g") {
    shift = 30;
  } else if (unit == "tib" || unit == "t") {
    shift = 40;
  } else if (unit == "pib" || unit == "p") {
    shift = 50;
  } else if (unit == "eib" || unit == "e") {
    shift = 60;
  } else {
    return std::nullopt;
  }
  if (*n > (std::numeric_limits<std::uint64_t>::max() >> shift)) return std::nullopt;
  return *n << shift;
}

void fuzz_layer_u64(std::string_view text) {
  const auto r = clpool::layer::parse_u64(text);
  expect(r.value.has_value() != !r.error.empty(), "parse_u64: both or neither of value and error");
  const auto want = reference_u64(text);
  expect(r.value == want,
         "parse_u64 " + (r.value ? "= " + std::to_string(*r.value) : "fails (" + r.error + ")") +
             ", the documented grammar says " +
             (want ? std::to_string(*want) : std::string("error")));
}

void fuzz_layer_byte_size(std::string_view text) {
  const auto r = clpool::layer::parse_byte_size(text);
  expect(r.value.has_value() != !r.error.empty(),
         "parse_byte_size: both or neither of value and error");
  const auto want = reference_byte_size(text);
  expect(
      r.value == want,
      "parse_byte_size " + (r.value ? "= " + std::to_string(*r.value) : "fails (" + r.error + ")") +
          ", the documented grammar says " + (want ? std::to_string(*want) : std::string("error")));
}

void fuzz_layer_probability(std::string_view text) {
  const auto r = clpool::layer::parse_probability(text);
  expect(r.value.has_value() != !r.error.empty(),
         "parse_probability: both or neither of value and error");
  if (r.value) {
    expect(*r.value >= 0.0 && *r.value <= 1.0, "parse_probability accepted a value outside [0, 1]");
    // A plain decimal number: digits with at most one '.', nothing else.
    bool dot = false;
    for (char c : text) {
      if (c == '.') {
        expect(!dot, "parse_probability accepted two dots");
        dot = true;
      } else {
        expect(c >= '0' && c <= '9',
               "parse_probability accepted a character other than digits "
               "and '.'");
      }
    }
  }
}

void fuzz_layer_text(std::string_view text) {
  using clpool::layer::parse_layer_settings_text;
  const auto r = parse_layer_settings_text(text);
  expect(r.ok() == r.errors.empty(), "parse_result: settings and errors both or neither present");
  for (const std::string& e : r.errors) expect(!e.empty(), "an empty error message");
  const auto again = parse_layer_settings_text(text);
  expect(again.ok() == r.ok() && again.errors == r.errors &&
             (!r.ok() || *again.settings == *r.settings),
         "parse_layer_settings_text is not deterministic");
  if (!r.ok()) return;
  const auto& s = *r.settings;
  // Rendered back (what the layer documents), the settings parse to the same values.
  std::string lines;
  if (s.budget_bytes) lines += "CLPOOL_LAYER_BUDGET=" + std::to_string(*s.budget_bytes) + "\n";
  if (s.fail_nth) lines += "CLPOOL_LAYER_FAIL_NTH=" + std::to_string(*s.fail_nth) + "\n";
  const bool path_fits_a_line = s.trace_path && s.trace_path->find('\n') == std::string::npos;
  if (path_fits_a_line) lines += "CLPOOL_LAYER_TRACE=" + *s.trace_path + "\n";
  const auto rendered = parse_layer_settings_text(lines);
  expect(rendered.ok(), "settings rendered back as \"" + escaped(lines) +
                            "\" do not parse: " + rendered.error_text());
  expect(rendered.settings->budget_bytes == s.budget_bytes, "budget differs after a round trip");
  expect(rendered.settings->fail_nth == s.fail_nth, "fail_nth differs after a round trip");
  if (path_fits_a_line) {
    expect(rendered.settings->trace_path == s.trace_path, "trace path differs after a round trip");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  static constexpr const char* kParsers[] = {"mockcl::parse_size",
                                             "mockcl::parse_status",
                                             "mockcl::parse_preset",
                                             "mockcl::parse_devices",
                                             "mockcl::parse_faults",
                                             "mockcl::parse_schedule",
                                             "mockcl::config_from_env",
                                             "layer::parse_u64",
                                             "layer::parse_byte_size",
                                             "layer::parse_probability",
                                             "layer::parse_layer_settings_text"};
  const unsigned which = in.ConsumeIntegralInRange<unsigned>(0, 10);
  g_context.parser = kParsers[which];
  if (which == 6) {
    fuzz_env(in);
    return 0;
  }
  const std::string text = in.ConsumeRemainingBytesAsString();
  g_context.input = text;
  switch (which) {
    case 0:
      fuzz_size(text);
      break;
    case 1:
      fuzz_status(text);
      break;
    case 2:
      fuzz_preset(text);
      break;
    case 3:
      fuzz_devices(text);
      break;
    case 4:
      fuzz_faults(text);
      break;
    case 5:
      fuzz_schedule(text);
      break;
    case 7:
      fuzz_layer_u64(text);
      break;
    case 8:
      fuzz_layer_byte_size(text);
      break;
    case 9:
      fuzz_layer_probability(text);
      break;
    default:
      fuzz_layer_text(text);
      break;
  }
  return 0;
}
