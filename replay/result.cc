#include "replay/result.h"

namespace clpool::replay {

std::string_view to_string(oom_site site) {
  switch (site) {
    case oom_site::allocator: return "device allocation failed";
    case oom_site::limit: return "pool limit reached";
    case oom_site::first_use: return "deferred allocation failed at first use";
    case oom_site::host: return "host-pinned budget exceeded";
  }
  return "?";
}

}  // namespace clpool::replay
