// The out-of-memory retry ladder: what a pool does, step by step, after an attempt to allocate
// failed, before it gives up. The schedule alone (pool_state carries the steps out):
//   step 0: free held blocks (largest first) worth the shortfall;
//   step 1: free everything held;
//   step 2k + 2: call reclaim callback k (the retry may hit a block it released into this bin);
//   step 2k + 3: free everything held (what callback k released into other bins);
// and out_of_memory when the callbacks run out. The pool skips a step with nothing to free.
#ifndef CLPOOL_POOL_INTERNAL_OOM_LADDER_H_
#define CLPOOL_POOL_INTERNAL_OOM_LADDER_H_

#include <cstddef>

namespace clpool::internal {

struct oom_step {
  enum kind_type { free_shortfall, free_all, reclaim } kind = free_shortfall;
  std::size_t callback = 0;  // for reclaim: which callback, in registration order
};

// Step number `step` of the ladder above.
constexpr oom_step oom_ladder_step(unsigned step) noexcept {
  if (step == 0) return {oom_step::free_shortfall, 0};
  if (step % 2 == 1) return {oom_step::free_all, 0};
  return {oom_step::reclaim, (step - 2) / 2};
}

}  // namespace clpool::internal

#endif  // CLPOOL_POOL_INTERNAL_OOM_LADDER_H_
