// Pool benchmarks (Google Benchmark). Performance targets live here, never in timed tests.
//   bazel run --config=opt //tools/dev/bench:bench -- --benchmark_repetitions=5
//
// 1. Hit path: allocate + release of one size, per pair (the pool is always thread-safe).
// 2. Mixed: log-uniform sizes 1 B .. 64 MiB, ~1000 live blocks, 1 M operations, fixed seed.
// 3. Mixed with the trim policy on; BM_TrimSlowdownInterleaved measures its cost against (2)
//    with both workloads interleaved.
// 4. Scaling: hit-path cost with 1 M held blocks vs 1 k held blocks (BM_ScalingInterleaved measures
//    the ratio with both interleaved).
// 5. Two threads on the hit path of one shared pool.
// 6. A request that fails (the allocator is full, nothing is held): the allocator seam's two forms
//    (pool/allocator.h) times the pool's two entry points, allocate() and try_allocate().
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "pool/memory_pool.h"
#include "pool/testing/fake_allocator.h"

namespace clpool {
namespace {

using testing::counting_allocator;
using pool_t = memory_pool<counting_allocator>;

void BM_HitPath(benchmark::State& state) {
  pool_t pool;
  pool.allocate(4096).release();  // warm: one held block
  for (auto _ : state) {
    auto a = pool.allocate(4096);
    benchmark::DoNotOptimize(a.handle());
  }
  state.counters["ns_per_pair"] =
      benchmark::Counter(static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_HitPath);

// A fixed operation sequence: positive = allocate that many bytes, negative = release the live
// block at index (-op - 1) of a swap-removed vector.
struct workload {
  std::vector<std::int64_t> ops;
};

std::uint64_t log_uniform(std::mt19937_64& rng, unsigned max_exponent) {
  const unsigned e = static_cast<unsigned>(rng() % (max_exponent + 1));
  const std::uint64_t top = std::uint64_t{1} << e;
  return top | (rng() & (top - 1));
}

workload make_mixed(std::size_t operations, std::size_t target_live, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  workload w;
  w.ops.reserve(operations + target_live);
  std::size_t live = 0;
  for (std::size_t i = 0; i < target_live; ++i, ++live) {
    w.ops.push_back(static_cast<std::int64_t>(log_uniform(rng, 26)));  // up to 64 MiB
  }
  for (std::size_t i = 0; i < operations; ++i) {
    // Drift back towards target_live: allocate more when below it, release more when above.
    const bool allocate = live == 0 || (rng() % (2 * target_live)) >= live;
    if (allocate) {
      w.ops.push_back(static_cast<std::int64_t>(log_uniform(rng, 26)));
      ++live;
    } else {
      w.ops.push_back(-static_cast<std::int64_t>(rng() % live) - 1);
      --live;
    }
  }
  return w;
}

const workload& mixed_workload() {
  static const workload w = make_mixed(1'000'000, 1000, 42);
  return w;
}

// Sorts `values` (at least one) and returns their median: the interleaved benchmarks report the
// median of their per-iteration ratios, and min/max as front()/back() afterwards.
double sort_and_median(std::vector<double>& values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Runs w.ops[begin, end) on `pool`, whose live blocks are `live` (the ops' indices refer to it).
void apply_ops(pool_t& pool, std::vector<pool_t::allocation>& live, const workload& w,
               std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    const std::int64_t op = w.ops[i];
    if (op > 0) {
      live.push_back(pool.allocate(static_cast<std::uint64_t>(op)));
    } else {
      const std::size_t index = static_cast<std::size_t>(-op - 1);
      live[index] = std::move(live.back());
      live.pop_back();
    }
  }
}

// Runs `blocks` blocks on each of two sides, run_block(side, block) for side 0 and 1 in turn,
// and returns each side's total seconds. Which side goes first alternates from block to block
// and, through `iteration`, from one iteration to the next, so neither side always meets the
// machine first after a switch. The interleaved benchmarks below use it: this machine's speed
// drifts by up to ~2x within tens of milliseconds, so two benchmarks run one after the other can
// land in different states, while two blocks well under a millisecond apart rarely do.
template <class RunBlock>
std::array<double, 2> interleaved_seconds(std::size_t blocks, std::size_t iteration,
                                          RunBlock&& run_block) {
  std::array<double, 2> seconds{0, 0};
  for (std::size_t n = 0; n < blocks; ++n) {
    for (std::size_t k = 0; k < 2; ++k) {
      const std::size_t side = (n + k + iteration) % 2;
      const auto start = std::chrono::steady_clock::now();
      run_block(side, n);
      const auto stop = std::chrono::steady_clock::now();
      seconds[side] += std::chrono::duration<double>(stop - start).count();
    }
  }
  return seconds;
}

// One pass of the mixed workload on a fresh pool; returns the seconds the operations took (pool
// set-up and teardown excluded) and fills the end-of-run ratios.
struct mixed_result {
  double held_over_live = 0;
  double managed_over_live = 0;
  double hit_rate = 0;
};

double run_mixed_once(const workload& w, const trim_policy& trim, mixed_result& out) {
  auto pool = std::make_unique<pool_t>(counting_allocator{}, pool_options{.trim = trim});
  std::vector<pool_t::allocation> live;
  live.reserve(4096);
  const auto start = std::chrono::steady_clock::now();
  apply_ops(*pool, live, w, 0, w.ops.size());
  const auto stop = std::chrono::steady_clock::now();
  const pool_counters c = pool->counters();
  out.held_over_live = static_cast<double>(c.held_bytes) / static_cast<double>(c.active_bytes);
  out.managed_over_live =
      static_cast<double>(c.managed_bytes) / static_cast<double>(c.active_bytes);
  const pool_statistics s = pool->statistics();
  out.hit_rate = static_cast<double>(s.hits) / static_cast<double>(s.hits + s.misses);
  return std::chrono::duration<double>(stop - start).count();
}

void run_mixed(benchmark::State& state, const trim_policy& trim) {
  const workload& w = mixed_workload();
  mixed_result r;
  for (auto _ : state) state.SetIterationTime(run_mixed_once(w, trim, r));
  state.counters["ns_per_op"] =
      benchmark::Counter(static_cast<double>(state.iterations() * w.ops.size()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["held_over_live"] = r.held_over_live;
  state.counters["managed_over_live"] = r.managed_over_live;
  state.counters["hit_rate"] = r.hit_rate;
}

void BM_Mixed(benchmark::State& state) { run_mixed(state, trim_policy{}); }
BENCHMARK(BM_Mixed)->Unit(benchmark::kMillisecond)->Iterations(3)->UseManualTime();

// The trim policy's held budget as a fraction of active bytes: argument / 100.
void BM_MixedTrimmed(benchmark::State& state) {
  run_mixed(state,
            trim_policy{.max_held_to_active_ratio = static_cast<double>(state.range(0)) / 100});
}
BENCHMARK(BM_MixedTrimmed)
    ->Arg(50)
    ->Arg(100)
    ->Arg(150)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseManualTime();

// Target 3's "at most 15 % slower than the untrimmed run", measured interleaved
// (interleaved_seconds): each iteration runs the workload on an untrimmed and a trimmed (ratio
// 1.5) pool side by side, in blocks of kBlock operations. The reported slowdown is the median over
// iterations of (trimmed time / untrimmed time) - 1. (Each pool's working set is evicted by the
// other's every block, so both run a little colder than BM_Mixed alone.)
void BM_TrimSlowdownInterleaved(benchmark::State& state) {
  constexpr std::size_t kBlock = 10'000;
  const workload& w = mixed_workload();
  const trim_policy trimmed{.max_held_to_active_ratio = 1.5};
  std::vector<double> ratios;
  double held_over_live = 0;
  for (auto _ : state) {
    pool_t pools[2] = {pool_t(counting_allocator{}, pool_options{}),
                       pool_t(counting_allocator{}, pool_options{.trim = trimmed})};
    std::vector<pool_t::allocation> live[2];
    for (auto& l : live) l.reserve(4096);
    const std::size_t blocks = (w.ops.size() + kBlock - 1) / kBlock;
    const std::array<double, 2> seconds =
        interleaved_seconds(blocks, ratios.size(), [&](std::size_t side, std::size_t n) {
          const std::size_t begin = n * kBlock;
          apply_ops(pools[side], live[side], w, begin, std::min(begin + kBlock, w.ops.size()));
        });
    ratios.push_back(seconds[1] / seconds[0]);
    const pool_counters c = pools[1].counters();
    held_over_live = static_cast<double>(c.held_bytes) / static_cast<double>(c.active_bytes);
    state.SetIterationTime(seconds[0] + seconds[1]);
  }
  const double median = sort_and_median(ratios);
  state.counters["slowdown_pct"] = (median - 1) * 100;
  state.counters["min_pct"] = (ratios.front() - 1) * 100;
  state.counters["max_pct"] = (ratios.back() - 1) * 100;
  state.counters["trimmed_held_over_live"] = held_over_live;
}
BENCHMARK(BM_TrimSlowdownInterleaved)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(9)
    ->UseManualTime();

// Hit path over a pool that holds `held` blocks spread over many bins: allocate and release a
// fixed sequence of sizes, all of them hits.
struct held_pool {
  pool_t pool;
  std::vector<std::uint64_t> sizes;  // 4096 sizes of held blocks, replayed in order

  explicit held_pool(std::size_t held) {
    std::mt19937_64 rng(7);
    std::vector<pool_t::allocation> fill;
    fill.reserve(held);
    for (std::size_t i = 0; i < held; ++i) fill.push_back(pool.allocate(log_uniform(rng, 26)));
    for (std::size_t i = 0; i < 4096; ++i) sizes.push_back(fill[rng() % held].size());
  }  // all released: `held` blocks in the pool

  // `pairs` allocate/release pairs, starting at sizes[start].
  void run(std::size_t start, std::size_t pairs) {
    for (std::size_t i = start; i < start + pairs; ++i) {
      auto a = pool.allocate(sizes[i & 4095]);
      benchmark::DoNotOptimize(a.handle());
    }
  }
};

void BM_HitWithHeldBlocks(benchmark::State& state) {
  held_pool p(static_cast<std::size_t>(state.range(0)));
  std::size_t i = 0;
  for (auto _ : state) {
    auto a = p.pool.allocate(p.sizes[i++ & 4095]);
    benchmark::DoNotOptimize(a.handle());
  }
  state.counters["held_blocks"] = static_cast<double>(p.pool.held_blocks());
  state.counters["ns_per_pair"] =
      benchmark::Counter(static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_HitWithHeldBlocks)->Arg(1000)->Arg(1'000'000);

// Target 4 (1 M held blocks ÷ 1 k, at most 1.3), measured interleaved (interleaved_seconds):
// blocks of kBlock hit pairs alternate between the two pools, and the figure is the median over
// iterations of the time ratio.
void BM_ScalingInterleaved(benchmark::State& state) {
  constexpr std::size_t kBlock = 20'000;
  constexpr std::size_t kBlocks = 20;
  held_pool small(1000);
  held_pool large(1'000'000);
  std::vector<double> ratios;
  for (auto _ : state) {
    const std::array<double, 2> seconds =
        interleaved_seconds(kBlocks, ratios.size(), [&](std::size_t side, std::size_t n) {
          (side == 0 ? small : large).run(n * kBlock, kBlock);
        });
    ratios.push_back(seconds[1] / seconds[0]);
    state.SetIterationTime(seconds[0] + seconds[1]);
  }
  state.counters["ratio_1M_over_1k"] = sort_and_median(ratios);
  state.counters["min_ratio"] = ratios.front();
  state.counters["max_ratio"] = ratios.back();
}
BENCHMARK(BM_ScalingInterleaved)->Unit(benchmark::kMillisecond)->Iterations(9)->UseManualTime();

// Two threads on one pool's hit path (each allocates and releases its own block).
pool_t* shared_pool = nullptr;

void BM_HitPathTwoThreads(benchmark::State& state) {
  if (state.thread_index() == 0) {
    shared_pool = new pool_t();
    auto a = shared_pool->allocate(4096);
    auto b = shared_pool->allocate(4096);
  }
  for (auto _ : state) {
    auto a = shared_pool->allocate(4096);
    benchmark::DoNotOptimize(a.handle());
  }
  if (state.thread_index() == 0) {
    delete shared_pool;
    shared_pool = nullptr;
  }
  state.counters["ns_per_pair"] =
      benchmark::Counter(static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_HitPathTwoThreads)->Threads(1)->Threads(2)->UseRealTime();

// A request the allocator refuses, with nothing held to free: one allocator attempt, then
// out-of-memory. kTry: through try_allocate() (no exception), else allocate() (out_of_memory).
// With a throwing allocator, each attempt costs one more exception.
template <class Allocator, bool kTry>
void BM_FailedRequest(benchmark::State& state) {
  Allocator full;
  full.capacity = 0;
  memory_pool<Allocator> pool(std::move(full));
  for (auto _ : state) {
    if constexpr (kTry) {
      auto got = pool.try_allocate(1000);
      benchmark::DoNotOptimize(got);
    } else {
      try {
        auto got = pool.allocate(1000);
        benchmark::DoNotOptimize(got);
      } catch (const out_of_memory& e) {
        benchmark::DoNotOptimize(e.report().rounded_bytes);
      }
    }
  }
  if (pool.statistics().ooms_raised != static_cast<std::uint64_t>(state.iterations())) {
    state.SkipWithError("a request that should have failed did not");
  }
}
using testing::counting_allocator_by_value;
BENCHMARK_TEMPLATE(BM_FailedRequest, counting_allocator, false)
    ->Name("BM_FailedRequest/throwing_allocator/allocate");
BENCHMARK_TEMPLATE(BM_FailedRequest, counting_allocator, true)
    ->Name("BM_FailedRequest/throwing_allocator/try_allocate");
BENCHMARK_TEMPLATE(BM_FailedRequest, counting_allocator_by_value, false)
    ->Name("BM_FailedRequest/by_value_allocator/allocate");
BENCHMARK_TEMPLATE(BM_FailedRequest, counting_allocator_by_value, true)
    ->Name("BM_FailedRequest/by_value_allocator/try_allocate");

}  // namespace
}  // namespace clpool

BENCHMARK_MAIN();
