// MemoryPool.record_trace(path): a pool's requests as a clpool trace, with the project's rule for
// outputs: `path` is created, or replaced only when it is empty or a trace record_trace wrote
// (its second line is "# source: record_trace"); anything else raises FileExistsError and is left
// as it was. A character device or a FIFO (/dev/null) is written as it is. One recording per pool
// at a time: a second record_trace() before stop_trace() raises RuntimeError. The file is complete
// after stop_trace(), the end of a `with` block, the pool's destruction or the interpreter's exit
// (atexit), and readable after a crash: whole lines are written at least every flush_interval, and
// at once on stop.
#ifndef CLPOOL_PYTHON_TRACE_RECORDING_H_
#define CLPOOL_PYTHON_TRACE_RECORDING_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "pool/pool_types.h"

namespace clpool::python {

inline constexpr std::chrono::milliseconds trace_flush_interval{100};

// The second line of every trace record_trace writes.
inline constexpr char record_trace_marker[] = "# source: record_trace";

// One trace being written. Not thread-safe: the pool's observer calls run under the pool's lock,
// and start/stop run with the GIL held.
class trace_recording {
 public:
  trace_recording() = default;
  trace_recording(const trace_recording&) = delete;
  trace_recording& operator=(const trace_recording&) = delete;
  ~trace_recording();

  // Opens `path` under the rule above and returns the observer to install on the pool. Throws
  // std::logic_error while a recording is active, std::system_error: errc::file_exists for a file
  // that is not ours, else the OS error (errno). `stop` is what the interpreter's exit calls to
  // finish the file.
  std::shared_ptr<pool_observer> start(const std::string& path, std::function<void()> stop);

  // After the observer was removed from the pool: writes what is left and closes the file.
  // Returns the events recorded (0 when nothing was being recorded). Throws std::runtime_error
  // for a write error, naming the path.
  std::uint64_t finish();

  bool active() const noexcept { return impl_ != nullptr; }
  // Counts start() calls, so that a `with` block ends only its own recording.
  std::uint64_t generation() const noexcept { return generation_; }

 private:
  struct impl;
  std::shared_ptr<impl> impl_;  // shared with the pool, which holds it as its observer
  std::uint64_t generation_ = 0;
};

// Finishes every trace still being recorded (registered with atexit by clpool/__init__.py).
void stop_all_traces() noexcept;

}  // namespace clpool::python

#endif  // CLPOOL_PYTHON_TRACE_RECORDING_H_
