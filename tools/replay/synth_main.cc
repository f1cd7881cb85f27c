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
  bool binary = false;
  app.add_flag("--binary", binary, "write the compact binary form instead of text");
  if (const std::optional<int> rc =
          clpool::common::parse_cli(app, argc, argv, "clpool_synth_trace"))
    return *rc;
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
