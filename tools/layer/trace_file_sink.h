// The layer's event_sink that writes a clpool trace file (tools/trace/FORMAT.md).
#ifndef CLPOOL_TOOLS_LAYER_TRACE_FILE_SINK_H_
#define CLPOOL_TOOLS_LAYER_TRACE_FILE_SINK_H_

#include <memory>
#include <string>

#include "tools/layer/layer_settings.h"
#include "tools/layer/recorder.h"

namespace clpool::layer {

// Creates `path` (or truncates it if it is empty or a trace the layer wrote: any other existing
// regular file is refused, never truncated), writes the header and `# key: value` metadata describing `settings`,
// and returns a sink that appends one event per line and flushes after each, so the trace is
// complete however the program ends (exit, _exit, abort, a crash in the driver). Returns null and
// sets `error` (a sentence naming the path and the OS error) when the file cannot be written.
std::unique_ptr<event_sink> open_trace_file(const std::string& path, const layer_settings& settings,
                                            std::string& error);

}  // namespace clpool::layer

#endif  // CLPOOL_TOOLS_LAYER_TRACE_FILE_SINK_H_
