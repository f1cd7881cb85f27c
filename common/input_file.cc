#include "common/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/byte_size.h"

namespace clpool::common {
namespace {

// Reads until `stop(text)` or end of input or more than `max_bytes`; false with `error` set.
template <class Stop>
bool read_until(const std::string& path, std::size_t max_bytes, std::string& text,
                std::string& error, Stop stop) {
  // O_NONBLOCK: opening a FIFO with no writer would block; reads are made blocking again below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    error = "is a directory";
    return false;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  char buf[4096];
  for (;;) {
    const std::size_t want = std::min(sizeof buf, max_bytes + 1 - text.size());
    const ssize_t n = ::read(fd, buf, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (stop(text)) break;
    if (text.size() > max_bytes) {
      ::close(fd);
      error = "larger than " + format_bytes(max_bytes);
      return false;
    }
  }
  ::close(fd);
  return true;
}

}  // namespace

std::optional<std::string> read_bounded(const std::string& path, std::size_t max_bytes,
                                        std::string& error) {
  std::string text;
  if (!read_until(path, max_bytes, text, error, [](const std::string&) { return false; }))
    return std::nullopt;
  return text;
}

std::optional<std::string> read_first_line(const std::string& path, std::size_t max_bytes,
                                           std::string& error) {
  std::string text;
  const auto has_line = [max_bytes](const std::string& t) { return t.find('\n') <= max_bytes; };
  if (!read_until(path, max_bytes, text, error, has_line)) {
    if (error.rfind("larger than ", 0) == 0)
      error = "its first line is longer than " + format_bytes(max_bytes);
    return std::nullopt;
  }
  const std::size_t nl = text.find('\n');
  if (nl != std::string::npos) text.resize(nl);
  return text;
}

std::string reread_input_refusal(const std::string& path) {
  if (path.find('\0') != std::string::npos) return "holds a NUL byte: no file is named so";
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "";
  const char* why =
      "can be read only once, and the replay reads its trace more than once; give a file";
  if (S_ISDIR(st.st_mode)) return "is a directory, not a trace";
  if (S_ISFIFO(st.st_mode)) return std::string("is a FIFO (a named pipe): it ") + why;
  if (S_ISSOCK(st.st_mode)) return std::string("is a socket: it ") + why;
  return "";
}

}  // namespace clpool::common
