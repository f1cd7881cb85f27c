// The command-line conventions every clpool tool shares (ARCHITECTURE.md, "Errors"): exit codes,
// the usage error, "did you mean" for a mistyped flag or command, one-line parse errors, and
// relative paths taken from where `bazel run` was started.
//
//   unknown_option("--capcity", {"--capacity", "--compare"}, "clpool_replay --help")
//       -> "unknown option '--capcity'; did you mean --capacity? (see clpool_replay --help)"
//   under_working_directory("x.trace") with BUILD_WORKING_DIRECTORY=/home/me -> "/home/me/x.trace"
#ifndef CLPOOL_COMMON_CLI_H_
#define CLPOOL_COMMON_CLI_H_

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/byte_size.h"

namespace clpool::common {

// Exit codes. Every tool: 0 when it did what was asked; 2 for bad usage or bad input, with
// nothing written. What 1 means is the tool's finding (clpool_replay: an out-of-memory was
// reproduced; clpool_probe: the measurement is incomplete). clpool record exits with its
// program's status, and 127 when the program cannot be run, as a shell does.
inline constexpr int exit_ok = 0;
inline constexpr int exit_finding = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_cannot_run = 127;

// A usage or input problem, found before anything was written: the tool prints
// "TOOL: error: WHAT" on one line and exits with exit_usage.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Levenshtein distance between two strings.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The name in `names` closest to `typed` (ignoring any "=VALUE" after it), or "" when none is
// close enough to be what was meant: at most 1 edit for names up to 3 characters, else at most
// a third of the name's length (at least 2).
std::string suggest_option(std::string_view typed, const std::vector<std::string>& names);

// "unknown option '--capcity'; did you mean --capacity? (see HELP)"; a `typed` that does not
// start with '-' is called a command. The suggestion is left out when none is close.
std::string unknown_option(std::string_view typed, const std::vector<std::string>& names,
                           std::string_view help);

// The one wording of each command-line mistake, for every tool (the CLI11 adapter, cli11.h, and
// clpool record's own parser):
//   given_twice("--out")                   -> "--out: given twice"  (given_twice("--out", 3): "3
//   times") needs_value("--budget")                -> "--budget: needs a value"
//   unexpected_argument("b.trace", "--help") -> "unexpected argument 'b.trace' (see --help)"
std::string given_twice(std::string_view flag, std::size_t times = 2);
std::string needs_value(std::string_view flag);
std::string unexpected_argument(std::string_view argument, std::string_view help);

// A size typed on the command line, in the one grammar (byte_size.h) with `rules`: its value, or
// usage_error "FLAG: 'TEXT' WHY" ("FLAG: must be positive, got 'TEXT'" for a zero). The throwing
// adapter every tool's flags use (clpool_replay, clpool_probe, Python's clpool.replay).
std::uint64_t size_option(std::string_view text, std::string_view flag, size_rules rules = {});

// "TOOL: error: MESSAGE" as one line that shows on a terminal as written: the message's control
// characters (a newline or an escape sequence in a path the user typed, a driver's string) as
// escape_text writes them ("\x0A"), so an error can neither span lines nor drive the terminal.
std::string error_line(std::string_view tool, std::string_view message);

// Prints error_line(tool, message) to standard error and returns exit_usage.
int report_usage_error(std::string_view tool, std::string_view message);

// `path` as the user meant it: when BUILD_WORKING_DIRECTORY is set (bazel run), a relative path
// is taken from that directory instead of the runfiles tree; "", "-" (stdin) and absolute paths
// are kept.
std::string under_working_directory(const std::string& path);

}  // namespace clpool::common

#endif  // CLPOOL_COMMON_CLI_H_
