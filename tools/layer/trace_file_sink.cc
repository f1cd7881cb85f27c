#include "tools/layer/trace_file_sink.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <ostream>
#include <streambuf>
#include <string_view>

#include "common/text_escape.h"
#include "layer_api/trace_path.h"
#include "trace/trace_writer.h"

namespace clpool::layer {
namespace {

#ifdef MADV_POPULATE_WRITE
constexpr int madvise_populate_write = MADV_POPULATE_WRITE;
#else
constexpr int madvise_populate_write = 23;  // Linux 5.14; older glibc headers lack the name
#endif

// Counts the fork()s that led to this process. A child shares its parent's file (and memory
// map), so an event it wrote would land in the middle of the parent's trace, and its exit would
// trim the parent's file: a sink opened in another generation records nothing (driver threads do
// not survive fork anyway; what still reaches the layer in a child are releases of inherited
// objects, e.g. a forked Python worker's garbage collection). A load per event, unlike getpid(),
// which is a system call.
std::atomic<std::uint64_t> fork_generation{0};

void note_fork_in_child() { fork_generation.fetch_add(1, std::memory_order_relaxed); }

// The bytes of the trace. ostream::write() (trace_writer's flush) lands in xsputn(), and the
// writer's flush() after each event in sync(), which marks everything written so far as complete.
// Mapped: the bytes go into a shared map of [window_offset_, window_offset_ + trace_chunk_bytes)
// of the file, and the kernel owns them from then on. Direct: each write is a write(2).
class trace_output final : public std::streambuf {
 public:
  trace_output(int fd, pid_t owner) : fd_(fd), owner_(owner) {}

  ~trace_output() override {
    leave_map();
    ::close(fd_);
  }

  // Maps the first chunk; false (errno set) leaves the output direct.
  bool map_first_chunk() { return map_window(0); }

  // From now on, write(2) each event: trims the file to the complete events and unmaps it. At
  // exit (after this nothing could trim a mapped file's tail) and when the output is destroyed.
  void leave_map() noexcept {
    if (window_ == nullptr) return;
    ::munmap(window_, trace_chunk_bytes);
    window_ = nullptr;
    // A fork child must not trim the parent's file (it never wrote to it: see fork_generation).
    if (getpid() != owner_) return;
    if (::ftruncate(fd_, static_cast<off_t>(complete_)) != 0 ||
        ::lseek(fd_, static_cast<off_t>(complete_), SEEK_SET) < 0) {
      failed_ = true;  // the file ends in zeros, which readers ignore; later events are lost
    }
    pos_ = complete_;
  }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (failed_) return 0;
    if (window_ == nullptr) return write_direct(s, static_cast<std::size_t>(n)) ? n : 0;
    std::size_t left = static_cast<std::size_t>(n);
    while (left > 0) {
      if (pos_ == window_offset_ + trace_chunk_bytes && !map_window(pos_)) {
        fail_mapped();
        return n - static_cast<std::streamsize>(left);
      }
      const std::size_t room = static_cast<std::size_t>(window_offset_ + trace_chunk_bytes - pos_);
      const std::size_t k = left < room ? left : room;
      std::memcpy(window_ + (pos_ - window_offset_), s, k);
      pos_ += k;
      s += k;
      left -= k;
    }
    return n;
  }

  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char byte = traits_type::to_char_type(c);
    return xsputn(&byte, 1) == 1 ? c : traits_type::eof();
  }

  int sync() override {
    if (failed_) return -1;
    complete_ = pos_;
    return 0;
  }

 private:
  // Maps the chunk at file offset `offset` (a multiple of trace_chunk_bytes, = pos_), allocating
  // its blocks first, and unmaps the previous one: its bytes are in the page cache.
  bool map_window(std::uint64_t offset) {
    const int error =
        ::posix_fallocate(fd_, static_cast<off_t>(offset), static_cast<off_t>(trace_chunk_bytes));
    if (error != 0) {
      errno = error;
      return false;
    }
    void* p = ::mmap(nullptr, trace_chunk_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                     static_cast<off_t>(offset));
    if (p == MAP_FAILED) return false;
    // One page fault per 4 KiB written (ext4 tracks each page's first write) cost a third of the
    // recording time; populating the chunk's page tables for writing in one call avoids them.
    // Kernels before 5.14 refuse it (EINVAL), and then the pages fault one by one as before.
    ::madvise(p, trace_chunk_bytes, madvise_populate_write);
    if (window_ != nullptr) ::munmap(window_, trace_chunk_bytes);
    window_ = static_cast<char*>(p);
    window_offset_ = offset;
    return true;
  }

  // The file could not grow (disk full, say): keep what is complete, as a valid trace.
  void fail_mapped() {
    const int saved = errno;
    leave_map();
    failed_ = true;
    errno = saved;
  }

  bool write_direct(const char* s, std::size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd_, s, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        failed_ = true;
        return false;
      }
      s += w;
      n -= static_cast<std::size_t>(w);
      pos_ += static_cast<std::uint64_t>(w);
    }
    return true;
  }

  const int fd_;
  const pid_t owner_;
  char* window_ = nullptr;
  std::uint64_t window_offset_ = 0;  // file offset of window_[0]
  std::uint64_t pos_ = 0;            // file offset of the next byte
  std::uint64_t complete_ = 0;       // file bytes before this are whole events (or the header)
  bool failed_ = false;
};

// Opens `path` for the trace without creating a window in which an unrelated file is destroyed:
// created if missing; an existing regular file is truncated only when it is empty or a trace the
// layer wrote (it starts with layer_header). Devices and FIFOs are written as they are.
// Why not a temporary file renamed into place at the end, as clpool_replay does: the layer is
// never told when the program ends (it may _exit, abort or crash in the driver, and that run is
// the one worth recording), so there is no safe moment for the rename; the trace is instead
// written in place, and every event is in the file when the call that caused it returns.
// Sets `regular` when the result may be memory-mapped (a regular file opened for reading too).
// Whether the layer's trace open as `fd` holds an event: a line after the header that is not a
// comment (`# key: value`, written when a process starts, before anything happens). A process
// that only listed the platforms leaves none, and the trace is not its to keep. What lies past
// the first 64 KiB counts as events (comments never fill that much).
bool holds_events(int fd) {
  char buf[64 * 1024];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  if (n <= 0) return false;
  const std::string_view text(buf, static_cast<std::size_t>(n));
  std::size_t at = text.find('\n');  // past the header line
  while (at != std::string_view::npos && at + 1 < text.size()) {
    const char c = text[at + 1];
    if (c == '\0') return false;  // the zero-filled tail of a mapped chunk: nothing more
    if (c != '#') return true;
    at = text.find('\n', at + 1);
  }
  return at == std::string_view::npos && static_cast<std::size_t>(n) == sizeof buf;
}

// Opens `path` for the trace. -1 with `error` set when it cannot, or with `taken` set when the
// trace is another process's: one running holds its lock, or (`keep`) it already holds events.
int open_for_trace(const std::string& path, bool keep, bool& regular, bool& taken,
                   std::string& error) {
  regular = false;
  taken = false;
  // Write-only first: opening a FIFO for reading too would not wait for its reader.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    error = "cannot create \"" + path + "\": " + std::strerror(errno);
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return fd;
  // A memory map needs the file open for reading and writing; the same descriptor reads the
  // header. Another file at the path by now (renamed in between) counts as unreadable.
  const int rw = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  struct stat rw_st;
  const bool same =
      rw >= 0 && fstat(rw, &rw_st) == 0 && rw_st.st_dev == st.st_dev && rw_st.st_ino == st.st_ino;
  // The process writing a trace holds a lock on it until it exits (the lock is the open file's: a
  // fork()ed child shares it and writes nothing). Truncating a trace another process is writing
  // through its memory map would interleave two programs' events in one corrupt file.
  if (same && flock(rw, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    ::close(rw);
    ::close(fd);
    taken = true;
    return -1;
  }
  if (same && fstat(rw, &rw_st) == 0) st.st_size = rw_st.st_size;  // now that it is ours
  if (st.st_size > 0) {
    if (!same || !starts_with_layer_header(rw)) {
      if (rw >= 0) ::close(rw);
      ::close(fd);
      error = not_a_layer_trace(path);
      return -1;
    }
    if (keep && holds_events(rw)) {  // an earlier process's events: kept
      ::close(rw);
      ::close(fd);
      taken = true;
      return -1;
    }
    if (ftruncate(fd, 0) != 0) {
      error = "cannot truncate \"" + path + "\": " + std::strerror(errno);
      ::close(rw);
      ::close(fd);
      return -1;
    }
  }
  if (!same) {
    if (rw >= 0) ::close(rw);
    return fd;  // written directly
  }
  ::close(fd);
  regular = true;
  return rw;
}

// The line a process that records to its own trace leaves: in the errors file when there is one
// it may write (clpool record's, where "note: " sets it apart from the errors), else on stderr.
void announce_own_trace(const std::string& path, const std::string& own,
                        const layer_settings& settings) {
  const std::string line = "note: process " + std::to_string(getpid()) + " records to \"" + own +
                           "\": \"" + path + "\" is another process's trace";
  if (settings.errors_path && append_to_errors_file(*settings.errors_path, line)) return;
  std::fprintf(stderr, "clpool_layer: %s\n", common::escape_text(line).c_str());
}

class file_sink final : public event_sink {
 public:
  file_sink(std::unique_ptr<trace_output> output, std::unique_ptr<std::ostream> stream,
            std::unique_ptr<trace::trace_writer> writer)
      : output_(std::move(output)), stream_(std::move(stream)), writer_(std::move(writer)) {}

  bool write(const trace::trace_event& event) override {
    if (forked()) return true;
    try {
      writer_->write(event);
      // The event is complete in the file (mapped) or written (direct) when this returns.
      writer_->flush();
      return true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "clpool_layer: error: %s\n", common::escape_text(e.what()).c_str());
      error_ = e.what();
      return false;
    }
  }

  bool sites(const stacks::definitions& d) override {
    if (forked()) return true;
    try {
      for (const auto& st : d.stacks) writer_->write_stack(st.id, st.parent, st.frame);
      for (const auto& [id, frame] : d.frames) writer_->write_frame(id, frame);
      writer_->flush();
      return true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "clpool_layer: error: %s\n", common::escape_text(e.what()).c_str());
      error_ = e.what();
      return false;
    }
  }

  bool comment(std::string_view key, std::string_view value) override {
    if (forked()) return true;
    try {
      writer_->comment(key, value);
      writer_->flush();
      return true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "clpool_layer: error: %s\n", common::escape_text(e.what()).c_str());
      error_ = e.what();
      return false;
    }
  }

  void process_exiting() noexcept override {
    if (!forked()) output_->leave_map();
  }

  std::string error() const override { return error_; }

 private:
  bool forked() const { return fork_generation.load(std::memory_order_relaxed) != generation_; }

  const std::uint64_t generation_ = fork_generation.load(std::memory_order_relaxed);
  // Declared in the order they are built; destroyed in reverse (the writer flushes into the
  // stream, the stream into the output).
  std::string error_;  // the last failure's reason (error())
  std::unique_ptr<trace_output> output_;
  std::unique_ptr<std::ostream> stream_;
  std::unique_ptr<trace::trace_writer> writer_;
};

}  // namespace

std::unique_ptr<event_sink> open_trace_file(const std::string& path, const layer_settings& settings,
                                            std::string& error) {
  static std::once_flag fork_handler;
  std::call_once(fork_handler, [] { pthread_atfork(nullptr, nullptr, note_fork_in_child); });
  bool regular = false, taken = false;
  int fd = open_for_trace(path, settings.keep_trace, regular, taken, error);
  if (fd < 0 && taken) {
    // Another process's trace (clpool record -- sh -c "a & b"): this process gets its own beside
    // it, and says where (announce_own_trace). TRACE.PID is taken too when this process exec'd
    // from one that wrote it, or another PID namespace has this PID: then TRACE.PID.1, .2, ...
    const std::string own_base = path + "." + std::to_string(getpid());
    std::string own;
    for (int k = 0; k < 16; ++k) {
      own = k == 0 ? own_base : own_base + "." + std::to_string(k);
      fd = open_for_trace(own, settings.keep_trace, regular, taken, error);
      if (fd >= 0 || !taken) break;
    }
    if (fd < 0) {
      error = "is another process's trace, and " +
              (taken ? "so are " + own_base + " to " + own
                     : "this process's own, \"" + own + "\", " + error);
      return nullptr;
    }
    announce_own_trace(path, own, settings);
  }
  if (fd < 0) return nullptr;
  try {
    auto output = std::make_unique<trace_output>(fd, getpid());
    if (regular && !output->map_first_chunk()) {
      std::fprintf(stderr,
                   "clpool_layer: note: cannot map the trace file \"%s\" (%s); writing each event "
                   "with its own write(2), which is slower\n",
                   path.c_str(), std::strerror(errno));
    }
    auto stream = std::make_unique<std::ostream>(output.get());
    const bool stacks = settings.stacks != "none";
    // Version 3: the program's releases and waits beside the driver's frees (FORMAT.md "Two
    // moments of a free"), with sites when stacks are recorded. Version 4 when blocks are charged
    // at their first use (a budget and a profile whose device commits there): also each such
    // block's first use, for the kinds the comment first_uses names (FORMAT.md "First uses").
    const std::string first_uses =
        charges_buffers_at_first_use(settings)
            ? (charges_svm_at_first_use(settings) ? "buffer svm" : "buffer")
            : (charges_svm_at_first_use(settings) ? "svm" : "");
    auto writer = std::make_unique<trace::trace_writer>(
        *stream, trace::trace_encoding::text,
        first_uses.empty() ? trace::release_format_version : trace::first_use_format_version);
    writer->comment("source", "layer");
    if (!first_uses.empty()) writer->comment("first_uses", first_uses);
    if (stacks) writer->comment("stacks", settings.stacks);
    if (settings.budget_bytes) writer->comment("budget", std::to_string(*settings.budget_bytes));
    if (settings.fail_nth) writer->comment("fail_nth", std::to_string(*settings.fail_nth));
    if (settings.fail_probability) {
      writer->comment("fail_prob", std::to_string(*settings.fail_probability));
      writer->comment("seed", std::to_string(settings.seed));
    }
    writer->flush();
    return std::make_unique<file_sink>(std::move(output), std::move(stream), std::move(writer));
  } catch (const std::exception& e) {
    error = "cannot be written: " + std::string(e.what());
    return nullptr;
  }
}

}  // namespace clpool::layer
