// Synthetic traces for benchmarks and tests: a steady-state workload whose live set hovers around
// a target size, with request sizes from 2^min_size_log2 to below 2^(max_size_log2 + 1) bytes
// (256 B to 128 MiB by default: a power of two drawn uniformly, plus up to as much again), ids
// reused after free. Deterministic for a seed.
#ifndef CLPOOL_TOOLS_REPLAY_SYNTH_H_
#define CLPOOL_TOOLS_REPLAY_SYNTH_H_

#include <cstdint>
#include <functional>

#include "trace/trace_event.h"

namespace clpool::replay_cli {

struct synth_options {
  std::uint64_t events = 1000000;  // total events
  std::uint64_t live = 4096;       // live blocks the workload hovers around
  unsigned min_size_log2 = 8;      // smallest request: 2^8 bytes
  unsigned max_size_log2 = 26;     // largest request: below 2^27 bytes
  std::uint64_t seed = 1;
};

// Calls `sink` with each event in order; every live block is freed by the end when the event
// budget allows (the last events are frees).
void synthesize(const synth_options& options,
                const std::function<void(const trace::trace_event&)>& sink);

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_SYNTH_H_
