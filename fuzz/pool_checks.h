// Comparisons shared by the fuzzers that check a memory_pool against a reference model
// (pool_ops_fuzzer, pool_mockcl_fuzzer).
#ifndef CLPOOL_FUZZ_POOL_CHECKS_H_
#define CLPOOL_FUZZ_POOL_CHECKS_H_

#include "pool/pool_types.h"

namespace clpool::fuzz {

// Calls expect(name, pool's value, model's value) for every field of pool_counters and of
// pool_statistics, named "counters.<field>" and "statistics.<field>". What a mismatch does is
// the caller's: both fuzzers abort with their operation report. Inline, so a caller whose expect
// is an inline compare pays one comparison per field and nothing else.
template <class Expect>
[[gnu::always_inline]] inline void expect_counters_and_statistics(const pool_counters& c,
                                                                  const pool_statistics& s,
                                                                  const pool_counters& want_c,
                                                                  const pool_statistics& want_s,
                                                                  Expect&& expect) {
  expect("counters.held_blocks", c.held_blocks, want_c.held_blocks);
  expect("counters.held_bytes", c.held_bytes, want_c.held_bytes);
  expect("counters.active_blocks", c.active_blocks, want_c.active_blocks);
  expect("counters.active_bytes", c.active_bytes, want_c.active_bytes);
  expect("counters.active_rounded_bytes", c.active_rounded_bytes, want_c.active_rounded_bytes);
  expect("counters.managed_bytes", c.managed_bytes, want_c.managed_bytes);
  expect("counters.limit_bytes", c.limit_bytes, want_c.limit_bytes);
  expect("statistics.hits", s.hits, want_s.hits);
  expect("statistics.misses", s.misses, want_s.misses);
  expect("statistics.allocator_allocations", s.allocator_allocations, want_s.allocator_allocations);
  expect("statistics.allocator_failures", s.allocator_failures, want_s.allocator_failures);
  expect("statistics.allocator_frees", s.allocator_frees, want_s.allocator_frees);
  expect("statistics.oom_retries", s.oom_retries, want_s.oom_retries);
  expect("statistics.ooms_raised", s.ooms_raised, want_s.ooms_raised);
  expect("statistics.blocks_trimmed", s.blocks_trimmed, want_s.blocks_trimmed);
  expect("statistics.bytes_trimmed", s.bytes_trimmed, want_s.bytes_trimmed);
  expect("statistics.peak_active_bytes", s.peak_active_bytes, want_s.peak_active_bytes);
  expect("statistics.peak_managed_bytes", s.peak_managed_bytes, want_s.peak_managed_bytes);
  expect("statistics.reclaim_calls", s.reclaim_calls, want_s.reclaim_calls);
}

}  // namespace clpool::fuzz

#endif  // CLPOOL_FUZZ_POOL_CHECKS_H_
