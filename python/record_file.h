// clpool.record's trace file (python/clpool/record.py): record.py decides what happened and when
// (which buffer died, at what time, on which thread); the file's form is the trace module's
// (trace_writer: the header, FORMAT.md's escaping of frame names), the Python stacks are captured
// and interned as the OpenCL layer's are (stacks::capturer, without record.py's own frames), and
// an existing file is replaced under the extension's one rule (python/trace_output.h; the marker
// "# source: clpool.record").
//
// Python: clpool._core._RecordFile(path, stacks, allocator) with write(), flush(), close().
// Not thread-safe: record.py calls it under its lock, with the GIL held.
#ifndef CLPOOL_PYTHON_RECORD_FILE_H_
#define CLPOOL_PYTHON_RECORD_FILE_H_

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "trace/trace_event.h"

namespace clpool::python {

// The second line of every trace clpool.record writes.
inline constexpr char record_marker[] = "# source: clpool.record";

class record_file {
 public:
  // Opens `path` under the rule and writes the header (version 2 with stacks, else 1) and
  // "# allocator: `allocator`". `skip_file`: record.py's __file__, whose frames are not recorded.
  // Throws std::system_error as open_trace_output does.
  record_file(const std::string& path, bool stacks, const std::string& allocator,
              const std::string& skip_file);
  ~record_file();
  record_file(const record_file&) = delete;
  record_file& operator=(const record_file&) = delete;

  // Writes `e`; with `with_stack` (and stacks on), the calling thread's Python stack is
  // captured and becomes e.stack, its new frames and stacks written first. Throws
  // std::logic_error once closed, std::invalid_argument for an event the format refuses.
  void write(trace::trace_event e, bool with_stack);

  // Writes what is buffered; std::runtime_error naming the path for a write error.
  void flush();

  // flush(), then closes the file; later calls do nothing.
  void close();

 private:
  struct state;
  std::string path_;
  std::unique_ptr<state> state_;
};

void bind_record_file(pybind11::module_& m);

}  // namespace clpool::python

#endif  // CLPOOL_PYTHON_RECORD_FILE_H_
