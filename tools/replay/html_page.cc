// The page of --html: one file, the data inlined as JSON, the script and styles inline; nothing is
// fetched, so it works from file:// and offline. Drawn on a canvas (50,000 blocks stay fast);
// the parts a test or a screen reader looks for (the out-of-memory marker, the tooltip, the
// tables) are DOM elements.
#include <string>

#include "tools/replay/html_data.h"

namespace clpool::replay {
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
.note{color:#555;font-size:12px}
</style></head><body>
<h1 id="title"></h1><div class="sub" id="subtitle"></div><div id="oom-summary"></div>
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
<h2 style="font-size:15px">Selected block</h2><div id="detail">click a block</div>
<h2 style="font-size:15px">Sites holding the most device memory at the failure</h2>
<table id="top-sites"><thead><tr><th>#</th><th class="site">site (innermost program frame)</th><th>requested</th><th>pool bin</th><th>device-committed</th><th>blocks</th></tr></thead><tbody></tbody></table>
<div id="held-wrap"><h2 style="font-size:15px">Sites whose freed blocks the pool still held</h2>
<table id="held-sites"><thead><tr><th>#</th><th class="site">site</th><th>requested</th><th>pool bin</th><th>device-committed</th><th>blocks</th></tr></thead><tbody></tbody></table></div>
<script type="application/json" id="clpool-data">)HTML";

constexpr const char* page_tail = R"HTML(</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("clpool-data").textContent);
const B = D.blocks, N = B.id.length, $ = id => document.getElementById(id);
function fmt(b) { const u = ["B","KiB","MiB","GiB","TiB"]; let i = 0, x = b;
  while (x >= 1024 && i < 4) { x /= 1024; i++; } return (i ? x.toFixed(2) : x) + " " + u[i]; }
function esc(s) { return String(s).replace(/[&<>]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;"})[c]); }
function hue(k) { return (k * 137.508) % 360; }
$("title").textContent = D.title;
$("subtitle").textContent = D.config + " on " + D.device + ", capacity " + fmt(D.capacity) + ", " + D.events + " events replayed";
if (D.oom) $("oom-summary").textContent = "Out of memory at event " + D.oom.event + ": request of " + fmt(D.oom.requested) +
  " (" + D.oom.cause + ") at " + D.oom.site + "; device used " + fmt(D.oom.device_used) + (D.pool ? ", pool held " + fmt(D.oom.held) : "");
else $("oom-summary").textContent = "No out-of-memory: the replay ran cleanly.";
$("sampling-note").textContent = (N < D.total_blocks
  ? "Showing the " + N + " largest of " + D.total_blocks + " blocks (by bytes x lifetime, " + (100 * D.drawn_area_fraction).toFixed(1) + "% of the area); the lines are the replay's totals, sampled keeping maxima."
  : "All " + N + " blocks drawn.") +  " Block bands: the bytes requested (solid), the pool's bin rounding (pale) and the device's page rounding (hatched); y is a best-fit address layout of what the device commits." +
  (D.has_sites ? "" : " This trace has no allocation sites (record with stacks).");
function profileText() { const P = D.profile;
  if (P.page <= 1) return P.name + " profile: exact bytes";
  return P.name + " profile: " + fmt(P.page) + " pages" + (P.pack_limit ? ", requests up to " + fmt(P.pack_limit) + " packed at " + fmt(P.pack_granule) : ""); }
{ let req = 0, bin = 0, com = 0, n = 0;  // the drawn blocks live at the end (the failure, if any)
  for (let i = 0; i < N; i++) if (B.end[i] >= D.events) { req += B.size[i]; bin += B.rounded[i]; com += B.committed[i]; n++; }
  $("rounding").innerHTML = (D.oom ? "<b>Rounding at the failure</b>: bin rounding <span id=bin-rounding>" + bytes(D.oom.bin_rounding) +
    "</span> (the pool's bins over the live blocks' requests" + (D.pool ? "" : "; no pool") + "), page rounding <span id=page-rounding>" + bytes(D.oom.page_rounding) +
    "</span> (device committed - blocks' sizes, " + esc(profileText()) + (D.oom.page_rounding_split ? ": <span id=page-per-block>" +
    bytes(D.oom.page_rounding_split.per_block) + "</span> rounding each block, <span id=page-shared-room>" + bytes(D.oom.page_rounding_split.shared_room) +
    "</span> free room in shared pages" : "") + "). " : "") +
    "The " + n + " drawn blocks live at the " + (D.oom ? "failure" : "end") + ": " + fmt(req) + " requested, " + fmt(bin) + " in pool bins, " +
    fmt(com) + " device-committed (each block rounded on its own)."; }
function fill(id, rows) { const tb = $(id).querySelector("tbody");
  rows.forEach((r, i) => { const tr = document.createElement("tr");
    tr.innerHTML = "<td>" + (i + 1) + "</td><td class=site title='" + esc(r.frames.join("\n")).replace(/'/g, "&#39;") + "'>" + esc(r.site) +
      "</td><td>" + fmt(r.requested) + "</td><td>" + fmt(r.rounded) + "</td><td>" + fmt(r.committed) + "</td><td>" + r.blocks + "</td>"; tb.appendChild(tr); }); }
if (D.oom) { fill("top-sites", D.oom.live_sites); fill("held-sites", D.oom.held_sites); }
if (!D.pool || !D.oom || !D.oom.held_sites.length) $("held-wrap").style.display = "none";
// Sites: stacks grouped by the name of their site, the largest first, colours by rank.
const siteOf = D.stacks.map(s => s.site), siteIdx = new Map(), siteBytes = [];
for (let i = 0; i < N; i++) { const s = siteOf[B.stack[i]]; if (!siteIdx.has(s)) { siteIdx.set(s, siteIdx.size); siteBytes.push(0); }
  siteBytes[siteIdx.get(s)] += B.committed[i] * (B.end[i] - B.start[i]); }
const siteNames = [...siteIdx.keys()], rank = siteNames.map((_, i) => i).sort((a, b) => siteBytes[b] - siteBytes[a]);
const TOP = 12, siteRank = new Array(siteNames.length); rank.forEach((s, r) => siteRank[s] = Math.min(r, TOP));
const blockSite = new Int32Array(N); for (let i = 0; i < N; i++) blockSite[i] = siteIdx.get(siteOf[B.stack[i]]);
function siteColor(r, a) { return r >= TOP ? "rgba(150,150,150," + a + ")" : "hsla(" + hue(r) + ",65%,50%," + a + ")"; }
const T = D.timeline, X1 = Math.max(D.events, 1);
let yMax = 1; for (let i = 0; i < N; i++) yMax = Math.max(yMax, B.offset[i] + B.committed[i]);
for (const p of T) yMax = Math.max(yMax, p[3], p[4]);
const capShown = D.capacity < 4 * yMax; if (capShown) yMax = Math.max(yMax, D.capacity);
yMax *= 1.05;
let v0 = 0, v1 = X1, mode = "blocks", pinned = -1, measure = "committed", showRounding = true;
const cv = $("chart"), ctx = cv.getContext("2d"), PAD = 60;
function sx(e) { return PAD + (e - v0) / (v1 - v0) * (cv.width - PAD - 10); }
function ex(x) { return v0 + (x - PAD) / (cv.width - PAD - 10) * (v1 - v0); }
function sy(b) { return cv.height - 24 - b / yMax * (cv.height - 34); }
function by(y) { return (cv.height - 24 - y) / (cv.height - 34) * yMax; }
let sitesCache = null;
function siteSeries() { // live bytes (the chosen size) per site at W points across the view (difference arrays)
  const M = B[measure], W = 600, acc = siteNames.map(() => new Float64Array(W + 1)), step = (v1 - v0) / W;
  for (let i = 0; i < N; i++) { if (B.end[i] <= v0 || B.start[i] >= v1) continue;
    const a = Math.max(0, Math.floor((B.start[i] - v0) / step)), b = Math.min(W, Math.ceil((B.end[i] - v0) / step));
    const s = acc[blockSite[i]]; s[a] += M[i]; s[b] -= M[i]; }
  for (const s of acc) for (let k = 1; k <= W; k++) s[k] += s[k - 1];
  return { W, step, acc };
}
const hatches = [];  // per colour rank: the page-rounding pattern, diagonal stripes
function hatch(r) { if (hatches[r]) return hatches[r]; const c = document.createElement("canvas"); c.width = c.height = 8;
  const g = c.getContext("2d"); g.strokeStyle = siteColor(r, 0.55); g.lineWidth = 1.5; g.beginPath();
  g.moveTo(0, 8); g.lineTo(8, 0); g.moveTo(-2, 2); g.lineTo(2, -2); g.moveTo(6, 10); g.lineTo(10, 6); g.stroke();
  return hatches[r] = ctx.createPattern(c, "repeat"); }
function line(idx, color, dash) { ctx.strokeStyle = color; ctx.setLineDash(dash || []); ctx.lineWidth = 1.5; ctx.beginPath();
  let first = true; for (const p of T) { if (p[0] < v0 - (v1 - v0) || p[0] > v1 + (v1 - v0)) continue;
    const x = sx(p[0]), y = sy(p[idx]); if (first) { ctx.moveTo(x, y); first = false; } else ctx.lineTo(x, y); }
  ctx.stroke(); ctx.setLineDash([]); }
function draw() {
  cv.width = cv.clientWidth * devicePixelRatio; cv.height = cv.clientHeight * devicePixelRatio;
  ctx.setTransform(1, 0, 0, 1, 0, 0); ctx.clearRect(0, 0, cv.width, cv.height);
  ctx.save(); ctx.beginPath(); ctx.rect(PAD, 0, cv.width - PAD - 10, cv.height - 24); ctx.clip();
  if (mode === "blocks") {
    for (let i = 0; i < N; i++) { if (B.end[i] <= v0 || B.start[i] >= v1) continue;
      const x0 = sx(B.start[i]), x1 = Math.max(sx(B.end[i]), x0 + 1), yb = sy(B.offset[i]), r = siteRank[blockSite[i]];
      const yc = sy(B.offset[i] + B.committed[i]), yt = sy(B.offset[i] + B.rounded[i]), yq = sy(B.offset[i] + B.size[i]);
      if (!showRounding) { ctx.fillStyle = siteColor(r, i === pinned ? 1 : 0.8); ctx.fillRect(x0, yc, x1 - x0, Math.max(yb - yc, 1)); continue; }
      if (yt - yc >= 1) { ctx.fillStyle = hatch(r); ctx.fillRect(x0, yc, x1 - x0, yt - yc); }
      ctx.fillStyle = siteColor(r, 0.3); ctx.fillRect(x0, yt, x1 - x0, Math.max(yb - yt, 1));
      ctx.fillStyle = siteColor(r, i === pinned ? 1 : 0.8); ctx.fillRect(x0, yq, x1 - x0, Math.max(yb - yq, 0.5)); }
  } else {
    if (!sitesCache) sitesCache = siteSeries();
    const { W, step, acc } = sitesCache, base = new Float64Array(W + 1);
    for (const s of rank) { const a = acc[s]; ctx.fillStyle = siteColor(siteRank[s], 0.75); ctx.beginPath();
      for (let k = 0; k <= W; k++) ctx.lineTo(sx(v0 + k * step), sy(base[k] + a[k]));
      for (let k = W; k >= 0; k--) ctx.lineTo(sx(v0 + k * step), sy(base[k]));
      ctx.fill(); for (let k = 0; k <= W; k++) base[k] += a[k]; }
  }
  line(4, "#000"); if (D.pool) line(2, "#e67e00", [5, 3]);
  if (capShown) { ctx.strokeStyle = "#d00"; ctx.setLineDash([8, 4]); ctx.beginPath(); ctx.moveTo(PAD, sy(D.capacity));
    ctx.lineTo(cv.width, sy(D.capacity)); ctx.stroke(); ctx.setLineDash([]); }
  ctx.restore();
  ctx.fillStyle = "#333"; ctx.font = (11 * devicePixelRatio) + "px sans-serif";
  for (let k = 0; k <= 4; k++) { const b = yMax / 1.05 * k / 4; ctx.fillText(fmt(Math.round(b)), 2, sy(b) + 4); }
  for (let k = 0; k <= 5; k++) { const e = v0 + (v1 - v0) * k / 5; ctx.fillText("event " + Math.round(e), sx(e) - 20, cv.height - 6); }
  const m = $("oom-marker");
  if (D.oom && D.oom.event >= v0 && D.oom.event <= v1) { m.style.display = ""; m.style.left = (sx(D.oom.event + 0.5) / devicePixelRatio) + "px"; }
  else m.style.display = "none";
}
let pending = false; function redraw(resetSites) { if (resetSites) sitesCache = null; if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; draw(); }); } }
function zoom(f, at) { const c = at === undefined ? (v0 + v1) / 2 : at, w = Math.min(X1, Math.max(4, (v1 - v0) * f));
  v0 = Math.max(0, Math.min(c - (c - v0) / (v1 - v0) * w, X1 - w)); v1 = v0 + w; redraw(true); }
cv.addEventListener("wheel", ev => { ev.preventDefault(); zoom(ev.deltaY > 0 ? 1.25 : 0.8, ex(ev.offsetX * devicePixelRatio)); }, { passive: false });
let drag = null;
cv.addEventListener("mousedown", ev => drag = { x: ev.offsetX, v0, v1, moved: false });
window.addEventListener("mouseup", ev => { if (drag && !drag.moved) pick(ev, true); drag = null; });
function blockAt(px, py) { const e = ex(px), b = by(py);
  for (let i = N - 1; i >= 0; i--) if (B.start[i] <= e && e < Math.max(B.end[i], B.start[i] + (v1 - v0) / cv.width) && B.offset[i] <= b && b < B.offset[i] + B.committed[i]) return i;
  return -1; }
function bytes(b) { return fmt(b) + " (" + b + " bytes)"; }
function describe(i) { const s = D.stacks[B.stack[i]];
  return "<b>" + esc(s.site) + "</b><br>block id " + B.id[i] + "<br>requested: " + bytes(B.size[i]) +
    "<br>pool bin: " + (D.pool ? bytes(B.rounded[i]) + ", +" + (B.rounded[i] - B.size[i]) + " bytes bin rounding" : "no pool (the request itself)") +
    "<br>device-committed: " + bytes(B.committed[i]) + ", +" + (B.committed[i] - B.rounded[i]) + " bytes page rounding (" + esc(profileText()) + ")" +
    (B.rounded[i] <= D.profile.pack_limit ? "<br>packed: it shares a " + fmt(D.profile.page) + " page with other requests; a page's free room is in the totals below the chart" : "") +
    "<br>lifetime: events " + B.start[i] + " to " +
    (B.end[i] > D.events - 1 ? "the end (still live)" : B.end[i] + ", " + ((B.t1[i] - B.t0[i]) / 1e6).toFixed(3) + " ms") +
    "<div class=frames>" + (s.frames.length ? s.frames.map(f => "at " + esc(f)).join("\n") : "(no stack recorded)") + "</div>"; }
function pick(ev, click) { const px = ev.offsetX * devicePixelRatio, py = ev.offsetY * devicePixelRatio, tip = $("tooltip");
  if (mode === "sites") { if (!sitesCache) return; const k = Math.round((ex(px) - v0) / sitesCache.step), b = by(py);
    let base = 0, hit = -1; for (const s of rank) { const a = sitesCache.acc[s][Math.max(0, Math.min(k, sitesCache.W))]; if (b >= base && b < base + a) { hit = s; break; } base += a; }
    if (hit < 0) { tip.style.display = "none"; return; }
    tip.innerHTML = "<b>" + esc(siteNames[hit]) + "</b><br>" + fmt(sitesCache.acc[hit][Math.max(0, Math.min(k, sitesCache.W))]) + " live (" + $("measure").selectedOptions[0].textContent + ") at event " + Math.round(ex(px));
  } else { const i = blockAt(px, py);
    if (i < 0) { tip.style.display = "none"; return; }
    tip.innerHTML = describe(i); if (click) { pinned = i; $("detail").innerHTML = describe(i); redraw(); } }
  tip.style.display = "block"; tip.style.left = Math.max(0, Math.min(ev.offsetX + 14, cv.clientWidth - 570)) + "px"; tip.style.top = (ev.offsetY + 14) + "px"; }
cv.addEventListener("mousemove", ev => { if (drag) { const dx = (ev.offsetX - drag.x) * devicePixelRatio; if (Math.abs(dx) > 3) drag.moved = true;
    const de = dx / (cv.width - PAD - 10) * (drag.v1 - drag.v0); v0 = Math.max(0, Math.min(drag.v0 - de, X1 - (drag.v1 - drag.v0))); v1 = v0 + (drag.v1 - drag.v0); redraw(true); }
  else pick(ev, false); });
cv.addEventListener("mouseleave", () => $("tooltip").style.display = "none");
cv.addEventListener("dblclick", () => { v0 = 0; v1 = X1; redraw(true); });
$("zoom-in").onclick = () => zoom(0.5); $("zoom-out").onclick = () => zoom(2); $("reset").onclick = () => { v0 = 0; v1 = X1; redraw(true); };
$("mode").onchange = ev => { mode = ev.target.value; $("tooltip").style.display = "none"; redraw(true); };
$("measure").onchange = ev => { measure = ev.target.value; redraw(true); };
$("show-rounding").onchange = ev => { showRounding = ev.target.checked; redraw(false); };
window.addEventListener("resize", () => redraw(false));
$("legend").innerHTML = "<span><i style='background:#000'></i>device used</span>" + (D.pool ? "<span><i style='background:#e67e00'></i>pool held</span>" : "") +
  (capShown ? "<span><i style='background:#d00'></i>capacity " + fmt(D.capacity) + "</span>" : "") +
  "<span>band: solid requested, pale pool bin, hatched device pages</span>" +
  rank.slice(0, TOP).map(s => "<span><i style='background:" + siteColor(siteRank[s], 1) + "'></i>" + esc(siteNames[s]) + "</span>").join("");
// For tests and scripts: where block i is drawn, in CSS pixels of the canvas.
window.clpoolBlockCenter = i => ({ x: (sx((B.start[i] + Math.min(B.end[i], v1)) / 2)) / devicePixelRatio,
  y: sy(B.offset[i] + B.committed[i] / 2) / devicePixelRatio });
window.clpoolLargestLiveBlock = () => { let best = -1; for (let i = 0; i < N; i++) if (B.end[i] >= D.events && (best < 0 || B.committed[i] > B.committed[best])) best = i; return best; };
window.clpoolData = D;
draw(); document.body.dataset.ready = "1";
</script></body></html>
)HTML";

}  // namespace

std::string html_page(const nlohmann::json& data) {
  std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // Inside <script> a "</script" ends the element early, and "<!--" then "<script" puts the
  // tokenizer in a state where the element's own end tag does not end it: no '<' at all, then.
  // In JSON text '<' appears only inside strings, where "\u003c" is the same character.
  std::string safe;
  safe.reserve(json.size());
  for (const char c : json) {
    if (c == '<') {
      safe += "\\u003c";
    } else {
      safe += c;
    }
  }
  return std::string(page_head) + safe + page_tail;
}

}  // namespace clpool::replay
