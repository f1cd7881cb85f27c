// When each block is free under a replay's rule (FORMAT.md "Two moments of a free";
// result.h's free_moment): the one place that reads a version-3 trace's release and wait events,
// for the engine and for the page's block lifetimes (tools/replay/html_data.cc).
//
//   free_schedule s(free_moment::wait);
//   s.on_event(e, [&](std::uint64_t id) { give_back(id); });   // every event, in trace order
//
// `release`: a block is free at its release event, and its later `free` does nothing. `wait`: at
// the first wait event after its release, or at its `free` when that comes first. `driver`: at its
// `free`, as recorded. A block without a release (versions 1 and 2, a pool's frees, clSVMFree) is
// free at its `free` under every rule. Liveness is the caller's to check (it knows which ids are
// live); a second release of a block still live is an error here.
#ifndef CLPOOL_REPLAY_FREE_SCHEDULE_H_
#define CLPOOL_REPLAY_FREE_SCHEDULE_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "replay/result.h"
#include "trace/id_map.h"
#include "trace/trace_event.h"

namespace clpool::replay {

class free_schedule {
 public:
  explicit free_schedule(free_moment moment) : moment_(moment) {}

  free_moment moment() const noexcept { return moment_; }

  // True while `id` was freed early (at its release or a wait) and its `free` has not come: the
  // trace still holds it live, so an alloc of it is an error.
  bool freed_early(std::uint64_t id) noexcept {
    if (state_.empty()) return false;
    const std::uint8_t* s = state_.find(id);
    return s != nullptr && *s == freed;
  }

  // Calls `free_now(id)` for each block that is free at `e` under the rule (none, one, or, at a
  // wait, every block released since the last). Throws std::invalid_argument for a second release.
  template <class FreeNow>
  void on_event(const trace::trace_event& e, FreeNow&& free_now) {
    switch (e.action) {
      case trace::trace_action::free: {
        std::uint8_t s = 0;
        if (state_.empty() || !state_.erase(e.id, &s) || s != freed) free_now(e.id);
        return;
      }
      case trace::trace_action::release: {
        if (state_.find(e.id) != nullptr) {
          throw std::invalid_argument("release of id " + std::to_string(e.id) +
                                      ", which was already released (a block is released once, "
                                      "then freed)");
        }
        if (moment_ == free_moment::release) {
          free_now(e.id);
          state_.insert(e.id, freed);
        } else {
          state_.insert(e.id, released);
          if (moment_ == free_moment::wait) waiting_.push_back(e.id);
        }
        return;
      }
      case trace::trace_action::wait:
        if (moment_ != free_moment::wait) return;
        for (const std::uint64_t id : waiting_) {
          std::uint8_t* s = state_.find(id);
          if (s == nullptr || *s != released) continue;  // its `free` came first
          free_now(id);
          *s = freed;
        }
        waiting_.clear();
        return;
      default:
        return;
    }
  }

 private:
  static constexpr std::uint8_t released = 1;  // released, not yet free under the rule
  static constexpr std::uint8_t freed = 2;     // free under the rule; its `free` is still to come
  free_moment moment_;
  trace::flat_id_map<std::uint8_t> state_;  // blocks released and not yet `free`d in the trace
  std::vector<std::uint64_t> waiting_;      // released since the last wait (rule `wait`)
};

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_FREE_SCHEDULE_H_
