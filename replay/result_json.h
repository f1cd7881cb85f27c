// The result model (result.h) as JSON, one versioned schema: clpool_replay's --json, the document
// its --html page embeds, and the dict Python's clpool.replay returns. Byte counts as integers.
#ifndef CLPOOL_REPLAY_RESULT_JSON_H_
#define CLPOOL_REPLAY_RESULT_JSON_H_

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "replay/result.h"
#include "replay/site_names.h"

namespace clpool::replay {

// The version of the JSON document (to_json(results, ...), "schema_version"): raised whenever a
// key is removed or changes meaning; new keys may appear without it. tools/replay/README.md
// ("The JSON document") lists the keys.
// Version 2: the capacity sum's free_bytes and headroom_bytes are free_to_program_bytes and
// driver_headroom_bytes (the names every output gives them), and frees_at's releases and waits
// are releases_replayed and waits_replayed beside the whole trace's releases_in_trace and
// waits_in_trace.
inline constexpr int result_schema_version = 2;

// The same content as JSON (stable keys, byte counts as integers).
nlohmann::json to_json(const replay_report& report);
nlohmann::json to_json(const min_capacity_result& result);
nlohmann::json to_json(const std::vector<config_result>& results, const std::string& input,
                       int exit_code);

// When released blocks were free in `r` (FORMAT.md "Two moments of a free"): {"moment": "release"
// | "wait" | "driver", "given": whether --frees-at chose it (else the profile did),
// "releases_replayed", "waits_replayed": the events the replay applied (up to its failure),
// "releases_in_trace", "waits_in_trace": the whole trace's (null when the rest after a failure
// could not be read)}. Written where the replay saw release or wait events.
nlohmann::json frees_at_json(const replay_report& r);

// The capacity at an out-of-memory, summed (result.h, capacity_sum): live_requested_bytes +
// bin_rounding_bytes + held_bytes + page_rounding_bytes + other_bytes = device_used_bytes;
// device_used_bytes + driver_headroom_bytes (null on a real device: its own is in free) +
// free_to_program_bytes = capacity_bytes; and the failing request's request_rounded_bytes,
// request_device_bytes, request_takes_new_shared_page. Under `oom` as `capacity_sum`, absent on an
// unbounded device.
nlohmann::json capacity_sum_json(const capacity_sum& s);

// A site's callers (site_names.h callers_of) as the JSON's "callers": each {"caller", the byte
// figures, "blocks", "callers"}.
nlohmann::json callers_json(const std::vector<caller_usage>& callers);

// Per-stack usages `raw` as the JSON's site list: merged by site (site_names.h), the `top`
// largest, each with its `stack`, `site`, `frames`, byte figures, `blocks` and `callers`.
nlohmann::json site_usage_json(const std::vector<site_usage>& raw, const trace::site_table* sites,
                               std::size_t top = 20);

// The sites of an out-of-memory into its JSON object `oom`: {"site", "frames", "stack"} of the
// failing request and the lists of the `top` sites (nothing when the replay kept no sites).
void sites_json(nlohmann::json& oom, const replay_report& r, std::size_t top = 20);

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_RESULT_JSON_H_
