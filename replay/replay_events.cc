// The whole-trace entry points: a trace already in memory through one replayer, event by event
// (replay.cc), with the trace's own release and wait counts added to the report.
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
  for (const trace_event& e : events) {  // the whole input's releases and waits
    report.trace_releases += e.action == trace_action::release ? 1 : 0;
    report.trace_waits += e.action == trace_action::wait ? 1 : 0;
  }
  report.trace_counts_known = true;
  return report;
}
}  // namespace

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
