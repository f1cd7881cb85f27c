// The files clpool_replay writes (--svg, --write-trace, and the report on standard output) never
// overwrite its input, and appear only complete (common/output_file.h).
#ifndef CLPOOL_TOOLS_REPLAY_OUTPUTS_H_
#define CLPOOL_TOOLS_REPLAY_OUTPUTS_H_

#include <string>
#include <vector>

#include "common/output_file.h"

namespace clpool::replay {

struct output_paths {
  std::string svg;          // --svg, or empty
  std::string write_trace;  // --write-trace, or empty
};

// Throws common::output_error (one line naming the flag) when an output is the same file as an
// input (any spelling, hard link or symlink), when --svg and --write-trace name one file, or when
// standard output is an input (a shell's `>> trace`). Call before the first replay.
void refuse_clobbering(const std::vector<common::named_input>& inputs, const output_paths& out);

// Writes `text` to `path` through a temporary file renamed into place; errors name `flag`.
void write_text_file(const std::string& flag, const std::string& path, const std::string& text);

}  // namespace clpool::replay

#endif  // CLPOOL_TOOLS_REPLAY_OUTPUTS_H_
