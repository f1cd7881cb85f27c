#include "trace/pool_recorder.h"

#include <exception>

namespace clpool::trace {

pool_recorder::pool_recorder(trace_writer& writer)
    : writer_(writer), start_(std::chrono::steady_clock::now()) {}

std::uint64_t pool_recorder::thread_number() {
  // Few threads use one pool; a linear scan beats a hash map here.
  const std::thread::id me = std::this_thread::get_id();
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    if (threads_[i] == me) return i;
  }
  threads_.push_back(me);
  return threads_.size() - 1;
}

void pool_recorder::on_event(const pool_event& event) noexcept {
  if (!error_.empty()) return;
  trace_event e;
  switch (event.kind) {
    case pool_event_kind::hit:
    case pool_event_kind::miss:
      e.action = trace_action::alloc;
      e.id = event.allocation_id;
      e.size = event.bytes;
      break;
    case pool_event_kind::release:
      if (live_.erase(event.allocation_id) == 0) return;  // allocated before the recorder came
      e.action = trace_action::free;
      e.id = event.allocation_id;
      e.size = event.bytes;
      break;
    case pool_event_kind::out_of_memory:
      e.action = trace_action::alloc_failed;
      e.size = event.bytes;
      break;
    case pool_event_kind::free_held:
      e.action = trace_action::free_held;
      break;
    case pool_event_kind::stop_holding:
      e.action = trace_action::stop_holding;
      break;
    default:
      return;
  }
  try {
    e.seq = next_seq_;
    e.time_ns = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                               std::chrono::steady_clock::now() - start_)
                                               .count());
    e.thread = thread_number();
    if (site_ && (e.action == trace_action::alloc || e.action == trace_action::alloc_failed)) {
      e.stack = site_(writer_);
    }
    if (e.action == trace_action::alloc) live_.insert(e.id);
    writer_.write(e);
    ++next_seq_;
  } catch (const std::exception& x) {
    error_ = x.what();
  } catch (...) {
    error_ = "pool_recorder: unknown error";
  }
}

}  // namespace clpool::trace
