// Replay throughput on a synthetic 10 M-event trace (synth.h, live set ~4096 blocks):
//   bazel run --config=opt //tools/replay:replay_bench
// Each benchmark reports events/s. The trace file is written once to $TMPDIR.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "tools/replay/replay.h"
#include "tools/replay/synth.h"
#include "tools/trace/trace_reader.h"
#include "tools/trace/trace_writer.h"

namespace clpool::replay {
namespace {

constexpr std::uint64_t trace_events = 10'000'000;

const std::string& trace_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    std::string p = std::string(dir ? dir : "/tmp") + "/clpool_replay_bench_10M.trace";
    trace::trace_writer writer(p);
    synthesize({.events = trace_events}, [&](const trace::trace_event& e) { writer.write(e); });
    writer.flush();
    return p;
  }();
  return path;
}

void set_rate(benchmark::State& state, std::uint64_t events) {
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsIterationInvariantRate);
}

// The text reader alone, with its liveness checks.
void BM_ReadText(benchmark::State& state) {
  std::uint64_t n = 0;
  for (auto _ : state) {
    trace::trace_reader reader(trace_path());
    trace::trace_event e;
    n = 0;
    while (reader.next(e)) ++n;
    benchmark::DoNotOptimize(n);
  }
  set_rate(state, n);
}
BENCHMARK(BM_ReadText)->Unit(benchmark::kMillisecond)->MinTime(3);

// What clpool_replay does: stream the file through the pool on an immediate device.
void BM_ReplayFile(benchmark::State& state, replay_config config) {
  std::uint64_t n = 0;
  for (auto _ : state) {
    trace::trace_reader reader(trace_path(), {.check_liveness = false});
    const replay_report r = replay_stream(reader, config, {std::uint64_t{1} << 40, alloc_semantics::immediate});
    n = r.events;
    if (!r.ok()) state.SkipWithError("unexpected out-of-memory");
  }
  set_rate(state, n);
}
BENCHMARK_CAPTURE(BM_ReplayFile, pool_lb4, replay_config{})->Unit(benchmark::kMillisecond)->MinTime(3);
BENCHMARK_CAPTURE(BM_ReplayFile, nopool, replay_config{.use_pool = false})->Unit(benchmark::kMillisecond)->MinTime(3);

// The engine alone, events already in memory.
void BM_ReplayEngine(benchmark::State& state) {
  static const std::vector<trace::trace_event> events = [] {
    std::vector<trace::trace_event> v;
    v.reserve(trace_events);
    synthesize({.events = trace_events}, [&](const trace::trace_event& e) { v.push_back(e); });
    return v;
  }();
  for (auto _ : state) {
    const replay_report r = replay_events(events, {}, {std::uint64_t{1} << 40, alloc_semantics::immediate});
    benchmark::DoNotOptimize(r.events);
  }
  set_rate(state, events.size());
}
BENCHMARK(BM_ReplayEngine)->Unit(benchmark::kMillisecond)->MinTime(3);

}  // namespace
}  // namespace clpool::replay

BENCHMARK_MAIN();
