// Renders replay reports for people (text, a side-by-side table) and for programs (JSON).
#ifndef CLPOOL_TOOLS_REPLAY_REPORT_FORMAT_H_
#define CLPOOL_TOOLS_REPLAY_REPORT_FORMAT_H_

#include <optional>
#include <string>
#include <vector>

#include "replay/min_capacity.h"
#include "replay/replay.h"
#include "replay/result_json.h"

namespace clpool::replay {

// The full text report of one configuration: the verdict, the first out-of-memory with every
// figure, then peaks, hit rate and allocator calls. `input` names the trace.
// `full_stacks`: under each allocation site (a trace with sites), every frame of its stack.
std::string format_text(const config_result& result, const std::string& input,
                        bool full_stacks = false);

// A table with one column per configuration (for --compare).
std::string format_table(const std::vector<config_result>& results, const std::string& input);

// "" or, when the first configuration's replay saw a trace recorded below a memory pool
// (replay_report::looks_recorded_below_a_pool), a warning saying why comparing pool settings on
// it says nothing and how to record the application's own requests.
std::string pooled_trace_warning(const std::vector<config_result>& results);

}  // namespace clpool::replay

#endif  // CLPOOL_TOOLS_REPLAY_REPORT_FORMAT_H_
