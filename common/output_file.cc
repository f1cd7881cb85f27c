#include "common/output_file.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

// Where `path` would be written: its real path when it exists, else its directory's real path and
// its name, so that "x.svg" and "./x.svg" compare equal before either exists. "" when the
// directory does not exist either (writing there fails on its own, naming the flag).
std::string where_written(const std::string& path) {
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
        same = out.path == earlier.path || (!a.empty() && a == b) || same_file(out.path, earlier.path);
      }
      if (same) {
        throw output_error(out.flag + ": " + shown(out.path, "standard output") + " is also the " + earlier.flag +
                           " output; give them different files");
      }
    }
  }
}

atomic_output_file::atomic_output_file(std::string path, std::string flag)
    : path_(std::move(path)), target_(path_), flag_(std::move(flag)) {
  if (path_.empty()) fail("is empty", 0);
  struct stat st;
  if (stat(path_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail("cannot write", EISDIR);
    if (!S_ISREG(st.st_mode)) {
      // A device, FIFO or socket: written in place (see the header).
      out_.open(path_, std::ios::binary | std::ios::out);
      if (!out_) fail("cannot open", errno);
      return;
    }
    // Replace a symlink's target, not the link.
    if (char* real = realpath(path_.c_str(), nullptr)) {
      target_ = real;
      free(real);
    }
  }
  std::string templ = dir_of(target_) + "/." + base_of(target_) + ".tmpXXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  fd_ = mkstemp(buf.data());
  if (fd_ < 0) fail("cannot create", errno);
  temp_ = buf.data();
  // mkstemp makes the file 0600; the output gets what a plain create would give it.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd_, 0666 & ~mask);
  out_.open(temp_, std::ios::binary | std::ios::out | std::ios::trunc);
  if (!out_) fail("cannot open", errno);
}

atomic_output_file::~atomic_output_file() {
  if (committed_) return;
  out_.close();
  if (fd_ >= 0) close(fd_);
  if (!temp_.empty()) unlink(temp_.c_str());
}

void atomic_output_file::fail(const std::string& what, int err) {
  std::string msg = flag_ + ": " + what + " '" + path_ + "'";
  if (err != 0) msg += ": " + std::string(std::strerror(err));
  if (!temp_.empty()) {
    out_.close();
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    unlink(temp_.c_str());
    temp_.clear();
  }
  committed_ = true;  // nothing left to clean up
  throw output_error(msg);
}

void atomic_output_file::commit() {
  if (committed_) return;
  out_.flush();
  if (!out_) fail("cannot write", errno);
  out_.close();
  if (out_.fail()) fail("cannot write", errno);
  if (temp_.empty()) {
    committed_ = true;
    return;
  }
  // fsync before rename: otherwise a power cut can leave the new name pointing at empty data.
  if (fsync(fd_) != 0) fail("cannot write", errno);
  close(fd_);
  fd_ = -1;
  if (rename(temp_.c_str(), target_.c_str()) != 0) fail("cannot replace", errno);
  temp_.clear();
  committed_ = true;
}

}  // namespace clpool::common
