// The layer's report for a harness in another process (CLPOOL_LAYER_REPORT; clpool sweep): the
// program's fault points in the order they came, each fault the layer injected, and what the
// program still held when it exited. One line per write(2) to a file opened O_APPEND, so a line is
// whole in the file even when the program crashes right after it (tools/layer/README.md, "The
// report"):
//
//   alloc N BLOCK BYTES KIND STACK      each allocation attempt, N counting from 1 (FAIL_NTH's N)
//   first_use N BLOCK STACK CALL        each first use that charges a block (FAIL_FIRST_USE_NTH's)
//   injected alloc N BLOCK              the fault the layer injected there
//   injected first_use N BLOCK STACK CALL
//   exit live_blocks B live_bytes X     at exit: what the program still held
//
// BLOCK is the layer's id of the block (the trace's `id`), STACK its allocation's stack in the
// trace the same run writes (0: none recorded).
#ifndef CLPOOL_TOOLS_LAYER_REPORT_FILE_H_
#define CLPOOL_TOOLS_LAYER_REPORT_FILE_H_

#include <string>
#include <string_view>

namespace clpool::layer {

// Writes every byte of `text` to `fd`, through short writes and EINTR; false at the first
// failure. The layer's appends (the report, the errors file) go through it.
bool write_all(int fd, std::string_view text) noexcept;

class report_file {
 public:
  report_file() = default;
  ~report_file();
  report_file(const report_file&) = delete;
  report_file& operator=(const report_file&) = delete;

  // Opens `path` for appending (created if missing). Returns an error message, "" on success;
  // an existing file that is not a report is refused (layer_api/trace_path.h).
  std::string open(const std::string& path);
  bool is_open() const noexcept { return fd_ >= 0; }
  // Appends `text` and a newline; nothing when not open. A failed write is dropped: the report
  // is the harness's, and the program must run on as it would without it.
  void line(std::string_view text) noexcept;

 private:
  int fd_ = -1;
};

}  // namespace clpool::layer

#endif  // CLPOOL_TOOLS_LAYER_REPORT_FILE_H_
