#include "tools/layer/trace_file_sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ext/stdio_filebuf.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <ostream>

#include "tools/trace/trace_writer.h"

namespace clpool::layer {
namespace {

// What every trace the layer writes begins with; a file that does not is never truncated.
constexpr char layer_header[] = "clpool-trace 1\n# source: layer\n";

// The open file: a stream on the descriptor (the writer writes through it).
struct trace_file {
  explicit trace_file(int fd) : buf(fd, std::ios::out | std::ios::binary), out(&buf) {}
  __gnu_cxx::stdio_filebuf<char> buf;  // closes fd
  std::ostream out;
};

// Opens `path` for the trace without creating a window in which an unrelated file is destroyed:
// created if missing; an existing regular file is truncated only when it is empty or a trace the
// layer wrote (it starts with layer_header). Devices and FIFOs are written as they are.
// Why not a temporary file renamed into place at the end, as clpool_replay does: the layer is
// never told when the program ends (it may _exit, abort or crash in the driver, and that run is
// the one worth recording), so there is no safe moment for the rename; the trace is instead
// flushed after every event, in place, so it is complete up to the crash.
int open_for_trace(const std::string& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    error = "cannot create \"" + path + "\": " + std::strerror(errno);
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    char head[sizeof layer_header - 1] = {};
    const int rfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    const ssize_t n = rfd < 0 ? -1 : pread(rfd, head, sizeof head, 0);
    if (rfd >= 0) ::close(rfd);
    if (n != static_cast<ssize_t>(sizeof head) || std::memcmp(head, layer_header, sizeof head) != 0) {
      ::close(fd);
      error = "\"" + path + "\" exists and is not a trace the layer wrote: not overwriting it "
              "(remove it or choose another path)";
      return -1;
    }
    if (ftruncate(fd, 0) != 0) {
      error = "cannot truncate \"" + path + "\": " + std::strerror(errno);
      ::close(fd);
      return -1;
    }
  }
  return fd;
}

class file_sink final : public event_sink {
 public:
  file_sink(std::unique_ptr<trace_file> file, std::unique_ptr<trace::trace_writer> writer)
      : file_(std::move(file)), writer_(std::move(writer)) {}

  bool write(const trace::trace_event& event) override {
    try {
      writer_->write(event);
      // Flush every event: ICD threads may still be running callbacks at exit, the program may
      // _exit or crash, and nothing destroys the recorder, so an unflushed buffer would be lost.
      writer_->flush();
      return true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "clpool_layer: error: %s\n", e.what());
      return false;
    }
  }

  bool comment(std::string_view key, std::string_view value) override {
    try {
      writer_->comment(key, value);
      writer_->flush();
      return true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "clpool_layer: error: %s\n", e.what());
      return false;
    }
  }

 private:
  std::unique_ptr<trace_file> file_;  // outlives writer_ (declared first)
  std::unique_ptr<trace::trace_writer> writer_;
};

}  // namespace

std::unique_ptr<event_sink> open_trace_file(const std::string& path, const layer_settings& settings,
                                            std::string& error) {
  const int fd = open_for_trace(path, error);
  if (fd < 0) return nullptr;
  try {
    auto file = std::make_unique<trace_file>(fd);
    auto writer = std::make_unique<trace::trace_writer>(file->out);
    writer->comment("source", "layer");
    if (settings.budget_bytes) writer->comment("budget", std::to_string(*settings.budget_bytes));
    if (settings.fail_nth) writer->comment("fail_nth", std::to_string(*settings.fail_nth));
    if (settings.fail_probability) {
      writer->comment("fail_prob", std::to_string(*settings.fail_probability));
      writer->comment("seed", std::to_string(settings.seed));
    }
    writer->flush();
    return std::make_unique<file_sink>(std::move(file), std::move(writer));
  } catch (const std::exception& e) {
    error = "cannot be written: " + std::string(e.what());
    return nullptr;
  }
}

}  // namespace clpool::layer
