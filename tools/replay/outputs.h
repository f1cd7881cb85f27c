// The files clpool_replay writes (--format NAME=FILE, --svg, --write-trace, and the report on
// standard output) never overwrite its input, and appear only complete (common/output_file.h).
#ifndef CLPOOL_TOOLS_REPLAY_OUTPUTS_H_
#define CLPOOL_TOOLS_REPLAY_OUTPUTS_H_

#include <functional>
#include <string>
#include <vector>

#include "common/output_file.h"

namespace clpool::replay_cli {

// An output file and how the user asked for it ("--svg", "--format json", "--write-trace").
// An empty path is no file (standard output, or an output not asked for).
struct named_output {
  std::string label;
  std::string path;
};

// Throws common::output_error (one line naming the flag) when an output is the same file as an
// input (any spelling, hard link or symlink), when two outputs name one file, or when standard
// output is an input (a shell's `>> trace`): common::refuse_overlaps over every file
// clpool_replay reads (`inputs`: the trace or CSV, a --profile file, --mockcl-so) and writes.
// Call before the first replay.
void refuse_clobbering(const std::vector<common::named_input>& inputs,
                       const std::vector<named_output>& outputs);

// Writes `text` to `path` through a temporary file renamed into place; errors name `flag`.
void write_text_file(const std::string& flag, const std::string& path, const std::string& text);

// Runs `write`, which renders and writes the output labelled `label`. If it throws, the error goes
// to standard error ("clpool_replay: error: LABEL: ...", without a second LABEL when the message
// already begins with it, as common/output_file's errors do) and the result is false: an output
// that cannot be written costs no other, and the caller exits 2 once every output was tried.
bool attempt_output(const std::string& label, const std::function<void()>& write);

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_OUTPUTS_H_
