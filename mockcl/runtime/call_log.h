// call_recorder: the JSON-lines call log (MOCKCL_CALL_LOG): a file (appended and flushed line by
// line, so a crash loses nothing written; a line that cannot be written is reported once on stderr
// and the log stops) or ":memory:" (kept for accounting_snapshot::call_log, at most `limit` lines),
// and the arguments of the call being logged. Not thread-safe: the runtime's lock is held.
#ifndef MOCKCL_RUNTIME_CALL_LOG_H_
#define MOCKCL_RUNTIME_CALL_LOG_H_

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace mockcl {

class call_recorder {
 public:
  explicit call_recorder(std::size_t limit) : limit_(limit) {}
  ~call_recorder() { close(); }
  call_recorder(const call_recorder&) = delete;
  call_recorder& operator=(const call_recorder&) = delete;

  // Logs to `path` ("" off, ":memory:" in memory); "" on success, else why the file could not be
  // opened (the log is then off).
  std::string configure(const std::string& path);

  // Whether lines are written: cached, as every entry point asks on its hot path.
  bool on() const noexcept { return on_; }
  void write(const std::string& line);
  const std::vector<std::string>& lines() const noexcept { return lines_; }
  void clear_lines() noexcept { lines_.clear(); }

  // The current call's logged arguments, `"key":value` pairs joined by ','.
  void add_arg(const std::string& key_and_value);
  // Returns the arguments and empties them for the next call.
  std::string take_args();

 private:
  void close() noexcept;
  void report_failure(int error) noexcept;

  std::size_t limit_;
  std::string path_;
  bool failed_ = false;  // a write failed and was reported
  bool on_ = false;      // file_ || memory_
  std::FILE* file_ = nullptr;
  bool memory_ = false;
  std::vector<std::string> lines_;
  std::string args_;
};

}  // namespace mockcl

#endif  // MOCKCL_RUNTIME_CALL_LOG_H_
