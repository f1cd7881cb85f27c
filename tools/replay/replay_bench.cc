// Replay throughput on a synthetic 10 M-event trace (synth.h, live set ~4096 blocks):
//   bazel run --config=opt //tools/replay:replay_bench
// Each benchmark reports events/s (per CPU second). The trace files (text and binary) are
// written once to $TMPDIR before timing starts.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "replay/replay.h"
#include "tools/replay/synth.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace clpool::replay_cli {

using replay::alloc_semantics;
using replay::device_spec;
using replay::replay_config;
using replay::replay_events;
using replay::replay_report;
using replay::replay_stream;
using replay::semantics_of;

namespace {

constexpr std::uint64_t trace_events = 10'000'000;

// The 10 M-event trace in either encoding, written once per run.
const std::string& trace_path(trace::trace_encoding encoding) {
  static std::string paths[2];
  std::string& path = paths[encoding == trace::trace_encoding::binary];
  if (path.empty()) {
    const char* dir = std::getenv("TMPDIR");
    path = std::string(dir ? dir : "/tmp") + "/clpool_replay_bench_10M" +
           (encoding == trace::trace_encoding::binary ? ".bin" : ".trace");
    trace::trace_writer writer(path, encoding);
    synthesize({.events = trace_events}, [&](const trace::trace_event& e) { writer.write(e); });
    writer.commit();
  }
  return path;
}

void set_rate(benchmark::State& state, std::uint64_t events) {
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events),
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

// The text reader alone, with its liveness checks.
void BM_Read(benchmark::State& state, trace::trace_encoding encoding) {
  const std::string& path = trace_path(encoding);  // written before timing starts
  std::uint64_t n = 0;
  for (auto _ : state) {
    trace::trace_reader reader(path);
    trace::trace_event e;
    n = 0;
    while (reader.next(e)) ++n;
    benchmark::DoNotOptimize(n);
  }
  set_rate(state, n);
}
BENCHMARK_CAPTURE(BM_Read, text, trace::trace_encoding::text)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3);
BENCHMARK_CAPTURE(BM_Read, binary, trace::trace_encoding::binary)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3);

// What clpool_replay does: stream the file through the pool on a simulated device with the given
// profile ("exact": every byte once; "nvidia": pages, packing and headroom, deferred as on NVIDIA).
void BM_ReplayFile(benchmark::State& state, replay_config config, trace::trace_encoding encoding,
                   const char* profile) {
  const std::string& path = trace_path(encoding);  // written before timing starts
  device_spec device{std::uint64_t{1} << 40, alloc_semantics::immediate};
  device.profile = device_model::load_profile(profile);
  device.semantics = semantics_of(device.profile);
  std::uint64_t n = 0;
  for (auto _ : state) {
    trace::trace_reader reader(path, {.check_liveness = false});
    const replay_report r = replay_stream(reader, config, device);
    n = r.events;
    if (!r.ok()) state.SkipWithError("unexpected out-of-memory");
  }
  set_rate(state, n);
}
BENCHMARK_CAPTURE(BM_ReplayFile, pool_lb4_text, replay_config{}, trace::trace_encoding::text,
                  "exact")
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3);
BENCHMARK_CAPTURE(BM_ReplayFile, pool_lb4_binary, replay_config{}, trace::trace_encoding::binary,
                  "exact")
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3);
BENCHMARK_CAPTURE(BM_ReplayFile, pool_lb4_binary_nvidia, replay_config{},
                  trace::trace_encoding::binary, "nvidia")
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3);
BENCHMARK_CAPTURE(BM_ReplayFile, nopool_binary, replay_config{.use_pool = false},
                  trace::trace_encoding::binary, "exact")
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3);
BENCHMARK_CAPTURE(BM_ReplayFile, nopool_binary_nvidia, replay_config{.use_pool = false},
                  trace::trace_encoding::binary, "nvidia")
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3);

// The engine alone, events already in memory.
void BM_ReplayEngine(benchmark::State& state) {
  static const std::vector<trace::trace_event> events = [] {
    std::vector<trace::trace_event> v;
    v.reserve(trace_events);
    synthesize({.events = trace_events}, [&](const trace::trace_event& e) { v.push_back(e); });
    return v;
  }();
  for (auto _ : state) {
    const replay_report r =
        replay_events(events, {}, {std::uint64_t{1} << 40, alloc_semantics::immediate});
    benchmark::DoNotOptimize(r.events);
  }
  set_rate(state, events.size());
}
BENCHMARK(BM_ReplayEngine)->Unit(benchmark::kMillisecond)->MinTime(3);

}  // namespace
}  // namespace clpool::replay_cli

BENCHMARK_MAIN();
