// Small kindnesses of clpool_replay's command line: a "did you mean" for a mistyped flag, and
// relative paths taken from where `bazel run` was started.
//
//   suggest_option("--capcity", {"--capacity", "--compare"})   -> "--capacity"
//   under_working_directory("x.trace") with BUILD_WORKING_DIRECTORY=/home/me -> "/home/me/x.trace"
#ifndef CLPOOL_TOOLS_REPLAY_CLI_FIXES_H_
#define CLPOOL_TOOLS_REPLAY_CLI_FIXES_H_

#include <string>
#include <string_view>
#include <vector>

namespace clpool::replay {

// Levenshtein distance between two strings.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The name in `names` closest to `typed` (ignoring any "=VALUE" after it), or "" when none is
// close enough to be what was meant: at most 1 edit for names up to 3 characters, else at most
// a third of the name's length (at least 2).
std::string suggest_option(std::string_view typed, const std::vector<std::string>& names);

// `path` as the user meant it: when BUILD_WORKING_DIRECTORY is set (bazel run), a relative path
// is taken from that directory instead of the runfiles tree; "", "-" (stdin) and absolute paths
// are kept.
std::string under_working_directory(const std::string& path);

}  // namespace clpool::replay

#endif  // CLPOOL_TOOLS_REPLAY_CLI_FIXES_H_
