// The command line of `clpool record`, parsed without touching the process or the file system, so
// every mistake is found before the program runs. See tools/record/README.md.
#ifndef CLPOOL_TOOLS_RECORD_RECORD_OPTIONS_H_
#define CLPOOL_TOOLS_RECORD_RECORD_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace clpool::record {

inline constexpr const char* default_trace_path = "clpool.trace";

struct record_options {
  std::optional<std::uint64_t> budget_bytes;  // --budget: simulated device memory
  std::optional<std::string> profile;         // --profile: a built-in name or a profile file
  std::string out = default_trace_path;       // --out: where the layer writes the trace
  bool force = false;                         // --force: replace an earlier trace at --out
  std::optional<std::string> layer;           // --layer: libclpool_layer.so, else found
  std::string stacks = "all";                 // --stacks: none, native, python or all
  std::vector<std::string> program;           // the program and its arguments
  bool help = false;                          // --help: print usage, run nothing
};

struct parse_outcome {
  std::optional<record_options> options;
  std::string error;  // one line naming the flag, when options is empty
};

// Parses the arguments after `clpool record`: flags (`--flag VALUE` or `--flag=VALUE`), then the
// program, after `--` or at the first argument not starting with '-'. Sizes use the one size
// grammar (common/byte_size.h); a profile is loaded (device_model/profile.h) to check it. A
// mistyped flag gets "did you mean".
parse_outcome parse_record_options(const std::vector<std::string>& args);

// `clpool record --help`.
extern const char* const record_usage;

}  // namespace clpool::record

#endif  // CLPOOL_TOOLS_RECORD_RECORD_OPTIONS_H_
