// The data behind clpool_replay's HTML page (--html, --format html): every block of the trace up
// to the out-of-memory (or its end) with its lifetime, sizes, place and stack, plus the replay's
// timeline, as one JSON object the page's script (html_page.js) draws beside the result document.
#ifndef CLPOOL_TOOLS_REPLAY_HTML_DATA_H_
#define CLPOOL_TOOLS_REPLAY_HTML_DATA_H_

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "replay/replay.h"

namespace clpool::replay_cli {

struct html_limits {
  // At most this many blocks are drawn one by one: the largest (bytes x lifetime). The others are
  // still in the totals; the page says how many were left out.
  std::size_t max_blocks = 50000;
};

// Reads `trace_path` again (through event r.events - 1, the failing one included) and returns the
// page's own data: the blocks, the stacks they name, the timeline, the profile's geometry and, at
// an out-of-memory of a trace with sites, the page rounding split into each block's own and the
// shared pages' free room; without an out-of-memory, "peak": the event at which the live blocks'
// device-committed bytes add up to the most, those bytes, and the sites then (as the result's site
// lists, with callers). The replay's figures are not in it: the page reads them from the
// result document (html_page). `title` heads the page. Throws trace::trace_error if the trace
// cannot be read.
nlohmann::json html_data(const replay::replay_report& r, const std::string& trace_path,
                         const std::string& title, const html_limits& limits = {});

// Which replay of the minimum-capacity search the page shows, when it shows one (a search without
// --capacity): "The replay shown is one granule (1 MiB) below the minimum capacity, 4387 MiB
// (...), ..." or the clean one at the minimum; "" when `first` has a replay at --capacity.
std::string search_replay_note(const replay::config_result& first);

// The script of the page, html_page.js as it is in the source tree (embedded by the build).
extern const char html_page_script[];

// The whole page, three documents inlined with the script and styles; nothing is fetched:
// `result`, the result document exactly as --json writes it (replay/result_json.h); `replay`, the
// replay the page shows in the same schema (to_json(report)); `data`, html_data().
std::string html_page(const nlohmann::json& result, const nlohmann::json& replay,
                      const nlohmann::json& data);

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_HTML_DATA_H_
