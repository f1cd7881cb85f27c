#include "replay/followed_session.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "replay/replay.h"

namespace clpool::replay {

using trace::takes_device_memory;
using trace::trace_action;
using trace::trace_event;
using trace::trace_kind;

namespace {

// An alloc_failed refused for its size (trace::is_size_refusal): as in the replay, in no figure.
bool is_size_refusal(const followed_session::entry& w) {
  return !w.failure && trace::is_size_refusal(w.event, w.text);
}

// Whether `path` starts with a whole header line: the recorder creates the file, then writes it.
bool has_header(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char head[64];
  const ssize_t n = ::pread(fd, head, sizeof head, 0);
  ::close(fd);
  if (n <= 0 || head[0] == '\0') return false;
  return std::memchr(head, '\n', static_cast<std::size_t>(n)) != nullptr ||
         (n >= 8 && std::memcmp(head, trace::binary_magic, 8) == 0);
}

// "first use of id 7 (4096 bytes) by clEnqueueWriteBuffer: status -4 ...": the layer's words for
// a block the device refused at its first use (tools/layer/recorder.cc). The id and the call.
bool parse_first_use(const std::string& text, std::uint64_t& id, std::string& call) {
  constexpr std::string_view prefix = "first use of id ";
  if (text.compare(0, prefix.size(), prefix) != 0) return false;
  std::size_t p = prefix.size();
  std::uint64_t v = 0;
  const std::size_t digits = p;
  while (p < text.size() && text[p] >= '0' && text[p] <= '9')
    v = v * 10 + static_cast<std::uint64_t>(text[p++] - '0');
  if (p == digits) return false;
  id = v;
  const std::size_t by = text.find(" by ", p);
  if (by == std::string::npos) {
    call = "an enqueue";
    return true;
  }
  const std::size_t end = text.find_first_of(": ", by + 4);
  call = text.substr(by + 4, end == std::string::npos ? std::string::npos : end - (by + 4));
  return true;
}

}  // namespace

// A stack's name under `naming`, kept for the session: a suite names the same few stacks in every
// test, and naming walks the stack and escapes every frame.
std::string followed_session::name_of(std::uint64_t stack, const site_path_rule& naming) const {
  name_key key{stack,       naming.frames,      naming.until_file, naming.until_function,
               naming.root, naming.stop_at_root};
  if (const auto it = names_.find(key); it != names_.end()) return it->second;
  std::string name = site_path_name(sites(), stack, naming);
  if (name.find(" not defined)") == std::string::npos) {  // a frame defined later gets named then
    if (names_.size() >= (std::size_t{1} << 16)) names_.clear();  // bounded
    names_.emplace(std::move(key), name);
  }
  return name;
}

// Sums `list` (per stack) by the name each stack has under `naming`; largest first, then by name.
std::vector<named_usage> followed_session::by_name(const std::vector<site_usage>& list,
                                                   const site_path_rule& naming) const {
  std::map<std::string, named_usage> sums;
  for (const site_usage& u : list) {
    const std::string name = name_of(u.stack, naming);
    named_usage& n = sums[name];
    n.site = name;
    n.bytes += u.requested_bytes;
    n.blocks += u.blocks;
  }
  std::vector<named_usage> out;
  for (auto& [name, n] : sums) out.push_back(std::move(n));
  std::stable_sort(out.begin(), out.end(),
                   [](const named_usage& a, const named_usage& b) { return a.bytes > b.bytes; });
  return out;
}

namespace {

// The engine's replay of a window's own events: no pool, exact bytes, no capacity, every block
// free at its release; with the sites.
replay_report replay_own(const std::vector<trace_event>& events,
                         std::optional<std::uint64_t> stop_after = {}) {
  replay_config nopool;
  nopool.use_pool = false;
  replay_options options;
  options.sites = true;
  options.frees_at = free_moment::release;
  options.stop_after_event = stop_after;
  return replay_events(events, nopool, device_spec{}, options);
}

}  // namespace

followed_session::followed_session(std::string trace_path) : path_(std::move(trace_path)) {}
followed_session::~followed_session() = default;

const trace::site_table* followed_session::sites() const {
  return reader_ ? &reader_->sites() : nullptr;
}
unsigned followed_session::version() const { return reader_ ? reader_->version() : 0; }

bool followed_session::sync() {
  if (!reader_) {
    if (!has_header(path_)) return false;
    trace::reader_options o;
    o.follow = true;
    o.on_comment = [this](std::string_view key, std::string_view value) { on_comment(key, value); };
    reader_ = std::make_unique<trace::trace_reader>(path_, std::move(o));
  }
  trace_event e;
  while (reader_->next(e)) apply(e);
  return true;
}

void followed_session::apply(const trace_event& e) {
  ++events_;
  last_seq_ = e.seq;
  tail_unsettled_ = e.action == trace_action::alloc_failed;
  // A first use's refusal comment follows it: in the window when the use is.
  in_window_ = window_open_ && e.seq >= window_start_seq_;
  // A first use (version 4) changes no window's figures: they count what the test allocated,
  // as its blocks were made. Its windows' traces (version 3) hold none.
  if (e.action == trace_action::use) return;
  entry w;
  w.event = e;
  switch (e.action) {
    case trace_action::alloc: {
      block b{e.id, e.size, e.stack, e.thread, e.seq, e.kind};
      if (takes_device_memory(e.kind)) ++allocations_;
      live_[e.id] = b;
      w.named = b;
      w.known = true;
      break;
    }
    case trace_action::free:
    case trace_action::release: {
      const auto it = live_.find(e.id);
      if (it != live_.end()) {
        w.named = it->second;
        w.known = true;
        if (e.action == trace_action::free) live_.erase(it);
      }
      break;
    }
    default:
      break;
  }
  if (in_window_) window_.push_back(std::move(w));
}

void followed_session::on_comment(std::string_view key, std::string_view value) {
  tail_unsettled_ = false;  // a line after an alloc_failed: its comment, if it has one, is read
  if (key != "failure") return;
  // A block refused at its first use holds nothing, in this window and in every later one (an
  // earlier test's, that its exception's traceback keeps alive, is not live in the next test's).
  std::uint64_t id = 0;
  if (std::string call; parse_first_use(std::string(value), id, call)) {
    if (const auto it = live_.find(id); it != live_.end()) it->second.refused = true;
  }
  // A comment is the event's before it: in the window when that event is.
  if (!in_window_) return;
  // "seq N ...": the recorder's words for the alloc_failed just read (the first are its:
  // FORMAT.md); anything else (a first use refused) is an out-of-memory of its own.
  if (value.substr(0, 4) == "seq " && !window_.empty() &&
      window_.back().event.action == trace_action::alloc_failed && !window_.back().failure &&
      window_.back().text.empty()) {
    window_.back().text = std::string(value);
    return;
  }
  entry w;
  w.event.seq = last_seq_;  // a comment sorts with the event before it
  w.failure = true;
  w.text = std::string(value);
  window_.push_back(std::move(w));
}

std::uint64_t followed_session::next_seq_read() const { return events_ == 0 ? 0 : last_seq_ + 1; }

void followed_session::begin_window(std::optional<std::uint64_t> from_seq) {
  window_.clear();
  in_window_ = false;  // what is read next decides (a late comment is no part of this window)
  window_open_ = true;
  window_start_seq_ = from_seq.value_or(next_seq_read());
  call_start_seq_ = call_end_seq_ = 0;
  call_marked_ = call_ended_ = false;
}

void followed_session::mark_call(std::optional<std::uint64_t> from_seq) {
  call_start_seq_ = from_seq.value_or(next_seq_read());
  call_marked_ = true;
}

void followed_session::mark_call_end(std::optional<std::uint64_t> at_seq) {
  call_end_seq_ = at_seq.value_or(next_seq_read());
  call_ended_ = true;
}

std::size_t followed_session::index_of_seq(std::uint64_t seq) const {
  return static_cast<std::size_t>(
      std::partition_point(window_.begin(), window_.end(),
                           [seq](const entry& w) { return w.event.seq < seq; }) -
      window_.begin());
}

void followed_session::end_window() {
  window_open_ = false;
  window_.clear();
  in_window_ = false;
  if (window_.capacity() > (std::size_t{1} << 16)) window_.shrink_to_fit();  // a big test's
}

std::set<std::uint64_t> followed_session::refused_blocks() const {
  std::set<std::uint64_t> out;
  for (const entry& w : window_) {
    std::uint64_t id = 0;
    std::string call;
    if (w.failure && parse_first_use(w.text, id, call)) out.insert(id);
  }
  return out;
}

std::vector<trace_event> followed_session::own_events(
    std::size_t from, std::size_t to, const std::set<std::uint64_t>& other_threads) const {
  const std::set<std::uint64_t> refused = refused_blocks();
  std::set<std::uint64_t> mine;  // blocks allocated in [from, to) that count
  std::vector<trace_event> out;
  for (std::size_t i = from; i < to && i < window_.size(); ++i) {
    const entry& w = window_[i];
    if (w.failure) continue;
    const trace_event& e = w.event;
    switch (e.action) {
      case trace_action::alloc:
        if (other_threads.count(e.thread) != 0 || refused.count(e.id) != 0) continue;
        mine.insert(e.id);
        break;
      case trace_action::alloc_failed:
        if (other_threads.count(e.thread) != 0 || is_size_refusal(w)) continue;
        break;
      case trace_action::free:
        if (mine.erase(e.id) == 0) continue;
        break;
      case trace_action::release:
        if (mine.count(e.id) == 0) continue;
        break;
      default:
        break;
    }
    out.push_back(e);
  }
  return out;
}

window_figures followed_session::figures(const figure_options& options) const {
  window_figures f;
  if (window_.empty()) return f;  // most tests of a suite: nothing to replay
  const std::vector<trace_event> all = own_events(0, until(), options.other_threads);
  replay_report whole;
  if (!all.empty()) {
    whole = replay_own(all);
    f.peak_bytes = whole.peak_active_bytes;
    if (f.peak_bytes != 0) {
      f.peak_sites =
          by_name(replay_own(all, whole.peak_active_event).end_live_sites, options.naming);
    }
  }
  if (call_marked_) {
    const std::vector<trace_event> call =
        own_events(index_of_seq(call_start_seq_), until(), options.other_threads);
    // Most tests allocate in their call only: then the call's replay is the window's.
    const replay_report r = call.empty() ? replay_report{} : call == all ? whole : replay_own(call);
    f.left_live_bytes = r.end_active_bytes;
    f.left_live_blocks = r.end_active_blocks;
    f.left_live_sites = by_name(r.end_live_sites, options.naming);
  }
  std::vector<site_usage> others;
  for (std::size_t i = 0, n = until(); i < n; ++i) {
    const entry& w = window_[i];
    const trace_event& e = w.event;
    if (w.failure || e.action != trace_action::alloc || !takes_device_memory(e.kind)) continue;
    if (options.other_threads.count(e.thread) == 0) {
      ++f.allocations;
      continue;
    }
    ++f.other_thread_allocations;
    f.other_thread_bytes += e.size;
    others.push_back(site_usage{e.stack, e.size, e.size, e.size, 1});
  }
  f.other_thread_sites = by_name(others, options.naming);
  f.oom = first_oom(options);
  return f;
}

std::vector<followed_session::block> followed_session::before_window() const {
  std::vector<block> out;
  for (const auto& [id, b] : live_) {
    if ((b.seq < window_start_seq_ || events_ == 0) && !b.refused) out.push_back(b);
  }
  for (const entry& w : window_) {  // freed during the window
    if (!w.failure && w.event.action == trace_action::free && w.known && !w.named.refused &&
        w.named.seq < window_start_seq_) {
      out.push_back(w.named);
    }
  }
  std::sort(out.begin(), out.end(), [](const block& a, const block& b) { return a.seq < b.seq; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const block& a, const block& b) { return a.seq == b.seq; }),
            out.end());
  return out;
}

std::optional<window_oom> followed_session::first_oom(const figure_options& options) const {
  std::optional<window_oom> oom;
  std::size_t at = 0;
  std::uint64_t failing_id = 0;
  std::uint64_t last_size = 0, last_stack = 0;
  bool have_last = false;
  for (std::size_t i = 0, n = settled(); i < n; ++i) {
    const entry& w = window_[i];
    std::uint64_t size = 0, stack = 0, id = 0;
    std::string where, said;
    if (!w.failure && w.event.action == trace_action::alloc_failed) {
      if (!takes_device_memory(w.event.kind) || is_size_refusal(w)) continue;
      size = w.event.size;
      stack = w.event.stack;
      where = "at allocation";
      said = w.text;
    } else if (std::string call; w.failure && parse_first_use(w.text, id, call)) {
      where = "at first use by " + call;
      said = w.text;
      const auto it = std::find_if(
          window_.begin(), window_.begin() + static_cast<std::ptrdiff_t>(i), [&](const entry& x) {
            return !x.failure && x.event.action == trace_action::alloc && x.event.id == id;
          });
      const auto live = live_.find(id);
      if (it != window_.begin() + static_cast<std::ptrdiff_t>(i)) {
        size = it->event.size;
        stack = it->event.stack;
      } else if (live != live_.end()) {
        size = live->second.size;
        stack = live->second.stack;
      }
    } else {
      continue;
    }
    // PyOpenCL retries a failed request once after collecting garbage: the same request again is
    // one out-of-memory.
    if (have_last && size == last_size && stack == last_stack) continue;
    have_last = true;
    last_size = size;
    last_stack = stack;
    if (oom) {
      ++oom->more;
      continue;
    }
    oom.emplace();
    oom->where = std::move(where);
    oom->requested_bytes = size;
    oom->site = name_of(stack, options.naming);
    oom->recorder_said = std::move(said);
    at = i;
    failing_id = id;
  }
  if (oom) describe_live(*oom, at, failing_id, options);
  return oom;
}

void followed_session::describe_live(window_oom& oom, std::size_t at, std::uint64_t failing_id,
                                     const figure_options& options) const {
  // The device's view just before the failure: blocks from before the window and the window's,
  // each live until its driver free; a block refused at its first use holds nothing.
  std::unordered_map<std::uint64_t, block> live;
  for (const block& b : before_window()) {
    if (takes_device_memory(b.kind)) live[b.id] = b;
  }
  std::set<std::uint64_t> refused;
  for (std::size_t i = 0; i < at; ++i) {
    const entry& w = window_[i];
    std::uint64_t id = 0;
    std::string call;
    if (w.failure) {
      if (parse_first_use(w.text, id, call)) refused.insert(id);
      continue;
    }
    if (w.event.action == trace_action::alloc && takes_device_memory(w.event.kind))
      live[w.event.id] = w.named;
    if (w.event.action == trace_action::free) live.erase(w.event.id);
  }
  refused.insert(failing_id);
  std::vector<site_usage> usage;
  for (const auto& [id, b] : live) {
    if (refused.count(id) != 0) continue;
    oom.live_bytes += b.size;
    ++oom.live_blocks;
    if (b.seq < window_start_seq_) oom.live_before_bytes += b.size;
    usage.push_back(site_usage{b.stack, b.size, b.size, b.size, 1});
  }
  oom.live_sites = by_name(usage, options.naming);
}

}  // namespace clpool::replay
