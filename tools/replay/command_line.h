// clpool_replay's command line: every flag, as typed, and nothing decided yet. main.cc
// validates it (plan), replays, and writes.
#ifndef CLPOOL_TOOLS_REPLAY_COMMAND_LINE_H_
#define CLPOOL_TOOLS_REPLAY_COMMAND_LINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pool/bins.h"
#include "tools/replay/output_writer.h"

namespace clpool::replay_cli {

struct command_line {
  std::string trace_path, rmm_path;
  std::string capacity_text, limit_text, trim_max_held_text, granule_text = "1MiB";
  std::string semantics_text;  // empty: the profile's
  std::string profile_text = "nvidia";
  bool profile_given = false;
  std::string device_text = "sim", mockcl_so, host_capacity_text, max_alloc_text;
  std::string write_trace_path, write_format = "text";
  bool write_format_given = false;
  // Every output, in the one grammar NAME[=FILE]: --format's values, then the aliases --html FILE,
  // --json and --svg FILE as the formats they stand for (paths taken from where `bazel run` began).
  std::vector<format_arg> formats;
  unsigned leading_bits = default_leading_bits;
  bool leading_bits_given = false, limit_given = false, trim_max_held_given = false,
       trim_ratio_given = false, granule_given = false;
  std::string trim_ratio_text;  // --trim-ratio, as typed
  bool no_pool = false, min_capacity = false, no_progress = false, force_progress = false,
       full_stacks = false;
  std::vector<std::string> compare;
  std::vector<std::string> library_frames;  // --library-frames patterns
  std::string frees_at;                     // --frees-at; empty: the device's profile decides
  std::size_t site_frames = 1;              // --site-frames
  bool peak = false;                        // --peak
  std::vector<std::string> diff_paths;      // --diff OLD NEW (diff_command.h)
  std::string max_growth_text;              // --max-growth, with --diff
  std::string trials_text;                  // --trials LO:HI:STEP
};

// Parses argv. Returns the exit code when parsing ends the run (--help: 0 after printing it; a
// malformed or mistyped flag: 2 after one "clpool_replay: error: ..." line on stderr, with the
// nearest flag when there is one). Relative paths are taken from where `bazel run` started.
std::optional<int> parse_command_line(int argc, char** argv, command_line& out);

// --trials LO:HI:STEP: the capacities LO, LO + STEP, ... up to HI (HI itself when STEP divides
// HI - LO), at most max_trials of them; common::usage_error naming the flag otherwise.
inline constexpr std::uint64_t max_trials = 10000;
std::vector<std::uint64_t> parse_trials(const std::string& text);

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_COMMAND_LINE_H_
