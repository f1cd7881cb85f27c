#include "python/trace_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace clpool::python {
namespace {

// An OS error as std::system_error with errno (OSError's subclasses in Python).
[[noreturn]] void throw_os_error(int err, const std::string& prefix, const char* what) {
  throw std::system_error(err, std::generic_category(), prefix + what);
}

[[noreturn]] void close_and_throw(int fd, const std::string& prefix, const char* what) {
  const int err = errno;
  ::close(fd);
  throw_os_error(err, prefix, what);
}

}  // namespace

int open_trace_output(const std::string& path, const std::string& marker, const std::string& who) {
  const std::string prefix = who + "(\"" + path + "\"): ";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) throw_os_error(errno, prefix, "cannot open");
  struct stat st {};
  if (::fstat(fd, &st) != 0) close_and_throw(fd, prefix, "cannot stat");
  // Nothing there to destroy, and nothing to truncate.
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return fd;
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::system_error(std::make_error_code(std::errc::invalid_argument),
                            prefix + "not a regular file, a character device or a FIFO");
  }
  // Ours with or without sites (version 2 or 1); both heads are the same length.
  const std::string ours = "clpool-trace 2\n" + marker + "\n";
  const std::string ours_v1 = "clpool-trace 1\n" + marker + "\n";
  if (st.st_size > 0) {
    std::string head(ours.size(), '\0');
    const ssize_t n = ::pread(fd, head.data(), head.size(), 0);
    if (n != static_cast<ssize_t>(head.size()) || (head != ours && head != ours_v1)) {
      ::close(fd);
      throw std::system_error(std::make_error_code(std::errc::file_exists),
                              prefix + "the file exists and is not a trace " + who +
                                  " wrote: not overwriting it (remove it or choose another path)");
    }
  }
  if (::ftruncate(fd, 0) != 0) close_and_throw(fd, prefix, "cannot truncate");
  return fd;
}

fd_streambuf::~fd_streambuf() {
  if (fd_ >= 0) ::close(fd_);
}

int fd_streambuf::close() {
  if (fd_ < 0) return 0;
  const int r = ::close(fd_);
  fd_ = -1;
  // Linux releases the descriptor even when close reports EINTR; nothing was lost then.
  return r == 0 || errno == EINTR ? 0 : errno;
}

std::streamsize fd_streambuf::xsputn(const char* s, std::streamsize n) {
  std::streamsize done = 0;
  while (done < n) {
    const ssize_t w = ::write(fd_, s + done, static_cast<std::size_t>(n - done));
    if (w < 0) {
      if (errno == EINTR) continue;
      return done;
    }
    done += w;
  }
  return done;
}

fd_streambuf::int_type fd_streambuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
}

}  // namespace clpool::python
