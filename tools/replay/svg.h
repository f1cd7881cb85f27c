// A self-contained SVG timeline of a replay: active, held and managed bytes (and device use)
// against the device capacity, with the out-of-memory point marked. No scripts, no external
// files: it opens in any browser.
#ifndef CLPOOL_TOOLS_REPLAY_SVG_H_
#define CLPOOL_TOOLS_REPLAY_SVG_H_

#include <string>

#include "replay/replay.h"

namespace clpool::replay_cli {

// The SVG text for `report`, which must have been run with replay_options::timeline (an empty
// timeline gives an empty chart with its axes). `title` heads the picture (XML-escaped here).
// When the replay ran out of memory, a second plot below the first zooms on the failure
// (report.timeline_tail: the events just before it, one point each).
// The number of points drawn is the timeline's, which replay bounds.
std::string render_svg(const replay::replay_report& report, const std::string& title);

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_SVG_H_
