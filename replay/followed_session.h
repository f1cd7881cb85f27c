// A recorded session followed while it is written, cut into windows (one per test): what each
// test did to device memory, in the replay engine's own figures. The pytest plugin reads the
// OpenCL layer's trace of its process through this (python/session_binding.cc), so that a test's
// peak, what it left live and the sites holding either are what clpool_replay says of the test's
// trace (write_window_trace), by construction: both are the engine's replay of the same events.
//
//   followed_session s("session.trace");
//   s.sync();                    // reads what the layer added (false: no complete header yet)
//   s.begin_window();            // a test's setup begins
//   s.mark_call();  ...  s.mark_call_end();
//   window_figures f = s.figures({.naming = {...}});
//   s.end_window();
//
// What a window's figures count: its own device blocks (buffer, svm) as the program asked for
// them, a block free at the program's release (FORMAT.md "Two moments of a free": a device whose
// commands finish promptly; clpool_replay --frees-at release), no pool, no rounding. Left out: a
// block the device refused at its first use (it never held device memory), a request refused for
// its size (trace::is_size_refusal: no out-of-memory either), and allocations made
// by threads that were running before the test began (`figure_options::other_threads`): those
// are the session's, reported apart. An alloc_failed that is the last line read waits for the
// next (its failure comment may still be on its way: settled()). An out-of-memory is described as
// the device saw it: every block live then, the test's and those from before it, each free at the
// driver's free.
#ifndef CLPOOL_REPLAY_FOLLOWED_SESSION_H_
#define CLPOOL_REPLAY_FOLLOWED_SESSION_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "replay/site_names.h"
#include "trace/trace_event.h"
#include "trace/trace_reader.h"

namespace clpool::replay {

// Blocks summed by the name of their site (site_path_name), largest first (then by name).
struct named_usage {
  std::string site;
  std::uint64_t bytes = 0;  // as requested
  std::uint64_t blocks = 0;
};

// The first out-of-memory the recorder saw in a window.
struct window_oom {
  std::string where;  // "at allocation", "at first use by clEnqueueWriteBuffer"
  std::uint64_t requested_bytes = 0;
  std::string site;              // the failing request's
  std::string recorder_said;     // the recorder's `# failure:` words, if any
  std::uint64_t live_bytes = 0;  // live on the device then (the failing block not counted)
  std::uint64_t live_blocks = 0;
  std::uint64_t live_before_bytes = 0;  // of those, blocks allocated before the window began
  std::vector<named_usage> live_sites;
  std::uint64_t more = 0;  // further out-of-memories in the window
};

struct window_figures {
  std::uint64_t peak_bytes = 0;         // the window's own live device blocks, at their most
  std::vector<named_usage> peak_sites;  // what held them then
  std::uint64_t left_live_bytes = 0;    // allocated in the call phase, live at its end
  std::uint64_t left_live_blocks = 0;
  std::vector<named_usage> left_live_sites;
  std::uint64_t allocations = 0;  // the window's own device allocations (to the call's end)
  // Device allocations in the window by threads that were running before it began.
  std::uint64_t other_thread_allocations = 0;
  std::uint64_t other_thread_bytes = 0;
  std::vector<named_usage> other_thread_sites;
  std::optional<window_oom> oom;
};

struct figure_options {
  std::set<std::uint64_t> other_threads = {};  // trace thread ids (FORMAT.md `thread`)
  site_path_rule naming = {};
};

// Which events write_window_trace writes.
enum class window_trace {
  // The window's own events, exactly those its figures replay (clpool_replay --no-pool --profile
  // exact --frees-at release gives the same peak, end and sites).
  own,
  // What the device saw: the blocks live when the window began (as allocations at its start),
  // then every event in it, every thread's, with the recorder's failures: to replay an
  // out-of-memory on the device's capacity and profile.
  device,
};

class followed_session {
 public:
  explicit followed_session(std::string trace_path);
  ~followed_session();
  followed_session(const followed_session&) = delete;
  followed_session& operator=(const followed_session&) = delete;

  // Reads and applies what the recorder added since the last call. False while the trace has no
  // complete header yet (nothing read). Throws trace::trace_error for a malformed trace, or one
  // whose events break the format's rules (the trace is then lost to the session: a later call
  // throws again).
  bool sync();

  // The window's phases, each at a seq of the recorder's: the first seq of the window, of its call
  // phase, and the first after the call (what the recorder will number next, as it said at that
  // moment; the pytest plugin asks the layer, clpool_layer_next_seq). Events read later sort into
  // them by their seq, so no read is needed at a boundary. Without one, the seq after the last
  // event read. begin_window() ends a window still open; the others need one open.
  void begin_window(std::optional<std::uint64_t> from_seq = std::nullopt);
  void mark_call(std::optional<std::uint64_t> from_seq = std::nullopt);
  void mark_call_end(std::optional<std::uint64_t> at_seq = std::nullopt);
  void end_window();
  bool in_window() const { return window_open_; }
  // Events and failures in the open window so far (0: nothing to figure).
  std::size_t window_entries() const { return window_.size(); }

  // The open window's figures over what has been read (sync() first), up to the end of its call
  // phase once mark_call_end() has marked it: the peak from its start, what the call left live.
  window_figures figures(const figure_options& options) const;
  // Writes the open window as a trace of its own to `path` (`own`: exactly the events its figures
  // count, up to the same point; common/output_file.h, refusing a
  // symbolic link or anything but a regular file there); `test` goes into its `# test:` comment.
  // Throws common::output_error when it cannot be written.
  // `other_threads`: as figure_options's (own: the events the figures count).
  void write_window_trace(const std::string& path, const std::string& test, window_trace what,
                          const std::set<std::uint64_t>& other_threads = {}) const;

  // Device allocations of the whole session so far.
  std::uint64_t allocations() const { return allocations_; }
  // Events read so far.
  std::uint64_t events() const { return events_; }
  const trace::site_table* sites() const;
  unsigned version() const;

  // One block as the session knows it.
  struct block {
    std::uint64_t id = 0, size = 0, stack = 0, thread = 0, seq = 0;
    trace::trace_kind kind = trace::trace_kind::buffer;
    bool refused = false;  // its first use was refused: it holds no device memory
  };
  // One thing in a window: an event (with the block it names), or a recorder's failure comment.
  struct entry {
    trace::trace_event event;
    block named;           // alloc: itself; free and release: the block as allocated
    bool known = false;    // free/release: the block was live in the session
    bool failure = false;  // a `# failure:` comment, not an event
    std::string text;      // its words
  };

 private:
  void apply(const trace::trace_event& e);
  void on_comment(std::string_view key, std::string_view value);
  std::vector<trace::trace_event> own_events(std::size_t from, std::size_t to,
                                             const std::set<std::uint64_t>& other_threads) const;
  std::set<std::uint64_t> refused_blocks() const;
  // The window's entries whose words are all read: all but an alloc_failed that is the last line
  // read, whose `# failure:` comment (which says whether it was refused for its size) the recorder
  // may not have written yet (it writes the two lines one after the other; the plugin may read
  // between them while another thread is refused).
  std::size_t settled() const {
    return window_.size() - (tail_unsettled_ && in_window_ && !window_.empty() ? 1 : 0);
  }
  // Where the window's figures and its own trace end: the end of its call phase once marked, else
  // what has been read; never past what is settled.
  std::size_t until() const {
    return call_ended_ ? std::min(index_of_seq(call_end_seq_), settled()) : settled();
  }
  std::size_t index_of_seq(std::uint64_t seq) const;  // the first entry at or after `seq`
  std::uint64_t next_seq_read() const;
  std::vector<block> before_window() const;
  std::optional<window_oom> first_oom(const figure_options& options) const;
  std::string name_of(std::uint64_t stack, const site_path_rule& naming) const;
  std::vector<named_usage> by_name(const std::vector<site_usage>& list,
                                   const site_path_rule& naming) const;
  void describe_live(window_oom& oom, std::size_t at, std::uint64_t failing_id,
                     const figure_options& options) const;

  std::string path_;
  std::unique_ptr<trace::trace_reader> reader_;
  std::unordered_map<std::uint64_t, block> live_;  // the session's live blocks (driver frees)
  std::uint64_t allocations_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t last_seq_ = 0;
  bool window_open_ = false;
  std::uint64_t window_start_seq_ = 0;  // events at or above this seq are the window's
  bool in_window_ = false;              // the event last read is
  bool tail_unsettled_ = false;         // the line last read is an alloc_failed (settled())
  std::vector<entry> window_;
  std::uint64_t call_start_seq_ = 0, call_end_seq_ = 0;
  bool call_marked_ = false, call_ended_ = false;
  struct name_key {
    std::uint64_t stack;
    std::size_t frames;
    std::string until_file, until_function, root;
    bool stop_at_root;
    bool operator<(const name_key& o) const {
      return std::tie(stack, frames, until_file, until_function, root, stop_at_root) <
             std::tie(o.stack, o.frames, o.until_file, o.until_function, o.root, o.stop_at_root);
    }
  };
  // Stacks' names by naming rule (name_of); a name with a frame not defined yet is not kept.
  mutable std::map<name_key, std::string> names_;
};

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_FOLLOWED_SESSION_H_
