// What every trace the extension writes shares (MemoryPool.record_trace, python/trace_recording.h,
// and clpool.record, python/record_file.h): the rule for a file already at the path, and a
// streambuf over the descriptor, so that the file is readable up to the last flush after a crash.
//
// The rule: `path` is created, or replaced only when it is empty or begins with the first two
// lines this writer writes ("clpool-trace 1" or "clpool-trace 2", then `marker`, e.g. "# source:
// record_trace"); anything else is left as it was. A character device or a FIFO (/dev/null, a
// pipe a reader drains) is written as it is.
#ifndef CLPOOL_PYTHON_TRACE_OUTPUT_H_
#define CLPOOL_PYTHON_TRACE_OUTPUT_H_

#include <streambuf>
#include <string>

namespace clpool::python {

// Opens `path` under the rule and returns the descriptor, truncated (a regular file). Throws
// std::system_error: errc::file_exists for a file that is not such a trace, errc::invalid_argument
// for something that is neither a regular file, a character device nor a FIFO, else the OS error.
// `who` begins every message: `who("path"): ...`.
int open_trace_output(const std::string& path, const std::string& marker, const std::string& who);

// A streambuf over a file descriptor, which it owns: trace_writer buffers lines and hands whole
// chunks over, so each flush is one write(2) of complete lines.
class fd_streambuf final : public std::streambuf {
 public:
  explicit fd_streambuf(int fd) : fd_(fd) {}
  ~fd_streambuf() override;  // closes the descriptor unless close() did

  // Closes the descriptor now: 0, or the errno of a close that failed (a write the kernel could
  // not finish, as on NFS); a writer checks it as it checks its writes.
  int close();
  fd_streambuf(const fd_streambuf&) = delete;
  fd_streambuf& operator=(const fd_streambuf&) = delete;

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int_type overflow(int_type c) override;
  int sync() override { return 0; }

 private:
  int fd_;
};

}  // namespace clpool::python

#endif  // CLPOOL_PYTHON_TRACE_OUTPUT_H_
