// trace_writer: writes clpool traces (FORMAT.md, version 1).
//
//   clpool::trace::trace_writer out("run.trace");   // writes the header line
//   out.comment("source", "layer");                 // "# source: layer"
//   out.write(event);                               // one line per event
//   out.commit();                                   // the file appears, complete
//
// Text by default; trace_encoding::binary writes the compact form (FORMAT.md, "Binary form").
// Buffered (64 KiB) so that recording costs about one formatted line per event. Not thread-safe:
// a recorder that is called from several threads serialises its calls (the pool recorder runs
// under the pool's lock). The writer checks what it can check cheaply (seq increasing, size in
// range, single-line comments) so that a recorder bug shows up at recording time, not at replay.
#ifndef CLPOOL_TRACE_TRACE_WRITER_H_
#define CLPOOL_TRACE_TRACE_WRITER_H_

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "common/output_file.h"
#include "trace/sites.h"
#include "trace/trace_event.h"

namespace clpool::trace {

class trace_writer {
 public:
  // Writes to `out`, which must outlive the writer. Writes the header at once.
  // `version` is format_version (no sites), sites_format_version (frames, stacks and a stack
  // id on alloc events; FORMAT.md "Sites"), release_format_version (sites allowed, and the
  // release and wait actions; FORMAT.md "Two moments of a free") or first_use_format_version
  // (also the use action; FORMAT.md "First uses").
  explicit trace_writer(std::ostream& out, trace_encoding encoding = trace_encoding::text,
                        unsigned version = format_version);

  // Writes `path` through a temporary file in its directory (common/output_file.h):
  // `path` is replaced only by commit(), so a writer destroyed or killed before then leaves the
  // old file intact. Throws std::runtime_error (common::output_error) naming the path if the
  // temporary file cannot be created. Streaming writers that must survive a crash (the layer)
  // use the ostream constructor instead.
  // `what` names the output in messages (a flag, say).
  explicit trace_writer(const std::string& path, trace_encoding encoding = trace_encoding::text,
                        const std::string& what = "trace_writer",
                        unsigned version = format_version);

  trace_writer(const trace_writer&) = delete;
  trace_writer& operator=(const trace_writer&) = delete;

  // Stream writers: flushes what is buffered; errors at this point are lost (call flush() to see
  // them). Path writers: without commit(), discards the temporary file.
  ~trace_writer();

  // Writes "# key: value". Throws std::invalid_argument if `key` is empty or has blanks or a
  // colon, or either contains a newline (the comment must stay one line).
  void comment(std::string_view key, std::string_view value);

  // Writes one event. Throws std::invalid_argument, writing nothing, when seq does not increase
  // or size is above max_event_size: the reader would refuse the file.
  void write(const trace_event& event);

  // Defines frame `id` / stack `id` (version 2 writers only; std::logic_error otherwise). The
  // caller keeps ids unique and defines a stack's parent before it and a stack before the first
  // event that names it; frames may come later (FORMAT.md "Sites").
  void write_frame(std::uint64_t id, const frame_info& frame);
  void write_stack(std::uint64_t id, std::uint64_t parent, std::uint64_t frame);

  unsigned version() const noexcept { return version_; }

  // Writes buffered lines to the stream and flushes it. Throws std::runtime_error if the stream
  // failed (disk full, closed pipe).
  void flush();

  // flush(), then (path writers) fsync and rename the temporary file over the path. Throws
  // std::runtime_error if any step fails; the old file is then intact. Stream writers: flush().
  void commit();

  // Events written so far.
  std::uint64_t events_written() const noexcept { return events_; }

 private:
  void flush_buffer();
  void write_header();
  void write_binary(const trace_event& event);

  std::unique_ptr<common::atomic_output_file> owned_;
  std::ostream* out_;
  std::string name_;
  std::string buffer_;
  bool have_seq_ = false;
  std::uint64_t last_seq_ = 0;
  std::uint64_t prev_seq_ = 0;  // the seq before last_seq_ (binary deltas)
  std::uint64_t events_ = 0;
  trace_encoding encoding_;
  unsigned version_;
  // Binary delta state: the previous record's time, thread and queue.
  std::uint64_t last_time_ = 0;
  std::uint64_t last_thread_ = 0;
  std::uint64_t last_queue_ = 0;
};

}  // namespace clpool::trace

#endif  // CLPOOL_TRACE_TRACE_WRITER_H_
