// The reclaim callbacks a pool calls when out of memory (memory_pool::add_reclaim_callback): the
// registry alone, in registration order, with the ids that remove them. The pool keeps one under
// its lock and walks a copy when it climbs the retry ladder (oom_ladder.h), so that a callback may
// add or remove callbacks, or allocate, without deadlock.
#ifndef CLPOOL_POOL_INTERNAL_RECLAIM_REGISTRY_H_
#define CLPOOL_POOL_INTERNAL_RECLAIM_REGISTRY_H_

#include <memory>
#include <utility>
#include <vector>

#include "pool/errors.h"
#include "pool/pool_types.h"

namespace clpool::internal {

class reclaim_registry {
 public:
  using shared_callback = std::shared_ptr<const reclaim_callback>;

  // Wraps `callback` for add(); throws argument_error when it is empty. Call outside the lock
  // (it allocates).
  static shared_callback wrap(reclaim_callback callback) {
    if (!callback) throw argument_error("add_reclaim_callback: the callback is empty");
    return std::make_shared<const reclaim_callback>(std::move(callback));
  }

  reclaim_callback_id add(shared_callback callback) {
    callbacks_.emplace_back(++next_id_, std::move(callback));
    return next_id_;
  }

  // False when `id` is not registered (never was, or already removed).
  bool remove(reclaim_callback_id id) noexcept {
    for (auto it = callbacks_.begin(); it != callbacks_.end(); ++it) {
      if (it->first == id) {
        callbacks_.erase(it);
        return true;
      }
    }
    return false;
  }

  // Appends the callbacks, oldest first, to `out`.
  void copy_to(std::vector<shared_callback>& out) const {
    for (const auto& entry : callbacks_) out.push_back(entry.second);
  }

 private:
  reclaim_callback_id next_id_ = 0;
  std::vector<std::pair<reclaim_callback_id, shared_callback>> callbacks_;
};

}  // namespace clpool::internal

#endif  // CLPOOL_POOL_INTERNAL_RECLAIM_REGISTRY_H_
