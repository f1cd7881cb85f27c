#include "common/output_file.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <vector>

namespace clpool::common {
namespace {

// stat() of a path, or of standard input/output for "-".
bool stat_of(const std::string& path, bool is_output, struct stat& st) {
  if (path == "-") return fstat(is_output ? STDOUT_FILENO : STDIN_FILENO, &st) == 0;
  return stat(path.c_str(), &st) == 0;
}

std::string dir_of(const std::string& p) {
  const std::size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

std::string base_of(const std::string& p) {
  const std::size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// The descriptor a path names by itself (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N),
// or -1. Such a path is a link the system follows to whatever the descriptor holds: for a file a
// shell opened (`>> log`), renaming a new file over it would drop what is there and cut off the
// descriptor's later writes.
int descriptor_named(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  const std::string prefixes[] = {"/dev/fd/", "/proc/self/fd/",
                                  "/proc/" + std::to_string(getpid()) + "/fd/"};
  for (const std::string& prefix : prefixes) {
    if (path.compare(0, prefix.size(), prefix) != 0 || path.size() == prefix.size()) continue;
    const std::string n = path.substr(prefix.size());
    if (n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoi(n);
  }
  return -1;
}

// The open descriptor writing `path` must go through, or -1: the one the path names, or standard
// output or error when the path is the regular file either is open on (a link to /dev/stdout, or
// the file the shell redirected it to). Written through a duplicate, the descriptor's offset and
// append mode hold: `--json /dev/stdout >> log` appends to log.
int descriptor_for(const std::string& path) {
  const int named = descriptor_named(path);
  struct stat st;
  if (named >= 0) return fstat(named, &st) == 0 ? named : -1;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat sf;
    if (fstat(fd, &sf) == 0 && sf.st_dev == st.st_dev && sf.st_ino == st.st_ino) return fd;
  }
  return -1;
}

// Writes every byte handed to it to a descriptor, through a 64 KiB buffer, and remembers the
// first error (errno) instead of losing it in an ostream's state bits.
class fd_buffer final : public std::streambuf {
 public:
  explicit fd_buffer(int fd) : fd_(fd), buf_(64 * 1024) {
    setp(buf_.data(), buf_.data() + buf_.size());
  }
  int error() const { return error_; }
  // Writes what is buffered; false (error() set) when the descriptor refused it.
  bool drain() {
    const char* p = pbase();
    std::size_t n = static_cast<std::size_t>(pptr() - pbase());
    setp(buf_.data(), buf_.data() + buf_.size());
    while (n > 0 && error_ == 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        error_ = w < 0 ? errno : EIO;
        break;
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
    return error_ == 0;
  }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  int fd_;
  std::vector<char> buf_;
  int error_ = 0;
};

// Where `path` would be written: its real path when it exists, else where its symlinks lead (a
// dangling link names a file to be created), its directory's real path and its name, so that
// "x.svg", "./x.svg" and a link to x.svg compare equal before any exists. "" when the directory
// does not exist either (writing there fails on its own, naming the flag).
std::string where_written(const std::string& given) {
  std::string path;
  try {
    path = resolve_output_path("", given);
  } catch (const output_error&) {
    return "";  // a loop: writing fails on its own
  }
  if (char* real = realpath(path.c_str(), nullptr)) {
    std::string out(real);
    free(real);
    return out;
  }
  char* dir = realpath(dir_of(path).c_str(), nullptr);
  if (dir == nullptr) return "";
  std::string out(dir);
  free(dir);
  return (out == "/" ? out : out + "/") + base_of(path);
}

std::string shown(const std::string& path, const char* std_name) {
  return path == "-" ? std::string(std_name) : "'" + path + "'";
}

}  // namespace

std::string resolve_output_path(const std::string& flag, const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops <= 40; ++hops) {
    struct stat st;
    // A link that leads somewhere is left to the system (realpath, open): that also covers
    // /dev/stdout's /proc links to a pipe. Only a dangling one is followed here, hop by hop.
    if (stat(p.c_str(), &st) == 0) return p;
    if (errno == ELOOP) break;
    if (lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::vector<char> target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 4095) + 1);
    const ssize_t n = readlink(p.c_str(), target.data(), target.size());
    if (n <= 0 || static_cast<std::size_t>(n) >= target.size())
      return p;  // changed under us: as given
    const std::string link(target.data(), static_cast<std::size_t>(n));
    p = link[0] == '/' ? link : dir_of(p) + "/" + link;
  }
  throw output_error(flag + ": '" + path + "': " + std::strerror(ELOOP));
}

void guard_standard_streams() {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // The wrong way round: reads of standard input and writes of the others fail (EBADF).
    const int opened = open("/dev/null", fd == STDIN_FILENO ? O_WRONLY : O_RDONLY);
    if (opened >= 0 && opened != fd) {
      dup2(opened, fd);
      close(opened);
    }
  }
}

void write_standard_output(std::string_view text) {
  check_standard_output();  // what stdio holds goes first, in order
  while (!text.empty()) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw output_error(std::string("standard output: cannot write: ") +
                         std::strerror(n < 0 ? errno : EIO));
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void check_standard_output() {
  // stdio first: std::cout, synchronised with stdio, flushes stdout itself and would take the
  // reason with it.
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  std::cout.flush();
  if (flushed && !std::ferror(stdout) && std::cout.good()) return;
  std::clearerr(stdout);
  std::cout.clear();
  throw output_error(std::string("standard output: cannot write: ") +
                     (!flushed && err != 0 ? std::strerror(err) : "an earlier write failed"));
}

bool standard_output_written(std::string_view tool) {
  try {
    check_standard_output();
    return true;
  } catch (const output_error& e) {
    std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(tool.size()), tool.data(), e.what());
    return false;
  }
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

void refuse_if_same_file(const std::string& flag, const std::string& output,
                         const std::vector<named_input>& inputs) {
  struct stat so;
  if (output.empty() || !stat_of(output, true, so) || !S_ISREG(so.st_mode)) return;
  for (const named_input& in : inputs) {
    struct stat si;
    if (in.path.empty() || !stat_of(in.path, false, si)) continue;
    if (si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
      const std::string out_name = output == "-" ? "standard output" : "'" + output + "'";
      const std::string in_name = in.path == "-" ? "standard input" : "'" + in.path + "'";
      throw output_error(flag + ": " + out_name + " is the same file as the input " + in_name +
                         " (" + in.flag + "); refusing to overwrite it");
    }
  }
}

void refuse_overlaps(const io_files& files) {
  for (std::size_t i = 0; i < files.outputs.size(); ++i) {
    const named_input& out = files.outputs[i];
    if (out.path.empty()) continue;
    refuse_if_same_file(out.flag, out.path, files.inputs);
    for (std::size_t j = 0; j < i; ++j) {
      const named_input& earlier = files.outputs[j];
      if (earlier.path.empty()) continue;
      bool same = false;
      if (out.path == "-" || earlier.path == "-") {
        same = out.path == earlier.path;
      } else {
        const std::string a = where_written(out.path), b = where_written(earlier.path);
        same =
            out.path == earlier.path || (!a.empty() && a == b) || same_file(out.path, earlier.path);
      }
      if (same) {
        throw output_error(out.flag + ": " + shown(out.path, "standard output") + " is also the " +
                           earlier.flag + " output; give them different files");
      }
    }
  }
}

void make_output_directory(const std::string& path, const std::string& flag) {
  const auto refuse = [&](const std::string& why) {
    throw output_error(flag + ": cannot make the directory '" + path + "': " + why);
  };
  if (path.empty()) refuse("the path is empty");
  if (::mkdir(path.c_str(), 0777) == 0) return;
  const int err = errno;
  struct stat st;
  if (err != EEXIST || ::lstat(path.c_str(), &st) != 0) refuse(std::strerror(err));
  if (S_ISLNK(st.st_mode)) refuse("a symbolic link is there (not followed)");
  if (!S_ISDIR(st.st_mode)) refuse("something other than a directory is there");
}

atomic_output_file::atomic_output_file(std::string path, std::string flag, output_rules rules)
    : path_(std::move(path)), target_(path_), flag_(std::move(flag)) {
  if (path_.empty()) fail("is empty", 0);
  struct stat st;
  if (rules.refuse_links && ::lstat(path_.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    fail("refusing to write through a symbolic link at", 0);
  }
  // Write where the links lead (the link is kept), also for a link to a file not yet written.
  if (!rules.refuse_links) target_ = resolve_output_path(flag_, path_);
  if (rules.regular_only && ::stat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    fail(S_ISDIR(st.st_mode) ? "cannot write" : "refusing to write, not a regular file:",
         S_ISDIR(st.st_mode) ? EISDIR : 0);
  }
  if (const int through = descriptor_for(path_); through >= 0 && !rules.regular_only) {
    // Standard output closed when the tool started is a read-only placeholder
    // (guard_standard_streams): writing it fails as writing standard output does.
    const int mode = fcntl(through, F_GETFL);
    if (mode < 0 || (mode & O_ACCMODE) == O_RDONLY) fail("cannot write", EBADF);
    if (through == STDOUT_FILENO) {
      std::fflush(stdout);  // what the tool wrote there before stays before (errors: the tool's
      std::cout.flush();    // own check of standard output reports them)
    }
    fd_ = fcntl(through, F_DUPFD_CLOEXEC, 0);
    if (fd_ < 0) fail("cannot open", errno);
    buf_ = std::make_unique<fd_buffer>(fd_);
    out_.rdbuf(buf_.get());
    return;
  }
  if (stat(target_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail("cannot write", EISDIR);
    if (!S_ISREG(st.st_mode)) {
      // A device, FIFO or socket: written in place (see the header).
      fd_ = open(target_.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd_ < 0) fail("cannot open", errno);
      buf_ = std::make_unique<fd_buffer>(fd_);
      out_.rdbuf(buf_.get());
      return;
    }
    if (char* real = realpath(target_.c_str(), nullptr)) {
      target_ = real;
      free(real);
    }
  }
  std::string templ = dir_of(target_) + "/." + base_of(target_) + ".tmpXXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  fd_ = mkostemp(buf.data(), O_CLOEXEC);
  if (fd_ < 0) fail("cannot create", errno);
  temp_ = buf.data();
  // mkstemp makes the file 0600; the output gets what a plain create would give it.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd_, 0666 & ~mask);
  buf_ = std::make_unique<fd_buffer>(fd_);
  out_.rdbuf(buf_.get());
}

atomic_output_file::~atomic_output_file() {
  if (!committed_) discard();
}

void atomic_output_file::discard() noexcept {
  out_.rdbuf(nullptr);
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (!temp_.empty()) unlink(temp_.c_str());
  temp_.clear();
}

void atomic_output_file::fail(const std::string& what, int err) {
  std::string msg = flag_ + ": " + what + " '" + path_ + "'";
  if (err != 0) msg += ": " + std::string(std::strerror(err));
  discard();
  committed_ = true;  // nothing left to clean up
  throw output_error(msg);
}

void atomic_output_file::commit() {
  if (committed_) return;
  auto& buf = static_cast<fd_buffer&>(*buf_);
  out_.flush();
  if (!buf.drain() || !out_) fail("cannot write", buf.error() != 0 ? buf.error() : EIO);
  if (temp_.empty()) {
    // In place: what the device does with a close is its answer too.
    const int fd = fd_;
    fd_ = -1;
    out_.rdbuf(nullptr);
    if (close(fd) != 0) fail("cannot write", errno);
    committed_ = true;
    return;
  }
  // fsync before rename: otherwise a power cut can leave the new name pointing at empty data.
  if (fsync(fd_) != 0) fail("cannot write", errno);
  const int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) fail("cannot write", errno);
  if (rename(temp_.c_str(), target_.c_str()) != 0) fail("cannot replace", errno);
  temp_.clear();
  out_.rdbuf(nullptr);
  committed_ = true;
}

}  // namespace clpool::common
