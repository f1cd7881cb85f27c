// clpool_replay --diff OLD NEW, the command line over the engine's diff (replay/diff.h): checks the
// command line, replays both traces with the command line's device and configurations, and writes
// the diff as text (diff_text, here) or as the engine's JSON document (diff_json). The model, the
// --max-growth gate and the JSON live in replay/ so that Python's clpool.replay.diff returns the
// same document.
#ifndef CLPOOL_TOOLS_REPLAY_DIFF_COMMAND_H_
#define CLPOOL_TOOLS_REPLAY_DIFF_COMMAND_H_

#include <cstddef>
#include <functional>
#include <string>

#include "replay/diff.h"
#include "tools/replay/command_line.h"
#include "tools/replay/output_writer.h"

namespace clpool::replay_cli {

// The diff as clpool_replay's text: both traces, the device, each configuration's table row, the
// `top_sites` sites that grew and shrank most with their callers, and the gate's verdict.
std::string diff_text(const replay::diff_result& d, std::size_t top_sites = 5);

// The whole of `clpool_replay --diff OLD NEW`: checks the command line (no other input, no
// --capacity, only text and json outputs, no output onto an input), replays both traces with
// `replay`, writes the outputs, and returns the exit status (0; 1 when --max-growth is exceeded).
// `replay` returns what clpool_replay would report for one trace (main.cc: the unbounded replay
// and the --min-capacity search of every configuration). Throws common::usage_error for a bad
// command line.
int run_diff(const command_line& cl, const std::function<run_output(const std::string&)>& replay);

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_DIFF_COMMAND_H_
