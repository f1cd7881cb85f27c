// The data behind clpool_replay's HTML page (--html, --format html): every block of the trace up
// to the out-of-memory (or its end) with its lifetime, sizes, place and stack, plus the replay's
// timeline and the sites at the failure, as one JSON object the page's script draws.
#ifndef CLPOOL_TOOLS_REPLAY_HTML_DATA_H_
#define CLPOOL_TOOLS_REPLAY_HTML_DATA_H_

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "replay/replay.h"

namespace clpool::replay {

struct html_limits {
  // At most this many blocks are drawn one by one: the largest (bytes x lifetime). The others are
  // still in the totals; the page says how many were left out.
  std::size_t max_blocks = 50000;
};

// Reads `trace_path` again (through event r.events - 1, the failing one included) and returns the
// page's data. `title` heads the page. Throws trace::trace_error if the trace cannot be read.
nlohmann::json html_data(const replay_report& r, const std::string& trace_path,
                         const std::string& title, const html_limits& limits = {});

// The whole page: `data` (html_data) inlined with the script and styles; nothing is fetched.
std::string html_page(const nlohmann::json& data);

}  // namespace clpool::replay

#endif  // CLPOOL_TOOLS_REPLAY_HTML_DATA_H_
