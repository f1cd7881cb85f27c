#include "tools/replay/synth.h"

#include <random>
#include <vector>

namespace clpool::replay_cli {

void synthesize(const synth_options& o,
                const std::function<void(const trace::trace_event&)>& sink) {
  std::mt19937_64 rng(o.seed);
  std::vector<std::uint64_t> live;       // ids of live blocks
  std::vector<std::uint64_t> live_size;  // their sizes
  std::vector<std::uint64_t> free_ids;   // ids available for reuse
  std::uint64_t next_id = 1;
  trace::trace_event e;
  const unsigned span = o.max_size_log2 - o.min_size_log2 + 1;
  for (std::uint64_t i = 0; i < o.events; ++i) {
    e.seq = i;
    e.time_ns = i * 250;
    const std::uint64_t remaining = o.events - i;
    // Allocate below the target live set, free above it; near the end, only free.
    const bool must_free = remaining <= live.size();
    const bool alloc = !must_free && (live.empty() || (rng() % (2 * o.live)) >= live.size());
    if (alloc) {
      e.action = trace::trace_action::alloc;
      if (!free_ids.empty()) {
        e.id = free_ids.back();
        free_ids.pop_back();
      } else {
        e.id = next_id++;
      }
      const unsigned bits = o.min_size_log2 + static_cast<unsigned>(rng() % span);
      e.size = (std::uint64_t{1} << bits) + rng() % (std::uint64_t{1} << bits);
      live.push_back(e.id);
      live_size.push_back(e.size);
    } else {
      const std::size_t k = rng() % live.size();
      e.action = trace::trace_action::free;
      e.id = live[k];
      e.size = live_size[k];
      free_ids.push_back(e.id);
      live[k] = live.back();
      live.pop_back();
      live_size[k] = live_size.back();
      live_size.pop_back();
    }
    sink(e);
  }
}

}  // namespace clpool::replay_cli
