// trace_reader: a strict, streaming reader of clpool traces (FORMAT.md, version 1).
//
//   clpool::trace::trace_reader reader("run.trace");   // throws trace_error on a bad header
//   clpool::trace::trace_event e;
//   while (reader.next(e)) use(e);                     // throws trace_error on a bad line
//
// Streaming: the reader holds one 1 MiB buffer plus the set of live ids, so memory is bounded by
// the live set, never by the trace length. Strict: every rule in FORMAT.md is enforced and a
// violation is a trace_error naming the file, the line and the problem. Nothing already read is
// lost: every event before the bad line was returned by next() (or is in read_result::events).
#ifndef CLPOOL_TRACE_TRACE_READER_H_
#define CLPOOL_TRACE_TRACE_READER_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/id_map.h"
#include "trace/sites.h"
#include "trace/trace_event.h"

namespace clpool::trace {

// A malformed or unreadable trace. what() is "FILE:LINE: PROBLEM", or "FILE: PROBLEM" for the file
// as a whole (line() 0: it cannot be opened).
class trace_error : public std::runtime_error {
 public:
  trace_error(std::string file, std::uint64_t line, std::string problem, std::uint64_t events_read);

  const std::string& file() const noexcept { return file_; }
  std::uint64_t line() const noexcept { return line_; }
  const std::string& problem() const noexcept { return problem_; }
  // How many valid events came before the error (all of them were delivered).
  std::uint64_t events_read() const noexcept { return events_read_; }

 private:
  std::string file_;
  std::uint64_t line_;
  std::string problem_;
  std::uint64_t events_read_;
};

struct reader_options {
  // Enforce "alloc of a live id" and "free of an id that is not live". A consumer that keeps its
  // own map of live ids (the replay engine) turns this off to avoid a second hash lookup per
  // event, and must then report those errors itself (see location()).
  bool check_liveness = true;
  // Follow a text trace that is still being written (the OpenCL layer's, read by the pytest
  // plugin while its tests run): where the bytes written so far end (the end of the file, a line
  // not finished yet, or the zero-filled rest of a recorder's memory map), next() returns false
  // and the reader keeps its place; a later next() reads on from there what was added. Nothing
  // there is an error, a malformed line still is. A regular file only; not a binary trace.
  bool follow = false;
  // Called with each `# key: value` comment, in file order between the events around it (the
  // layer's `# failure: ...` lines belong to the event before them), and with each metadata record
  // of a binary trace, in the same place. Not limited as metadata() is.
  std::function<void(std::string_view key, std::string_view value)> on_comment = nullptr;
};

// `# key: value` metadata comments, in file order.
using trace_metadata = std::vector<std::pair<std::string, std::string>>;

class trace_reader {
 public:
  // Opens `path` ("-" reads standard input) and reads its header. Throws trace_error (line 0)
  // when the file cannot be opened, or (line 1) when the header is missing, is not a clpool
  // trace, or names a version this reader does not know.
  explicit trace_reader(const std::string& path, reader_options options = {});

  // Reads a trace held in memory; `name` stands for the file name in errors. Throws as above.
  static trace_reader from_string(std::string text, std::string name = "<string>",
                                  reader_options options = {});

  trace_reader(trace_reader&&) noexcept;
  trace_reader& operator=(trace_reader&&) noexcept;
  ~trace_reader();

  // Reads the next event into `out`; returns false at the clean end of the trace. Throws
  // trace_error for a malformed line (out is then unchanged); every later call throws it again.
  bool next(trace_event& out);

  // The line number of the event last returned (1-based).
  std::uint64_t line() const noexcept { return event_line_; }
  // Events returned so far.
  std::uint64_t events_read() const noexcept { return events_read_; }
  // The name errors use: the path, "<stdin>", or the name given to from_string.
  const std::string& name() const noexcept { return name_; }
  // The version from the header.
  unsigned version() const noexcept { return version_; }
  // Whether the trace ended in a zero-filled tail (FORMAT.md "Clarifications"): the unwritten rest
  // of the file of a recorder writing through a memory map that did not reach the program's
  // normal exit (killed, crashed or _exit), where the OpenCL layer trims the file. Known once
  // next() returned false.
  bool ended_in_zero_tail() const noexcept { return zero_tail_; }
  // Text or binary, from the first bytes of the input. For a binary trace, line() and error
  // lines count records (the header is line 1, the first record line 2).
  trace_encoding encoding() const noexcept { return encoding_; }
  // The `# key: value` comments read so far (the first max_metadata_kept of them: a bound on what a
  // trace full of comments costs; reader_options::on_comment sees every one).
  static constexpr std::size_t max_metadata_kept = 256;
  const trace_metadata& metadata() const noexcept { return metadata_; }
  // The frames and stacks defined so far (version 2; empty for version 1 and RMM imports). A
  // frame may be defined after the events that use it, so read it once the trace is drained.
  const site_table& sites() const noexcept { return sites_; }
  // Bytes of the input consumed so far and the input's size (0 when unknown, e.g. a pipe); for
  // progress display.
  std::uint64_t bytes_consumed() const noexcept { return consumed_base_ + pos_; }
  std::uint64_t total_bytes() const noexcept { return total_bytes_; }

  // Replaces reader_options::on_comment for the comments read from now on, and returns the one it
  // replaces: a consumer that watches the comments for a while (the replay engine) chains to it
  // and puts it back when done.
  using comment_fn = std::function<void(std::string_view key, std::string_view value)>;
  comment_fn exchange_on_comment(comment_fn fn) {
    return std::exchange(options_.on_comment, std::move(fn));
  }

  // Makes a trace_error at the line of the last event returned, for consumers that find a
  // problem the reader did not check (see reader_options::check_liveness).
  trace_error error_at_last_event(std::string problem) const;

 private:
  struct name_tag {};
  trace_reader(name_tag, std::string name, reader_options options);
  void read_header();
  bool next_line(const char*& begin, const char*& end);
  bool at_zero_tail(const char* start, std::size_t avail);
  bool pause_at(const char* start);
  void resume();
  bool refill();
  [[noreturn]] void fail(std::string problem);
  void parse_event(const char* begin, const char* end, trace_event& out);
  bool parse_fast(trace_event& out);
  bool next_binary(trace_event& out);
  std::string binary_where(std::uint64_t record) const;
  void read_binary_metadata(std::uint64_t record);
  void read_binary_site(unsigned tag, std::uint64_t record);
  const unsigned char* decode_binary_event(unsigned tag, const unsigned char* p,
                                           const unsigned char* limit, std::uint64_t record,
                                           trace_event& e);
  bool read_binary_header();
  void check_event(const trace_event& e);
  void note_comment(const char* begin, const char* end);

  std::string name_;
  reader_options options_;
  struct file_closer {
    void operator()(std::FILE* f) const noexcept;
  };
  std::unique_ptr<std::FILE, file_closer> file_;  // null when reading from memory
  std::string buffer_;      // the whole text (from_string) or a window of the file
  std::size_t pos_ = 0;     // next unread byte in buffer_
  std::size_t end_ = 0;     // end of valid bytes in buffer_
  bool eof_ = false;        // no more bytes to read into buffer_
  bool zero_tail_ = false;  // ended_in_zero_tail()
  bool paused_ = false;     // follow mode: stopped where the written bytes end, at resume_at_
  std::uint64_t resume_at_ = 0;
  std::size_t follow_read_ = std::size_t{4} << 10;  // follow mode: the next read's size
  std::uint64_t consumed_base_ = 0;
  std::uint64_t total_bytes_ = 0;
  std::uint64_t line_ = 0;        // line of the last line read
  std::uint64_t event_line_ = 0;  // line of the last event returned
  std::uint64_t events_read_ = 0;
  unsigned version_ = 0;
  trace_encoding encoding_ = trace_encoding::text;
  // Binary delta state (FORMAT.md, "Binary form").
  std::uint64_t prev_time_ = 0;
  std::uint64_t prev_thread_ = 0;
  std::uint64_t prev_queue_ = 0;
  bool have_seq_ = false;
  std::uint64_t last_seq_ = 0;
  flat_id_map<std::uint64_t> live_;  // live id -> line of its alloc
  trace_metadata metadata_;
  site_table sites_;
  std::unique_ptr<trace_error> error_;  // sticky: set once, rethrown by every later next()
};

// "1, 2 and 3": the versions this reader knows, for messages.
std::string known_versions();

// Everything one trace holds, or as much as was valid.
struct read_result {
  std::vector<trace_event> events;  // every valid event before the error, if any
  unsigned version = 0;             // from the header (0: none was read)
  trace_metadata metadata;
  site_table sites;
  std::optional<trace_error> error;  // the first problem; nothing when the whole trace was valid
};

// Watches the comments `source` reads while this lives: `watch` sees each, after the callback the
// source had (chained to, and put back when this is destroyed). A source without comments (no
// exchange_on_comment: the RMM importer) calls nothing. Neither copied nor moved: the callback
// the source holds points at it.
template <class Source>
class comment_watch {
 public:
  comment_watch(Source& source, trace_reader::comment_fn watch) : source_(source) {
    if constexpr (requires { source.exchange_on_comment(nullptr); }) {
      previous_ = source.exchange_on_comment(
          [this, watch = std::move(watch)](std::string_view key, std::string_view value) {
            if (previous_) previous_(key, value);
            watch(key, value);
          });
    }
  }
  ~comment_watch() {
    if constexpr (requires { source_.exchange_on_comment(nullptr); })
      source_.exchange_on_comment(std::move(previous_));
  }
  comment_watch(const comment_watch&) = delete;
  comment_watch& operator=(const comment_watch&) = delete;

 private:
  Source& source_;
  trace_reader::comment_fn previous_;
};

// Reads a whole trace into memory (for tests and small traces; large ones should stream with
// trace_reader). Never throws trace_error: problems are returned in read_result::error.
read_result read_all(const std::string& path, reader_options options = {});
read_result read_all_from_string(std::string text, std::string name = "<string>",
                                 reader_options options = {});

}  // namespace clpool::trace

#endif  // CLPOOL_TRACE_TRACE_READER_H_
