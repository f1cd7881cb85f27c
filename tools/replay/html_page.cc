// The page of --html: one file, the data inlined as JSON, the script (html_page.js, embedded at
// build time) and styles inline; nothing is fetched, so it works from file:// and offline. Drawn
// on a canvas (50,000 blocks stay fast); the parts a test or a screen reader looks for (the
// out-of-memory marker, the tooltip, the tables) are DOM elements.
#include <string>

#include "tools/replay/html_data.h"

namespace clpool::replay_cli {
namespace {

constexpr const char* page_head = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>clpool_replay</title>
<style>
body{font:14px system-ui,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:18px;margin:0 0 4px} .sub{color:#555;margin-bottom:8px}
#oom-summary{color:#b00;font-weight:600;margin:6px 0}
#controls{display:flex;gap:12px;align-items:center;flex-wrap:wrap;margin:8px 0}
#wrap{position:relative;border:1px solid #ccc;user-select:none}
canvas{display:block;width:100%;height:460px;cursor:crosshair}
#oom-marker{position:absolute;top:0;bottom:0;width:0;border-left:2px solid #d00;pointer-events:none}
#oom-marker span{position:absolute;top:2px;right:4px;color:#d00;font-weight:700;background:#fffc;padding:0 2px}
#tooltip{position:absolute;display:none;pointer-events:none;background:#fff;border:1px solid #888;
 box-shadow:0 2px 6px #0003;padding:6px 8px;max-width:560px;font-size:12px;z-index:2}
#rounding{margin:6px 0;font-size:13px} #rounding b{font-weight:600}
#detail{white-space:pre-wrap;font:12px ui-monospace,monospace;background:#f6f6f6;padding:8px;min-height:2em}
.frames{font:12px ui-monospace,monospace;white-space:pre-wrap;margin-top:4px}
table{border-collapse:collapse;margin:6px 0} td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
td.site,th.site{text-align:left} #legend span{display:inline-block;margin-right:14px}
#legend i{display:inline-block;width:18px;height:3px;vertical-align:middle;margin-right:4px}
#legend i.band{height:10px;border:1px solid #999}
.note{color:#555;font-size:12px}
#capacity-sum td{border:none;padding:1px 8px} #capacity-sum td.what{text-align:left}
#capacity-sum tr.total td{border-top:1px solid #999;font-weight:600}
button.expand{border:none;background:none;cursor:pointer;font:inherit;padding:0 4px 0 0;width:1.4em}
tr.caller td.site{color:#444} tr.caller td{background:#fafafa}
</style></head><body>
<h1 id="title"></h1><div class="sub" id="subtitle"></div><div class="sub" id="search-note"></div><div id="oom-summary"></div>
<div id="controls">
 <label>View <select id="mode"><option value="blocks">live blocks (address layout)</option>
 <option value="sites">grouped by allocation site</option></select></label>
 <label>Sizes <select id="measure"><option value="committed">device-committed (page rounding)</option>
 <option value="rounded">pool bin (bin rounding)</option><option value="size">requested</option></select></label>
 <label><input type="checkbox" id="show-rounding" checked> show rounding</label>
 <button id="zoom-in">zoom in</button><button id="zoom-out">zoom out</button><button id="reset">reset zoom</button>
 <span class="note">wheel: zoom, drag: pan, click a block: details</span>
</div>
<div id="wrap"><canvas id="chart"></canvas><div id="oom-marker"><span>OOM</span></div><div id="tooltip"></div></div>
<div id="legend"></div>
<p class="note" id="sampling-note"></p>
<div id="rounding"></div>
<div id="sum-wrap"><h2 style="font-size:15px">The capacity at the failure, summed</h2>
<table id="capacity-sum"><tbody></tbody></table><p id="request-need"></p></div>
<h2 style="font-size:15px">Selected block</h2><div id="detail">click a block</div>
<h2 style="font-size:15px" id="top-sites-title">Sites holding the most device memory at the failure</h2>
<table id="top-sites"><thead><tr><th>#</th><th class="site">site (innermost program frame; &#9656; its callers)</th><th>requested</th><th>pool bin</th><th>device-committed</th><th>blocks</th></tr></thead><tbody></tbody></table>
<div id="held-wrap"><h2 style="font-size:15px">Sites whose freed blocks the pool still held</h2>
<table id="held-sites"><thead><tr><th>#</th><th class="site">site</th><th>requested</th><th>pool bin</th><th>device-committed</th><th>blocks</th></tr></thead><tbody></tbody></table></div>
<script type="application/json" id="clpool-result">)HTML";

// JSON inside <script>: a "</script" ends the element early, and "<!--" then "<script" puts the
// tokenizer in a state where the element's own end tag does not end it: no '<' at all, then. In
// JSON text '<' appears only inside strings, where "\u003c" is the same character.
std::string script_safe(const nlohmann::json& j) {
  const std::string json = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string safe;
  safe.reserve(json.size());
  for (const char c : json) {
    if (c == '<') {
      safe += "\\u003c";
    } else {
      safe += c;
    }
  }
  return safe;
}

}  // namespace

std::string html_page(const nlohmann::json& result, const nlohmann::json& replay,
                      const nlohmann::json& data) {
  return std::string(page_head) + script_safe(result) +
         "</script>\n<script type=\"application/json\" id=\"clpool-replay\">" +
         script_safe(replay) + "</script>\n<script type=\"application/json\" id=\"clpool-data\">" +
         script_safe(data) + "</script>\n<script>\n" + html_page_script +
         "</script></body></html>\n";
}

}  // namespace clpool::replay_cli
