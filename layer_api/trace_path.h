// Where the layer may write its trace: the rule the layer applies when it opens the file and
// `clpool record` asks before it runs anything, so that both refuse the same paths in the same
// words. A file is the layer's when it begins with layer_header.
#ifndef CLPOOL_LAYER_API_TRACE_PATH_H_
#define CLPOOL_LAYER_API_TRACE_PATH_H_

#include <string>

namespace clpool::layer {

// How every trace the layer writes begins (trace/FORMAT.md's header and the layer's source line).
inline constexpr char layer_header[] = "clpool-trace 1\n# source: layer\n";
// The same with allocation sites (FORMAT.md version 2, the layer's before version 3) and what the
// layer writes now (version 3: the program's releases and waits, sites with CLPOOL_LAYER_STACKS):
// also the layer's.
inline constexpr char layer_header_v2[] = "clpool-trace 2\n# source: layer\n";
inline constexpr char layer_header_v3[] = "clpool-trace 3\n# source: layer\n";
// Version 4: also the first uses, when the layer charges blocks at first use (a budget and a
// profile whose device commits there).
inline constexpr char layer_header_v4[] = "clpool-trace 4\n# source: layer\n";
static_assert(sizeof layer_header == sizeof layer_header_v2);
static_assert(sizeof layer_header == sizeof layer_header_v3);
static_assert(sizeof layer_header == sizeof layer_header_v4);

// Whether the file open as `fd` (for reading) begins with one of the layer's headers.
bool starts_with_layer_header(int fd);

// The refusal for an existing file that is not the layer's: "\"x.csv\" exists and is not a trace
// the layer wrote: not overwriting it (remove it or choose another path)".
std::string not_a_layer_trace(const std::string& path);

// "" when the layer would write its trace at `path` (nothing there, an empty file, a trace the
// layer wrote, a device or FIFO), else not_a_layer_trace(path).
std::string trace_path_refusal(const std::string& path);

// Where the layer may append its report (CLPOOL_LAYER_REPORT, tools/layer/report_file.h): ""
// when nothing is there, an empty file, a device or FIFO, or a file whose first line is a report
// line (its first word alloc, first_use, injected or exit); else "\"t.trace\" exists and is not
// a report the layer wrote: not appending to it (remove it or choose another path)". Another
// file (a trace, a source file) is never appended to.
std::string report_path_refusal(const std::string& path);

}  // namespace clpool::layer

#endif  // CLPOOL_LAYER_API_TRACE_PATH_H_
