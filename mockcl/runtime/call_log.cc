#include "mockcl/runtime/call_log.h"

#include <cerrno>
#include <cstring>

namespace mockcl {

std::string call_recorder::configure(const std::string& path) {
  close();
  args_.clear();
  if (path.empty()) return "";
  if (path == ":memory:") {
    memory_ = on_ = true;
    return "";
  }
  file_ = std::fopen(path.c_str(), "a");
  on_ = file_ != nullptr;
  if (file_ == nullptr)
    return "cannot open call log '" + path + "' for writing: " + std::strerror(errno);
  path_ = path;
  failed_ = false;
  return "";
}

void call_recorder::close() noexcept {
  if (file_ != nullptr && std::fclose(file_) != 0 && !failed_) report_failure(errno);
  file_ = nullptr;
  memory_ = on_ = false;
}

void call_recorder::report_failure(int error) noexcept {
  failed_ = true;
  std::fprintf(
      stderr, "mockcl: error: MOCKCL_CALL_LOG '%s': cannot write: %s; later calls are not logged\n",
      path_.c_str(), std::strerror(error));
}

void call_recorder::write(const std::string& line) {
  if (file_ != nullptr && !failed_) {
    // Each line whole and flushed, so a crash loses nothing written; a line that does not get
    // there (a full disk, /dev/full) is said once, on stderr, and the log stops.
    errno = 0;
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() ||
        std::fputc('\n', file_) == EOF || std::fflush(file_) != 0) {
      report_failure(errno != 0 ? errno : EIO);
    }
  }
  if (memory_ && lines_.size() < limit_) lines_.push_back(line);
}

void call_recorder::add_arg(const std::string& key_and_value) {
  if (!args_.empty()) args_ += ',';
  args_ += key_and_value;
}

std::string call_recorder::take_args() {
  std::string a;
  a.swap(args_);
  return a;
}

}  // namespace mockcl
