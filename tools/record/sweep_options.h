// The command line of `clpool sweep`, parsed without touching the process or the file system, so
// every mistake is found before any run. See tools/record/README.md, "clpool sweep".
#ifndef CLPOOL_TOOLS_RECORD_SWEEP_OPTIONS_H_
#define CLPOOL_TOOLS_RECORD_SWEEP_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/sweep_rules.h"

namespace clpool::record {

// Which failure points a sweep tries.
enum class point_kinds { all, alloc, first_use };

// One failure point as the command line names it (common/sweep_rules.h: the names both sweeps
// give).
using point_id = common::sweep_point;

struct sweep_options {
  std::string profile = "nvidia";         // --profile: where and how the device fails
  point_kinds points = point_kinds::all;  // --points
  std::optional<double> timeout;          // --timeout SECONDS; nothing: from the fault-free run
  std::optional<std::string> check;  // --check PROGRAM: compares a run's output with the baseline
  std::uint64_t jobs = 1;            // -j N
  std::uint64_t shard_index = 0;     // --shard K/N: K - 1
  std::uint64_t shard_count = 1;
  std::optional<std::uint64_t> max_runs;  // --max-runs N: points sampled evenly
  std::uint64_t seed = 1;                 // --seed: where the even sample starts
  bool seed_given = false;                // --seed was typed (it needs --max-runs)
  bool points_given = false;              // --points was typed (--only takes none)
  std::string out = "clpool-sweep";       // --out DIR: every run's trace, report and output
  bool force = false;                     // --force: replace an earlier sweep's DIR
  std::optional<std::string> json;        // --json FILE ("-": standard output)
  std::optional<std::string> html;        // --html FILE
  std::optional<std::string> layer;       // --layer PATH
  std::optional<point_id> only;           // --only POINT: that one run (a report's replay command)
  bool gdb = true;                        // --no-gdb: no native stack of a crash
  bool until_free = false;                // --until-free: the device stays full after the failure
  std::vector<std::string> program;       // the program and its arguments
  bool help = false;
};

struct sweep_parse_outcome {
  std::optional<sweep_options> options;
  std::string error;  // one line naming the flag, when options is empty
};

// Parses the arguments after `clpool sweep`: flags (`--flag VALUE` or `--flag=VALUE`), then the
// program after `--` or at the first argument not starting with '-'.
sweep_parse_outcome parse_sweep_options(const std::vector<std::string>& args);

extern const char* const sweep_usage;

}  // namespace clpool::record

#endif  // CLPOOL_TOOLS_RECORD_SWEEP_OPTIONS_H_
