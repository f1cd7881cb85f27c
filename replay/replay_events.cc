// The whole-trace entry points: a trace already in memory through one replayer, event by event
// (replay.cc), with the trace's own counts added to the report (replay_report::in_trace).
#include "replay/replay.h"

#include <utility>

namespace clpool::replay {

using trace::trace_action;
using trace::trace_event;

namespace {
replay_report replay_all(replayer& r, const std::vector<trace_event>& events) {
  for (const trace_event& e : events) {
    if (!r.apply(e)) break;
  }
  replay_report report = r.report();
  report.in_trace = {};
  for (const trace_event& e : events) report.in_trace.count(e);  // the whole input's
  report.trace_counts_known = true;
  return report;
}
}  // namespace

trace_counts detail::applied_counts(const replay_report& report) {
  trace_counts c;
  c.allocs = report.allocs;
  c.frees = report.frees;
  c.releases = report.releases;
  c.waits = report.waits;
  c.uses = report.uses;
  c.sized_allocs = report.sized_allocs;
  c.bin_sized_allocs = report.bin_sized_allocs;
  return c;
}

replay_report replay_events(const std::vector<trace_event>& events, const replay_config& config,
                            const device_spec& device, const replay_options& options) {
  replayer r(config, device, options);
  return replay_all(r, events);
}

replay_report replay_events(const std::vector<trace_event>& events, const replay_config& config,
                            std::unique_ptr<replay_device> device, const replay_options& options) {
  replayer r(config, std::move(device), options);
  return replay_all(r, events);
}

}  // namespace clpool::replay
