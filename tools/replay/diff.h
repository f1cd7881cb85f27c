// clpool_replay --diff OLD NEW: two traces of one program (before and after a change) side by
// side: each configuration's peak device memory and minimum capacity in both, and the allocation
// sites whose memory grew most; with --max-growth P%, a gate that exits 1 when a configuration
// needs more than P% more than before. Text and JSON through --format, as every report.
//
// main.cc hands run_diff a function that replays one trace with the command line's device and
// configurations and returns what clpool_replay would report for it (run_output, with the
// unbounded replay and the --min-capacity search of every configuration).
#ifndef CLPOOL_TOOLS_REPLAY_DIFF_H_
#define CLPOOL_TOOLS_REPLAY_DIFF_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "replay/result.h"
#include "replay/site_names.h"
#include "tools/replay/command_line.h"
#include "tools/replay/output_writer.h"

namespace clpool::replay {

// "5%", "2.5 %", "0%" -> 0.05, 0.025, 0. Throws common::usage_error naming --max-growth for
// anything else (a missing '%', a negative or non-finite number).
double parse_growth(const std::string& text);

// One line of a site (a site name, as the report names it: "Cache.put (app.py:17)") at the site's
// peak: the bytes its live blocks asked for then, and its callers that held them (site_names.h
// callers_of: the report's "called from" tree).
struct site_line {
  std::string name;
  std::uint64_t bytes = 0;
  std::uint64_t blocks = 0;
  std::vector<caller_usage> callers;
};

// One allocation site's highest live memory over a trace: the bytes its live blocks (buffer and
// SVM: device memory) asked for, at the site's own peak.
struct site_peak {
  std::string key;   // what matches it across traces: the naming frame's function and file name
  std::string name;  // "Cache.put (app.py:17)": its line holding the most at the peak
  std::uint64_t peak_bytes = 0;
  std::vector<site_line> lines;  // what each of its lines held at the peak, largest first
};

// Per site of `trace_path` (FORMAT.md "Sites"; one entry, "(no stack recorded)", for a trace
// without them), largest peak first. `library_patterns`: --library-frames. `moment`: where a
// version-3 trace's frees fall (free_schedule.h), as the replays had them.
std::vector<site_peak> site_peaks(const std::string& trace_path,
                                  const std::vector<std::string>& library_patterns,
                                  free_moment moment = free_moment::driver);

// A site in both traces (or one): its peak before and after, named by the line that holds the
// change: the line whose live bytes at the site's peak grew most (for a site that shrank, fell
// most), in the trace that has more of it, with its callers there.
struct site_change {
  std::string name;  // "Cache.put (app.py:18)"
  std::vector<caller_usage> callers;
  std::uint64_t old_bytes = 0, new_bytes = 0;
  std::int64_t change() const {
    return static_cast<std::int64_t>(new_bytes) - static_cast<std::int64_t>(old_bytes);
  }
};

// One configuration's figures in both traces.
struct config_change {
  std::string config;  // "nopool", "pool:lb=4", ...
  std::uint64_t old_peak = 0, new_peak = 0;  // device bytes on an unbounded device
  std::optional<std::uint64_t> old_min, new_min;  // minimum capacity; none when no capacity helps
};

struct diff_result {
  std::string old_path, new_path;
  std::string device;  // "sim, deferred allocation, nvidia profile"
  std::uint64_t granule = 0;
  std::vector<config_change> configs;
  std::vector<site_change> sites;  // largest growth first (then largest shrink last)
  std::optional<double> max_growth;
  std::vector<std::string> over;   // with max_growth: what grew more than it allows

  bool passed() const { return over.empty(); }
};

// (new - old) / old; +infinity when old is 0 and new is not; 0 when both are.
double growth(std::uint64_t old_value, std::uint64_t new_value);

// Compares two runs and their sites; fills `over` when `max_growth` is given.
diff_result compare_runs(const std::string& old_path, const run_output& old_run,
                         const std::vector<site_peak>& old_sites, const std::string& new_path,
                         const run_output& new_run, const std::vector<site_peak>& new_sites,
                         std::optional<double> max_growth);

std::string diff_text(const diff_result& d, std::size_t top_sites = 5);
nlohmann::json diff_json(const diff_result& d);

// The whole of `clpool_replay --diff OLD NEW`: checks the command line (no other input, no
// --capacity, only text and json outputs, no output onto an input), replays both traces with
// `replay`, writes the outputs, and returns the exit status (0; 1 when --max-growth is exceeded).
// Throws common::usage_error for a bad command line.
int run_diff(const command_line& cl, const std::function<run_output(const std::string&)>& replay);

}  // namespace clpool::replay

#endif  // CLPOOL_TOOLS_REPLAY_DIFF_H_
