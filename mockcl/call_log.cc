#include "mockcl/call_log.h"

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
  if (file_ == nullptr) return "cannot open call log '" + path + "' for writing: " + std::strerror(errno);
  return "";
}

void call_recorder::close() noexcept {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
  memory_ = on_ = false;
}

void call_recorder::write(const std::string& line) {
  if (file_ != nullptr) {
    std::fputs(line.c_str(), file_);
    std::fputc('\n', file_);
    std::fflush(file_);
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
