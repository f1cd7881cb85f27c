// clpool_replay --write-trace: a trace, or an RMM CSV import, copied into another file and
// encoding (trace/FORMAT.md: the binary form carries the same events and rules as the text).
//
//   trace::trace_reader reader("run.trace", {.check_liveness = false});
//   copy_trace(reader, {.path = "run.bin",
//                       .encoding = trace::trace_encoding::binary,
//                       .version = reader.version(),
//                       .sites = true,
//                       .source = "clpool trace run.trace"});
//
// What is kept: every event; sites (stacks before the events that name them, frames at the end),
// when `sites`; the `first_uses` header of a version-4 trace; and every recorder's `# failure:`
// comment after its event (a refused first use, an alloc_failed's status: a size refusal is
// replayed otherwise than an out-of-memory), up to its first line break and 1024 bytes (what a
// binary metadata record holds). Other comments are not copied; a `# source:` comment names the
// input.
#ifndef CLPOOL_TOOLS_REPLAY_TRACE_COPY_H_
#define CLPOOL_TOOLS_REPLAY_TRACE_COPY_H_

#include <string>

#include "trace/rmm_import.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace clpool::replay_cli {

struct trace_copy_options {
  std::string path;  // written through a temporary file (trace_writer's "--write-trace" name)
  trace::trace_encoding encoding = trace::trace_encoding::text;
  // The input's format version (1 for an RMM CSV): version 3 and 4 stay so; otherwise the copy is
  // version 2 with sites and 1 without.
  unsigned version = trace::format_version;
  bool sites = false;  // the input has allocation sites, to be copied
  std::string source;  // the `# source:` comment's value
};

// Reads `source` to its end into the file. Throws trace_error for bad input and
// common::output_error when the file cannot be written (nothing is left at `path` then).
void copy_trace(trace::trace_reader& source, const trace_copy_options& options);
void copy_trace(trace::rmm_csv_reader& source, const trace_copy_options& options);

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_TRACE_COPY_H_
