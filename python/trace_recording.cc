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

#include "python/trace_output.h"
#include "stacks/capture.h"
#include "trace/pool_recorder.h"
#include "trace/trace_writer.h"

namespace clpool::python {
namespace {

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
  const int fd = open_trace_output(path, record_trace_marker, "record_trace");
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
  if (const int err = done->buf.close(); err != 0 && error.empty()) {
    error = std::string("close failed: ") + std::strerror(err);
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
