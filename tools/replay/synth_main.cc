// clpool_synth_trace: writes a synthetic clpool trace (see synth.h), e.g. the 10 M-event trace
// the throughput figures in README.md were measured on.
#include <optional>

#include <CLI/CLI.hpp>

#include "common/cli.h"
#include "common/cli11.h"
#include "tools/replay/synth.h"
#include "trace/trace_writer.h"

int main(int argc, char** argv) {
  CLI::App app{"clpool_synth_trace: writes a synthetic steady-state allocation trace"};
  clpool::replay_cli::synth_options o;
  std::string out;
  app.add_option("output", out, "trace file to write")->required();
  app.add_option("--events", o.events, "number of events (default 1000000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  app.add_option("--live", o.live, "live blocks to hover around (default 4096)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 32));
  app.add_option("--seed", o.seed, "random seed (default 1)");
  app.add_option("--min-size-bits", o.min_size_log2,
                 "requests are at least 2^N bytes (default 8: 256 B)")
      ->check(CLI::Range(0u, 40u));
  app.add_option("--max-size-bits", o.max_size_log2,
                 "requests are below 2^(N+1) bytes (default 26: up to 128 MiB)")
      ->check(CLI::Range(0u, 40u));
  bool binary = false;
  app.add_flag("--binary", binary, "write the compact binary form instead of text");
  if (const std::optional<int> rc =
          clpool::common::parse_cli(app, argc, argv, "clpool_synth_trace"))
    return *rc;
  if (o.min_size_log2 > o.max_size_log2) {
    return clpool::common::report_usage_error(
        "clpool_synth_trace", "--min-size-bits (" + std::to_string(o.min_size_log2) +
                                  ") is above --max-size-bits (" + std::to_string(o.max_size_log2) +
                                  ")");
  }
  try {
    clpool::trace::trace_writer writer(
        out, binary ? clpool::trace::trace_encoding::binary : clpool::trace::trace_encoding::text,
        "output");
    writer.comment("source", "clpool_synth_trace");
    clpool::replay_cli::synthesize(o,
                                   [&](const clpool::trace::trace_event& e) { writer.write(e); });
    writer.commit();
  } catch (const std::exception& e) {
    return clpool::common::report_usage_error("clpool_synth_trace", e.what());
  }
  return 0;
}
