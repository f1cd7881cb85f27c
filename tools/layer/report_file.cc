#include "tools/layer/report_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "layer_api/trace_path.h"

namespace clpool::layer {

report_file::~report_file() {
  if (fd_ >= 0) ::close(fd_);
}

std::string report_file::open(const std::string& path) {
  // Appending to a file that is not a report (a trace, a source file) would damage it.
  if (std::string refusal = report_path_refusal(path); !refusal.empty()) return refusal;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot open \"" + path + "\": " + std::strerror(errno);
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  return "";
}

void report_file::line(std::string_view text) noexcept {
  if (fd_ < 0) return;
  char buf[512];
  std::string_view out;
  std::string big;
  if (text.size() < sizeof buf) {  // the usual case: no allocation under the recorder's lock
    std::memcpy(buf, text.data(), text.size());
    buf[text.size()] = '\n';
    out = std::string_view(buf, text.size() + 1);
  } else {
    try {
      big.assign(text);
      big += '\n';
    } catch (...) {
      return;
    }
    out = big;
  }
  write_all(fd_, out);  // a failed write is dropped (the header says why)
}

bool write_all(int fd, std::string_view text) noexcept {
  while (!text.empty()) {
    const ssize_t w = ::write(fd, text.data(), text.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(w));
  }
  return true;
}

}  // namespace clpool::layer
