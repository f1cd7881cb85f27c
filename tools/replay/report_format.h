// Renders replay reports for people (text, a side-by-side table) and for programs (JSON).
#ifndef CLPOOL_TOOLS_REPLAY_REPORT_FORMAT_H_
#define CLPOOL_TOOLS_REPLAY_REPORT_FORMAT_H_

#include <optional>
#include <string>
#include <vector>

#include "replay/min_capacity.h"
#include "replay/replay.h"
#include "replay/result_json.h"

namespace clpool::replay_cli {

// "1.50 MiB (1572864 bytes)", or "unlimited": both, so people can read it and scripts can grep it.
std::string bytes_both(std::uint64_t bytes);

// "1 block", "2 blocks": the count and `what`, with "s" (or `plural`) after a count other than 1.
std::string counted(std::uint64_t n, const std::string& what, const std::string& plural = "");

// A size written exactly, "4099 MiB (4298113024 bytes)", with its largest unit only where that is
// exact too ("4194304 TiB = 4 EiB (...)"), never rounded ("4.00 GiB" would hide that 4099 MiB is
// more than 4 GiB); in bytes alone when no larger unit writes it exactly ("3 bytes"). Without
// `with_bytes`, the "(N bytes)" is left out.
std::string exact_size_text(std::uint64_t bytes, bool with_bytes = true);

// The two names of what an out-of-memory left of the capacity, the same in the text report, the
// page and the JSON (capacity_sum's free_to_program_bytes and driver_headroom_bytes): what a
// request could still have had, and what the driver keeps and never hands out (the profile's).
inline constexpr char free_to_program_name[] = "free to the program";
inline constexpr char driver_headroom_name[] = "the driver's headroom";

// One line of the capacity at an out-of-memory, summed (result.h capacity_sum): "+", the bytes,
// what they are; `total` for the "=" lines. The text report and the page write these same rows.
struct capacity_sum_row {
  std::string op;  // "", "+" or "="
  std::uint64_t bytes = 0;
  std::string what;
  bool total = false;
};
std::vector<capacity_sum_row> capacity_sum_rows(const replay::capacity_sum& s,
                                                const replay::replay_report& r);

// The line under the sum: what the failing request needed on the device against what was free to
// the program (or, for the pool's limit or the host budget, what it was refused against).
std::string capacity_request_text(const replay::capacity_sum& s, const replay::replay_report& r);

// "not in the sum: ..." when blocks no command has used hold nothing on the device (a version-4
// trace on a device that commits at first use): live ones, and freed ones the pool holds; else "".
std::string capacity_unused_text(const replay::capacity_sum& s);

// "the program's release (...) (...); releases up to the failure: 23 of 74; waits up to the
// failure: 1 of 1": which moment of each free the replay used and how many releases and waits it
// saw, against the whole trace's; "" for a trace without release or wait events.
std::string frees_at_text(const replay::replay_report& r);

// The full text report of one configuration: the verdict, the first out-of-memory with every
// figure, then peaks, hit rate and allocator calls. `input` names the trace.
// `full_stacks`: under each allocation site (a trace with sites), every frame of its stack.
std::string format_text(const replay::config_result& result, const std::string& input,
                        bool full_stacks = false);

// --trials (config_result::trials): how many were clean, where the result changes, then one line
// per trial ("279168 KiB (285868032 bytes): clean"; on a real device with its own account of the
// trial's start); and the table's "65 of 129".
std::string format_trials_text(const replay::config_result& result);
std::string trials_clean_text(const replay::config_result& result);

// A table with one column per configuration (for --compare).
std::string format_table(const std::vector<replay::config_result>& results,
                         const std::string& input);

// "" or, when the first configuration's replay saw a trace recorded below a memory pool
// (replay_report::looks_recorded_below_a_pool), a warning saying why comparing pool settings on
// it says nothing and how to record the application's own requests.
std::string pooled_trace_warning(const std::vector<replay::config_result>& results);

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_REPORT_FORMAT_H_
