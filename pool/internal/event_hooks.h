// The pool's event hook (memory_pool::set_observer): the observer alone, apart from the pool's
// locking and bookkeeping. pool_state keeps one under its lock and announces every event through
// it. Without an observer an announcement is one pointer test and nothing else: the counters an
// event carries are computed only when someone listens, so the hit path pays no more than that.
#ifndef CLPOOL_POOL_INTERNAL_EVENT_HOOKS_H_
#define CLPOOL_POOL_INTERNAL_EVENT_HOOKS_H_

#include <cstdint>
#include <memory>
#include <utility>

#include "pool/pool_types.h"

namespace clpool::internal {

class event_hooks {
 public:
  // Installs `observer` (null removes it) and leaves the previous one in `observer`, so that the
  // caller destroys it after dropping its lock: an observer's destructor may be slow or take
  // locks of its own.
  void swap(std::shared_ptr<pool_observer>& observer) noexcept { observer_.swap(observer); }

  // Whether anyone listens. The pool's release fast path is taken only when nobody does.
  bool active() const noexcept { return observer_ != nullptr; }

  // Announces one event with the counters `source.counters()` returns (a pool_ledger, in the
  // pool), read only when there is an observer: the common case without one must not compute
  // them. A source object rather than a lambda because g++ outlines the lambda (a call where the
  // counters used to be read in place); `counters()` is inline and reads fields.
  template <class CounterSource>
  [[gnu::always_inline]] void notify(pool_event_kind kind, std::uint64_t id, std::uint64_t bytes,
                                     std::uint64_t rounded,
                                     const CounterSource& source) const noexcept {
    if (observer_) [[unlikely]] {
      observer_->on_event(pool_event{kind, id, bytes, rounded, source.counters()});
    }
  }

 private:
  std::shared_ptr<pool_observer> observer_;
};

}  // namespace clpool::internal

#endif  // CLPOOL_POOL_INTERNAL_EVENT_HOOKS_H_
