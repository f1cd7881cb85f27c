// Settings of the clpool OpenCL layer, parsed from CLPOOL_LAYER_* environment variables.
//
// Parsing is a pure function of the (name, value) pairs it is given, so it can be unit-tested and
// fuzzed without touching the process environment. Every CLPOOL_LAYER_* name is checked: an unknown
// name (a typo such as CLPOOL_LAYER_BUGDET) is an error rather than a silently ignored setting,
// because a layer that runs with a setting the user believes is on produces a misleading trace.
#ifndef CLPOOL_LAYER_API_LAYER_SETTINGS_H_
#define CLPOOL_LAYER_API_LAYER_SETTINGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/byte_size.h"
#include "device_model/profile.h"

namespace clpool::layer {

// Names of the variables the layer reads. All share the prefix below.
inline constexpr std::string_view env_prefix = "CLPOOL_LAYER_";
inline constexpr std::string_view env_trace = "CLPOOL_LAYER_TRACE";
inline constexpr std::string_view env_budget = "CLPOOL_LAYER_BUDGET";
inline constexpr std::string_view env_fail_nth = "CLPOOL_LAYER_FAIL_NTH";
inline constexpr std::string_view env_fail_prob = "CLPOOL_LAYER_FAIL_PROB";
inline constexpr std::string_view env_seed = "CLPOOL_LAYER_SEED";
inline constexpr std::string_view env_profile = "CLPOOL_LAYER_PROFILE";
inline constexpr std::string_view env_stacks = "CLPOOL_LAYER_STACKS";
inline constexpr std::string_view env_errors = "CLPOOL_LAYER_ERRORS";
// How the file CLPOOL_LAYER_ERRORS names begins. The layer appends only to a file that begins
// so, or one it creates: clpool record's path is /dev/fd/N, which in a process whose launcher
// closed N (Python's subprocess, a test runner) names nothing, or a file of the program's own.
inline constexpr std::string_view errors_file_header = "# clpool layer errors and notes\n";
inline constexpr std::string_view env_fail_first_use_nth = "CLPOOL_LAYER_FAIL_FIRST_USE_NTH";
inline constexpr std::string_view env_report = "CLPOOL_LAYER_REPORT";
inline constexpr std::string_view env_fail_until_free = "CLPOOL_LAYER_FAIL_UNTIL_FREE";
inline constexpr std::string_view env_keep_trace = "CLPOOL_LAYER_KEEP_TRACE";

// Seed used for CLPOOL_LAYER_FAIL_PROB when CLPOOL_LAYER_SEED is not given, so that a run is
// reproducible by default.
inline constexpr std::uint64_t default_seed = 1;

// What the layer should do. Every field is optional; an empty settings object makes the layer a
// pure pass-through that records nothing.
struct layer_settings {
  std::optional<std::string> trace_path;      // CLPOOL_LAYER_TRACE: where to write the trace
  std::optional<std::uint64_t> budget_bytes;  // CLPOOL_LAYER_BUDGET: simulated device memory
  std::optional<std::uint64_t>
      fail_nth;  // CLPOOL_LAYER_FAIL_NTH: fail the Nth allocation (1-based)
  std::optional<double> fail_probability;  // CLPOOL_LAYER_FAIL_PROB: fail each allocation with p
  std::uint64_t seed = default_seed;       // CLPOOL_LAYER_SEED: seed for FAIL_PROB
  // CLPOOL_LAYER_PROFILE: how the budget's device commits memory (a device-model profile name
  // or file; device_model/profile.h). Without it the budget counts exact bytes.
  std::optional<device_model::device_profile> profile;
  // CLPOOL_LAYER_STACKS: the allocation sites recorded with a trace (FORMAT.md "Sites"): none (the
  // default), native, python or all (stacks/capture.h).
  std::string stacks = "none";
  // CLPOOL_LAYER_ERRORS: a file the layer appends each of its errors to, one line each, beside
  // stderr (clpool record reads it to know that the trace is incomplete).
  std::optional<std::string> errors_path;
  // CLPOOL_LAYER_FAIL_FIRST_USE_NTH: the Nth first use of a block (1-based; a profile that commits
  // at first use) fails with the profile's status, as FAIL_NTH fails the Nth allocation.
  std::optional<std::uint64_t> fail_first_use_nth;
  // CLPOOL_LAYER_REPORT: a file the layer appends its fault points to for a harness (clpool
  // sweep): each allocation attempt and first use in order, each fault it injected, and what the
  // program still held at exit (tools/layer/README.md, "The report").
  std::optional<std::string> report_path;
  // CLPOOL_LAYER_FAIL_UNTIL_FREE=1: after a failure FAIL_NTH or FAIL_FIRST_USE_NTH injected, the
  // device stays full, as a real one would: every later request (an allocation, or a first use
  // when the profile commits at first use) of at least that size fails too, until the program
  // frees device memory. A retry without freeing (PyOpenCL's, after a garbage collection that
  // freed nothing) fails again.
  bool fail_until_free = false;
  // CLPOOL_LAYER_KEEP_TRACE=1: the trace at CLPOOL_LAYER_TRACE is never truncated once it holds
  // events. A process that finds it so (an earlier process of the same run: `sh -c "a; b"`)
  // records to TRACE.PID instead, as one does that finds another process writing it (always).
  // clpool record sets it, after emptying the trace itself.
  bool keep_trace = false;

  bool operator==(const layer_settings&) const = default;
};

// Whether the layer charges buffers (SVM blocks) at their first use rather than at creation: a
// budget, and a profile whose device commits them there (oom_at not creation; svm_oom_at
// first_use). The recorder's charging and the trace's first uses (FORMAT.md, version 4) follow it.
bool charges_buffers_at_first_use(const layer_settings& s);
bool charges_svm_at_first_use(const layer_settings& s);

// The outcome of parsing: either settings, or one message per problem found (never both).
struct parse_result {
  std::optional<layer_settings> settings;
  std::vector<std::string> errors;  // each names the variable and what is wrong with it

  bool ok() const { return settings.has_value(); }
  // All errors joined by newlines, for printing.
  std::string error_text() const;
};

using env_entry = std::pair<std::string_view, std::string_view>;

// Parses the layer's settings from environment entries. Entries whose name does not start with
// env_prefix are ignored; any other problem (unknown CLPOOL_LAYER_* name, empty or malformed
// value, a value out of range, a name given twice, CLPOOL_LAYER_SEED without
// CLPOOL_LAYER_FAIL_PROB) is reported. Never throws except std::bad_alloc.
parse_result parse_layer_settings(const std::vector<env_entry>& entries);

// Parses `environ`-style "NAME=value" strings (a NULL-terminated array), then as above.
parse_result parse_layer_settings_from_environ(const char* const* envp);

// Parses newline-separated "NAME=value" lines (no trailing newline needed), then as above: one
// string in, settings or errors out, for fuzzing. A line without '=' is an entry with an empty
// value, so "CLPOOL_LAYER_BUDGET" alone is reported as empty rather than ignored.
parse_result parse_layer_settings_text(std::string_view text);

// Grammar helpers, exposed for tests and fuzzing. Each returns the value or an error message that
// describes the problem (without naming a variable).

// Decimal digits only, no sign, no spaces, no overflow past 2^64-1.
struct u64_or_error {
  std::optional<std::uint64_t> value;
  std::string error;
};
u64_or_error parse_u64(std::string_view text);

// A byte size in the one size grammar of common/byte_size.h: "2GiB", "4096", "512MiB", "2g"
// (any case). Decimal units are refused: "2GB" is ambiguous (10^9 or 2^30). Must fit in 64 bits.
// The error quotes the value: "'2GB' is ambiguous: decimal units are not accepted; write 2GiB".
// `rules`: a device's size (at most 2^62 bytes), or more than zero (common/byte_size.h).
u64_or_error parse_byte_size(std::string_view text, common::size_rules rules = {});

// A probability written as a plain decimal number in [0, 1]: "0", "1", "0.25", ".5".
struct probability_or_error {
  std::optional<double> value;
  std::string error;
};
probability_or_error parse_probability(std::string_view text);

}  // namespace clpool::layer

#endif  // CLPOOL_LAYER_API_LAYER_SETTINGS_H_
