// The diff of two traces of one program (before and after a change), the engine's model of it:
// each configuration's peak device memory and minimum capacity in both, the allocation sites whose
// memory grew most, and the --max-growth gate; and its JSON, one versioned document (as
// result_json.h's). clpool_replay --diff (tools/replay/diff_command.h) replays both traces on its
// device and writes this model as text or JSON; Python's clpool.replay.diff replays them on the
// simulated device and returns the JSON as a dict (python/replay_binding.cc).
#ifndef CLPOOL_REPLAY_DIFF_H_
#define CLPOOL_REPLAY_DIFF_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "replay/result.h"
#include "replay/site_names.h"

namespace clpool::replay {

// The version of the diff's JSON document (diff_json, "schema_version"): raised whenever a key is
// removed or changes meaning; new keys may appear without it. tools/replay/README.md ("Two traces
// of one program") lists the keys. A site's "callers" are result_json.h's callers_json: a change
// there that raises result_schema_version raises this one too.
// Version 1: the first with a schema_version (the document had the same keys before, unversioned).
inline constexpr int diff_schema_version = 1;

// "5%", "2.5 %", "0%" -> 0.05, 0.025, 0. Throws common::usage_error naming `what` (the option or
// argument that gave it) for anything else (a missing '%', a negative or non-finite number).
double parse_growth(const std::string& text, const std::string& what = "--max-growth");

// (new - old) / old; +infinity when old is 0 and new is not; 0 when both are.
double growth(std::uint64_t old_value, std::uint64_t new_value);

// A growth as the text and the gate's messages write it: "+4.0%", "-50.0%", "new" (from 0).
std::string growth_percent(double g);

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
  std::string config;                             // "nopool", "pool:lb=4", ...
  std::uint64_t old_peak = 0, new_peak = 0;       // device bytes on an unbounded device
  std::optional<std::uint64_t> old_min, new_min;  // minimum capacity; none when no capacity helps
  // The event a request above the device's maximum allocation stopped the replay at (--max-alloc:
  // oom_site::max_alloc): the peak is of the events before it. None when nothing was refused.
  std::optional<std::uint64_t> old_refused, new_refused;
};

struct diff_result {
  std::string old_path, new_path;
  std::string device;  // "sim, deferred allocation, nvidia profile"
  std::uint64_t granule = 0;
  std::vector<config_change> configs;
  std::vector<site_change> sites;  // largest growth first (then largest shrink last)
  std::optional<double> max_growth;
  std::vector<std::string> over;  // with max_growth: what grew more than it allows

  bool passed() const { return over.empty(); }
};

// Compares two traces' replays and their sites; fills `over` when `max_growth` is given. Each
// run is one config_result per configuration, in the same order in both: the replay on an
// unbounded device (its peak) and the minimum-capacity search.
diff_result compare_runs(const std::string& old_path, const std::vector<config_result>& old_run,
                         const std::vector<site_peak>& old_sites, const std::string& new_path,
                         const std::vector<config_result>& new_run,
                         const std::vector<site_peak>& new_sites, std::optional<double> max_growth);

// The whole diff once both traces are replayed: each trace's sites (its frees where its replays
// put them, FORMAT.md "Two moments of a free"), then compare_runs.
diff_result diff_traces(const std::string& old_path, const std::vector<config_result>& old_run,
                        const std::string& new_path, const std::vector<config_result>& new_run,
                        const std::vector<std::string>& library_patterns,
                        std::optional<double> max_growth);

// The diff as its versioned JSON document: "schema_version" (diff_schema_version), "old", "new",
// "device", "granule_bytes", "configurations", "sites", "max_growth", "exceeded", "passed".
nlohmann::json diff_json(const diff_result& d);

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_DIFF_H_
