#include "python/trace_recording.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <ostream>
#include <streambuf>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "stacks/capture.h"
#include "trace/pool_recorder.h"
#include "trace/trace_writer.h"

namespace clpool::python {
namespace {

// A streambuf over a file descriptor: trace_writer buffers lines and hands whole chunks over, so
// each flush is one write(2) of complete lines.
class fd_streambuf final : public std::streambuf {
 public:
  explicit fd_streambuf(int fd) : fd_(fd) {}
  ~fd_streambuf() override { ::close(fd_); }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
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
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }
  int sync() override { return 0; }

 private:
  int fd_;
};

// An OS error as std::system_error with errno (OSError's subclasses in Python).
[[noreturn]] void throw_os_error(const std::string& path, const char* what) {
  const int err = errno;
  throw std::system_error(err, std::generic_category(),
                          "record_trace(\"" + path + "\"): " + what);
}

// Opens `path` for a new trace without destroying a file that is not one of ours.
int open_under_the_rule(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) throw_os_error(path, "cannot open");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    throw_os_error(path, "cannot stat");
  }
  // A character device or a pipe (/dev/null, a FIFO a reader drains): nothing there to destroy,
  // and nothing to truncate.
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return fd;
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::system_error(std::make_error_code(std::errc::invalid_argument),
                            "record_trace(\"" + path + "\"): not a regular file, a character "
                            "device or a FIFO");
  }
  // Ours with or without sites (version 2 or 1); both lines are the same length.
  const std::string ours = std::string("clpool-trace 2\n") + record_trace_marker + "\n";
  const std::string ours_v1 = std::string("clpool-trace 1\n") + record_trace_marker + "\n";
  if (st.st_size > 0) {
    std::string head(ours.size(), '\0');
    const ssize_t n = ::pread(fd, head.data(), head.size(), 0);
    if (n != static_cast<ssize_t>(head.size()) || (head != ours && head != ours_v1)) {
      ::close(fd);
      throw std::system_error(
          std::make_error_code(std::errc::file_exists),
          "record_trace(\"" + path + "\"): the file exists and is not a trace record_trace "
          "wrote: not overwriting it (remove it or choose another path)");
    }
  }
  if (::ftruncate(fd, 0) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    throw_os_error(path, "cannot truncate");
  }
  return fd;
}

std::mutex g_active_mutex;
std::unordered_map<trace_recording*, std::function<void()>>& active_traces() {
  static auto* table = new std::unordered_map<trace_recording*, std::function<void()>>();
  return *table;
}

}  // namespace

// The pool recorder, flushed at least every trace_flush_interval so that a crash leaves the
// trace readable up to then.
struct trace_recording::impl final : pool_observer {
  impl(int fd, const std::string& p)
      : buf(fd),
        stream(&buf),
        writer(stream, trace::trace_encoding::text, trace::sites_format_version),
        recorder(writer),
        path(p),
        sites(stacks::mode::python, {}, /*drop_self=*/false) {
    // The Python stack of each allocation: every pool call holds the GIL (README.md, "Threads
    // and the GIL"), and the recorder runs in it, on the allocating thread.
    recorder.set_site_source([this](trace::trace_writer& w) {
      stacks::definitions d;
      const std::uint64_t id = sites.capture(d);
      for (const auto& [fid, frame] : d.frames) w.write_frame(fid, frame);
      for (const auto& st : d.stacks) w.write_stack(st.id, st.parent, st.frame);
      return id;
    });
  }

  void on_event(const pool_event& event) noexcept override {
    recorder.on_event(event);
    const auto now = std::chrono::steady_clock::now();
    if (now - last_flush < trace_flush_interval || !recorder.error().empty()) return;
    last_flush = now;
    try {
      writer.flush();
    } catch (const std::exception& e) {
      if (flush_error.empty()) flush_error = e.what();
    }
  }

  fd_streambuf buf;
  std::ostream stream;
  trace::trace_writer writer;
  trace::pool_recorder recorder;
  std::string path;
  stacks::capturer sites;  // Python frames only: the program's code, not the pool's
  std::string flush_error;
  std::chrono::steady_clock::time_point last_flush = std::chrono::steady_clock::now();
};

trace_recording::~trace_recording() {
  std::lock_guard<std::mutex> guard(g_active_mutex);
  active_traces().erase(this);
}

std::shared_ptr<pool_observer> trace_recording::start(const std::string& path,
                                                      std::function<void()> stop) {
  if (impl_) {
    throw std::logic_error("record_trace(\"" + path + "\"): this pool is already recording to \"" +
                           impl_->path + "\"; call stop_trace() (or leave its with block) first");
  }
  const int fd = open_under_the_rule(path);
  auto made = std::make_shared<impl>(fd, path);
  made->writer.comment("source", "record_trace");
  made->writer.flush();  // the header now: a file cut short is still recognisably ours
  {
    std::lock_guard<std::mutex> guard(g_active_mutex);
    active_traces()[this] = std::move(stop);
  }
  impl_ = made;
  ++generation_;
  return made;
}

std::uint64_t trace_recording::finish() {
  {
    std::lock_guard<std::mutex> guard(g_active_mutex);
    active_traces().erase(this);
  }
  if (!impl_) return 0;
  std::shared_ptr<impl> done = std::move(impl_);
  const std::uint64_t events = done->recorder.events_recorded();
  std::string error = done->recorder.error();
  if (error.empty()) error = done->flush_error;
  if (error.empty()) {
    try {
      done->writer.commit();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (!error.empty()) throw std::runtime_error("record_trace(\"" + done->path + "\"): " + error);
  return events;
}

void stop_all_traces() noexcept {
  std::vector<std::function<void()>> stops;
  {
    std::lock_guard<std::mutex> guard(g_active_mutex);
    for (auto& [recording, stop] : active_traces()) stops.push_back(stop);
  }
  for (auto& stop : stops) {
    try {
      stop();
    } catch (...) {  // at exit there is nobody to tell; the file holds what was flushed
    }
  }
}

}  // namespace clpool::python
