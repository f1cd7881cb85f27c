// Allocation sites in clpool_replay's text report: which code holds the memory at an
// out-of-memory (replay_options::sites, FORMAT.md "Sites"); the names come from
// replay/site_names.h, as in the JSON and the page.
#ifndef CLPOOL_TOOLS_REPLAY_SITE_REPORT_H_
#define CLPOOL_TOOLS_REPLAY_SITE_REPORT_H_

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "replay/result.h"
#include "replay/site_names.h"

namespace clpool::replay_cli {

// A site's callers that hold the most, as the report writes them under a site: "called from" and
// `what` (" (bytes in pool bins)"), then each caller with its bytes (rounded: the pool's bins) and
// blocks, its callers indented beneath; nothing for no callers.
void callers_text(std::ostringstream& out, const std::vector<replay::caller_usage>& callers,
                  const std::string& what, std::size_t indent = 7);

// The sites part of an out-of-memory's text report (nothing when the replay kept no sites): the
// `top` sites holding the most live memory, then (with a pool) those whose freed blocks the pool
// held, and the failing request's own site. `full_stacks`: every frame under each site.
void sites_text(std::ostringstream& out, const replay::replay_report& r, bool full_stacks,
                std::size_t top = 5);

// With --peak: what was live at the peak and at the end, and (with sites) the `top` sites that
// held it at each.
void peak_and_end_text(std::ostringstream& out, const replay::replay_report& r, bool full_stacks,
                       std::size_t top = 5);

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_SITE_REPORT_H_
