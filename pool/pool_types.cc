#include "pool/pool_types.h"

namespace clpool {

const char* to_string(pool_event_kind kind) {
  switch (kind) {
    case pool_event_kind::hit:
      return "hit";
    case pool_event_kind::miss:
      return "miss";
    case pool_event_kind::release:
      return "release";
    case pool_event_kind::allocator_allocate:
      return "allocator_allocate";
    case pool_event_kind::allocator_failed:
      return "allocator_failed";
    case pool_event_kind::allocator_free:
      return "allocator_free";
    case pool_event_kind::free_held:
      return "free_held";
    case pool_event_kind::stop_holding:
      return "stop_holding";
    case pool_event_kind::oom_retry:
      return "oom_retry";
    case pool_event_kind::reclaim:
      return "reclaim";
    case pool_event_kind::out_of_memory:
      return "out_of_memory";
    case pool_event_kind::trim:
      return "trim";
    case pool_event_kind::limit_changed:
      return "limit_changed";
  }
  return "unknown";
}

}  // namespace clpool
