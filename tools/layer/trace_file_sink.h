// The layer's event_sink that writes a clpool trace file (trace/FORMAT.md).
//
// Nothing orderly happens when a recorded program ends: it may return from main, call exit() on
// any thread, _exit, abort, crash, be killed with SIGKILL, or have driver threads still running
// destructor callbacks during static destruction. The trace must hold every event recorded before
// any of these, yet one write(2) per event cost more than the allocations being recorded. So a
// regular file is written through a shared memory map of the file itself: an event is formatted
// straight into pages the kernel owns, and survives the process however it dies. The file grows
// in chunks (chunk_bytes) allocated with posix_fallocate, so a full disk is an error at growth
// rather than a SIGBUS on a page; until a clean exit trims it, the file therefore ends in a
// zero-filled tail, which the trace reader ignores (FORMAT.md, "Clarifications").
//
// Why no signal handlers: they could trim the tail after abort or a crash signal, but nothing can
// after _exit or SIGKILL, so the reader has to tolerate the tail anyway; and a layer that observes
// someone else's program must not change how it crashes (its own handlers, Python's faulthandler,
// a JVM's, ASan's).
#ifndef CLPOOL_TOOLS_LAYER_TRACE_FILE_SINK_H_
#define CLPOOL_TOOLS_LAYER_TRACE_FILE_SINK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "layer_api/layer_settings.h"
#include "layer_api/trace_path.h"  // trace_path_refusal: the rule open_trace_file applies
#include "tools/layer/recorder.h"

namespace clpool::layer {

// How much the mapped file grows at a time. Every chunk costs one posix_fallocate and one mmap;
// the zero-filled tail left by a crash is at most this long.
inline constexpr std::uint64_t trace_chunk_bytes = std::uint64_t{1} << 20;

// Creates `path` (or truncates it if it is empty or a trace the layer wrote: any other existing
// regular file is refused, never truncated), writes the header and `# key: value` metadata
// describing `settings`, and returns a sink whose events are in the file as soon as write()
// returns, however the program ends afterwards. A regular file is written through a memory map
// (above); a device or FIFO, or a file that cannot be mapped, with one write(2) per event. Returns
// null and sets `error` (a sentence naming the path and the OS error) when the file cannot be
// written.
std::unique_ptr<event_sink> open_trace_file(const std::string& path, const layer_settings& settings,
                                            std::string& error);

}  // namespace clpool::layer

#endif  // CLPOOL_TOOLS_LAYER_TRACE_FILE_SINK_H_
