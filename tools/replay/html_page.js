// The script of clpool_replay's --html page (tools/replay/html_page.cc embeds it at build time:
// //tools/replay:html_page_js). It reads the three JSON documents the page inlines and draws on a
// canvas; the parts a test or a screen reader looks for are DOM elements.
"use strict";
// The page's three inline documents: the result, exactly as clpool_replay --json writes it (one
// versioned schema, replay/result_json.h); the replay shown (a replay object of that schema: the
// first configuration's, or with --min-capacity the failing one a granule below); the page's own
// data (every block, the timeline, the stacks, the profile's geometry; tools/replay/html_data.h).
const RESULT = JSON.parse(document.getElementById("clpool-result").textContent);
const R = JSON.parse(document.getElementById("clpool-replay").textContent);
const D = JSON.parse(document.getElementById("clpool-data").textContent);
const OOM = R.oom, POOL = R.config !== "nopool", EVENTS = R.events, CAPACITY = R.capacity;
const DEVICE = R.device + ", " + R.semantics + " allocation, " +
  (R.measured_device ? R.measured_device.name + " (measured, no profile)" : R.profile + " profile");
const oomSite = () => OOM.site || "(no stack recorded)";
const B = D.blocks, N = B.id.length, $ = id => document.getElementById(id);
// Byte figures as the text report writes them: the page rounds nothing itself. Every figure it
// shows is in D.bytes_text, written by clpool_replay with the text report's own formatting
// (common::format_bytes); a sum the page makes on the fly (a site's live bytes under the pointer
// in the by-site view) is shown exactly, in bytes.
function fmt(b) { const t = D.bytes_text[b]; return t !== undefined ? t : b + " bytes"; }
// "1 block", "2 blocks": report_format.cc's counted(), for the page's sentences.
function counted(n, what, plural) { return n + " " + (n === 1 ? what : plural || what + "s"); }
function bytes(b) { return b < 1024 ? b + (b == 1 ? " byte" : " bytes") : fmt(b) + " (" + b + " bytes)"; }
// An axis label: a multiple of a power of two that is at least a quarter of the unit it is
// written in, so two decimals are exact (what format_bytes prints for it, no rounding).
function axisLabel(b) { const u = ["B","KiB","MiB","GiB","TiB","PiB","EiB"]; let i = 0, unit = 1;
  while (b >= unit * 1024 && i < 6) { unit *= 1024; i++; }
  return (b % unit === 0 ? String(b / unit) : (b / unit).toFixed(2)) + " " + u[i]; }
function esc(s) { return String(s).replace(/[&<>]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;"})[c]); }
// Site colours: hues from yellow-green through blue to violet (60 to 320 degrees), never the
// capacity's and the out-of-memory's red nor the pool line's orange (LINE_COLORS).
const LINE_COLORS = { device: "#000000", pool: "#e67e00", capacity: "#dd0000", oom: "#dd0000" };
function hue(k) { return 60 + (k * 137.508) % 260; }
$("title").textContent = D.title;
$("subtitle").textContent = R.config + " on " + DEVICE + ", capacity " + fmt(CAPACITY) + ", " + EVENTS + " events replayed" +
  (OOM ? " (up to the failure)" : "");
$("search-note").textContent = D.search_note || "";  // --min-capacity: which of its replays this is
if (OOM && OOM.refused_for_size) $("oom-marker").firstElementChild.textContent = "REFUSED";
if (OOM) $("oom-summary").textContent = (OOM.refused_for_size ? "Refused for its size" : "Out of memory") + " at event " + OOM.event_index + ": request of " + fmt(OOM.requested_bytes) +
  " (" + OOM.cause + ") at " + oomSite() + "; device used " + fmt(OOM.device_used_bytes) + (POOL ? ", pool held " + fmt(OOM.held_bytes) : "");
else $("oom-summary").textContent = "No out-of-memory: the replay ran cleanly.";
const SCOPE = OOM ? "up to the failure" : "in the trace";
// The blocks are those the device committed; one allocated that no command ever used has none.
const NEVER = D.never_used_blocks ? " " + counted(D.never_used_blocks, "more block") + " allocated " + SCOPE +
  (D.never_used_blocks === 1 ? " was" : " were") + " never used: nothing on the device, not drawn." : "";
$("sampling-note").textContent = (N < D.total_blocks
  ? "Showing the " + N + " largest of the " + counted(D.total_blocks, "block") + " committed " + SCOPE + " (by bytes x lifetime, " + (100 * D.drawn_area_fraction).toFixed(1) + "% of the area); the lines are the replay's totals, sampled keeping maxima."
  : (N === 1 ? "The 1 block" : "All " + N + " blocks") + " committed " + SCOPE + " drawn.") + NEVER +  " Block bands: the bytes requested (solid), the pool's bin rounding (pale) and the device's page rounding (hatched); y is a best-fit address layout of what the device commits." +
  (D.has_sites ? "" : " This trace has no allocation sites (record with stacks).");
function profileText() { const P = D.profile;
  if (P.page <= 1) return P.name + " profile: exact bytes";
  return P.name + " profile: " + fmt(P.page) + " pages" + (P.pack_limit ? ", requests up to " + fmt(P.pack_limit) + " packed at " + fmt(P.pack_granule) : ""); }
{ const all = D.live_at_end.all, drawn = D.live_at_end.drawn;  // the blocks live at the end (the failure, if any)
  // The replay's live blocks (its end_active_blocks) are those the device holds and those no
  // command had used yet (end_unused_blocks), which hold nothing and are not drawn.
  const where = OOM ? "failure" : "end", unused = R.end_unused_blocks || 0;
  const held = unused ? "Of the " + counted(all.blocks + unused, "block") + " live at the " + where + ", " + unused +
      (unused === 1 ? " no command had used yet holds" : " no command had used yet hold") + " nothing on the device and " +
      (unused === 1 ? "is" : "are") + " not drawn; the " + counted(all.blocks, "block") + " it holds"
    : all.blocks === 1 ? "The 1 block live at the " + where : "The " + all.blocks + " blocks live at the " + where;
  const live = held + (drawn.blocks === all.blocks ? (all.blocks > 1 ? " (all drawn)" : all.blocks ? " (drawn)" : "") : ", " + drawn.blocks + " of them drawn");
  $("rounding").innerHTML = (OOM ? "<b>Rounding at the failure</b>: bin rounding <span id=bin-rounding>" + bytes(OOM.rounding_loss_bytes) +
    "</span> (the pool's bins over the live blocks' requests" + (POOL ? "" : "; no pool") + "), page rounding <span id=page-rounding>" + bytes(OOM.page_loss_bytes) +
    "</span> (device committed - blocks' sizes, " + esc(profileText()) + (D.page_rounding_split ? ": <span id=page-per-block>" +
    bytes(D.page_rounding_split.per_block) + "</span> rounding each block, <span id=page-shared-room>" + bytes(D.page_rounding_split.shared_room) +
    "</span> free room in shared pages" : "") + "). " : "") +
    (all.blocks + unused === 0 ? "No block is live at the " + where + "." :
    live + ": " + fmt(drawn.requested_bytes) + " requested, " + fmt(drawn.rounded_bytes) + " in pool bins, " +
    fmt(drawn.committed_bytes) + " device-committed (each block rounded on its own)."); }
// A sites table: one row per site; a site with callers (replay/site_names.h callers_of) gets a
// button that shows the callers that hold the most beneath it, and theirs beneath them.
function cells(r) { return "<td>" + fmt(r.requested_bytes) + "</td><td>" + fmt(r.rounded_bytes) + "</td><td>" +
  fmt(r.committed_bytes) + "</td><td>" + r.blocks + "</td>"; }
function callerRows(after, callers, depth) { let last = after;
  for (const c of callers) { const tr = document.createElement("tr"); tr.className = "caller"; tr.dataset.depth = depth;
    tr.innerHTML = "<td></td><td class=site style='padding-left:" + (8 + 18 * depth) + "px'>called from " + esc(c.caller) + "</td>" + cells(c);
    last.after(tr); last = callerRows(tr, c.callers || [], depth + 1); }
  return last; }
function fill(id, rows) { const tb = $(id).querySelector("tbody");
  if (!rows.length) { tb.innerHTML = "<tr><td></td><td class=site colspan=5>none</td></tr>"; return; }
  rows.forEach((r, i) => { const tr = document.createElement("tr"), callers = r.callers || [];
    tr.innerHTML = "<td>" + (i + 1) + "</td><td class=site title='" + esc(r.frames.join("\n")).replace(/'/g, "&#39;") + "'>" +
      (callers.length ? "<button class=expand aria-expanded=false title='its callers'>&#9656;</button>" : "") + esc(r.site) + "</td>" + cells(r);
    tb.appendChild(tr);
    const b = tr.querySelector("button.expand");
    if (b) b.onclick = () => { const open = b.getAttribute("aria-expanded") === "true";
      let next = tr.nextElementSibling; while (next && next.classList.contains("caller")) { const n = next.nextElementSibling; next.remove(); next = n; }
      if (!open) callerRows(tr, callers, 1);
      b.setAttribute("aria-expanded", String(!open)); b.innerHTML = open ? "&#9656;" : "&#9662;"; }; }); }
if (OOM) { fill("top-sites", OOM.live_sites || []); fill("held-sites", OOM.held_sites || []); }
else if (D.peak) { $("top-sites-title").textContent = "Sites holding the most device memory at the peak (event " + D.peak.event +
    ", " + fmt(D.peak.committed_bytes) + " device-committed in live blocks); no out-of-memory";
  fill("top-sites", D.peak.sites); }
else $("top-sites-title").textContent = "No allocation sites: no block was allocated";
if (!POOL || !OOM || !(OOM.held_sites || []).length) $("held-wrap").style.display = "none";
// The capacity at the failure as a sum that adds up, row by row as the text report's "capacity at
// the failure, summed" (clpool_replay writes both: report_format.h capacity_sum_rows), and the
// failing request's line under it. Each figure's bytes are in data-bytes.
{ const rows = D.capacity_sum;
  if (!rows) $("sum-wrap").style.display = "none";
  else { $("capacity-sum").querySelector("tbody").innerHTML = rows.map(r => "<tr" + (r.total ? " class=total" : "") + "><td>" + r.op +
      "</td><td data-bytes=" + r.bytes + ">" + bytes(r.bytes) + "</td><td class=what>" + esc(r.what) + "</td></tr>").join("");
    const need = D.request_text.charAt(0).toUpperCase() + D.request_text.slice(1) + ".";
    const unused = D.capacity_unused_text || "";
    $("request-need").textContent = need + (unused ? " " + unused.charAt(0).toUpperCase() + unused.slice(1) + "." : ""); } }
// Sites: stacks grouped by the name of their site, the largest first, colours by rank.
const siteOf = D.stacks.map(s => s.site), siteIdx = new Map(), siteBytes = [];
for (let i = 0; i < N; i++) { const s = siteOf[B.stack[i]]; if (!siteIdx.has(s)) { siteIdx.set(s, siteIdx.size); siteBytes.push(0); }
  siteBytes[siteIdx.get(s)] += B.committed[i] * (B.end[i] - B.start[i]); }
const siteNames = [...siteIdx.keys()], rank = siteNames.map((_, i) => i).sort((a, b) => siteBytes[b] - siteBytes[a]);
const TOP = 12, siteRank = new Array(siteNames.length); rank.forEach((s, r) => siteRank[s] = Math.min(r, TOP));
const blockSite = new Int32Array(N); for (let i = 0; i < N; i++) blockSite[i] = siteIdx.get(siteOf[B.stack[i]]);
function siteColor(r, a) { return r >= TOP ? "rgba(150,150,150," + a + ")" : "hsla(" + hue(r) + ",65%,50%," + a + ")"; }
const T = D.timeline, X1 = Math.max(EVENTS, 1);
let yMax = 1; for (let i = 0; i < N; i++) yMax = Math.max(yMax, B.offset[i] + B.committed[i]);
for (const p of T) yMax = Math.max(yMax, p[3], p[4]);
const capShown = CAPACITY < 4 * yMax; if (capShown) yMax = Math.max(yMax, CAPACITY);
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
// The device memory the bands do not show, as bands of their own: between the top of the drawn
// blocks (the layout's top in the blocks view, the stacked sites in the other) and the device-used
// line, the free room of shared pages (and, with a pool, the pages of the blocks it holds); at the
// top, the profile's headroom below the capacity. At W buckets across the view, cached per view.
const HEADROOM = R.measured_device ? 0 : D.profile.headroom;
function pattern(color, cross) { const c = document.createElement("canvas"); c.width = c.height = 8;
  const g = c.getContext("2d"); g.strokeStyle = color; g.lineWidth = 1.2; g.beginPath();
  g.moveTo(0, 8); g.lineTo(8, 0); g.moveTo(-2, 2); g.lineTo(2, -2); g.moveTo(6, 10); g.lineTo(10, 6);
  if (cross) { g.moveTo(0, 0); g.lineTo(8, 8); } g.stroke(); return ctx.createPattern(c, "repeat"); }
const GAP_COLOR = "#8a8a8a", HEADROOM_COLOR = "#6f7f99";
let gapCache = null;
function gapSeries() { const W = 600, step = (v1 - v0) / W, top = new Float64Array(W), used = new Float64Array(W);
  if (mode === "sites") { if (!sitesCache) sitesCache = siteSeries();
    for (let k = 0; k < W; k++) { let s = 0; for (const a of sitesCache.acc) s += a[k]; top[k] = s; } }
  else { // blocks are in start order: a max-heap of the live ones' tops, ended ones dropped lazily
    const heap = [], push = (v, e) => { heap.push([v, e]); let i = heap.length - 1;
        while (i > 0) { const p = (i - 1) >> 1; if (heap[p][0] >= heap[i][0]) break; [heap[p], heap[i]] = [heap[i], heap[p]]; i = p; } },
      pop = () => { const last = heap.pop(); if (!heap.length) return; heap[0] = last; let i = 0;
        for (;;) { const l = 2 * i + 1, r = l + 1; let m = i; if (l < heap.length && heap[l][0] > heap[m][0]) m = l;
          if (r < heap.length && heap[r][0] > heap[m][0]) m = r; if (m === i) break; [heap[m], heap[i]] = [heap[i], heap[m]]; i = m; } };
    let j = 0;
    for (let k = 0; k < W; k++) { const a = v0 + k * step, b = a + step;
      while (j < N && B.start[j] < b) { if (B.end[j] > v0) push(B.offset[j] + B.committed[j], B.end[j]); j++; }
      while (heap.length && heap[0][1] <= a) pop();
      top[k] = heap.length ? heap[0][0] : 0; } }
  for (let i = 0; i < T.length; i++) { const e0 = T[i][0], e1 = i + 1 < T.length ? T[i + 1][0] : X1;
    if (e1 <= v0 || e0 >= v1) continue;
    const a = Math.max(0, Math.floor((e0 - v0) / step)), b = Math.min(W - 1, Math.ceil((e1 - v0) / step) - 1);
    for (let k = a; k <= b; k++) used[k] = Math.max(used[k], T[i][4]); }
  return { W, step, top, used }; }
let gapPattern = null, headroomPattern = null;
function drawBands() {
  if (!gapCache) gapCache = gapSeries();
  const { W, step, top, used } = gapCache;
  if (!gapPattern) { gapPattern = pattern(GAP_COLOR, false); headroomPattern = pattern(HEADROOM_COLOR, true); }
  ctx.fillStyle = gapPattern;
  for (let k = 0; k < W; k++) if (used[k] > top[k]) { const x0 = sx(v0 + k * step), x1 = sx(v0 + (k + 1) * step);
    ctx.fillRect(x0, sy(used[k]), x1 - x0 + 0.5, sy(top[k]) - sy(used[k])); }
  if (capShown && HEADROOM > 0) { ctx.fillStyle = headroomPattern; const y0 = sy(CAPACITY), y1 = sy(CAPACITY - HEADROOM);
    ctx.fillRect(PAD, y0, cv.width - PAD - 10, Math.max(y1 - y0, 2)); } }
// The event axis: round numbers, the last one at the end of the view, every label inside the
// canvas (the last is right-aligned); "event" once, at the axis' start.
function niceStep(span) { const p = Math.pow(10, Math.floor(Math.log10(Math.max(span, 1)))), f = span / p;
  return p * (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10); }
let xTicks = [];
function drawXAxis() { const step = Math.max(1, niceStep((v1 - v0) / 6)), y = cv.height - 6, ticks = [];
  for (let e = Math.ceil(v0 / step) * step; e <= v1; e += step) ticks.push(e);
  // The end of the view is labelled too; a round tick too close to it (labels would touch) gives way.
  const end = Math.round(v1), room = ctx.measureText(String(end)).width * 2 + 8 * devicePixelRatio;
  if (ticks.length && sx(end) - sx(ticks[ticks.length - 1]) < room) ticks.pop();
  if (!ticks.length || ticks[ticks.length - 1] !== end) ticks.push(end);
  xTicks = [];
  for (const e of ticks) { const text = String(Math.round(e)), w = ctx.measureText(text).width, x = sx(e);
    let left = x - w / 2; left = Math.max(PAD, Math.min(left, cv.width - 2 - w)); ctx.fillText(text, left, y);
    ctx.fillRect(x, cv.height - 24, 1, 4); xTicks.push({ text, left: left / devicePixelRatio, right: (left + w) / devicePixelRatio, event: e }); }
  ctx.fillText("event", 2, y); }
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
  drawBands();
  line(4, LINE_COLORS.device); if (POOL) line(2, LINE_COLORS.pool, [5, 3]);
  if (capShown) { ctx.strokeStyle = LINE_COLORS.capacity; ctx.setLineDash([8, 4]); ctx.beginPath(); ctx.moveTo(PAD, sy(CAPACITY));
    ctx.lineTo(cv.width, sy(CAPACITY)); ctx.stroke(); ctx.setLineDash([]); }
  ctx.restore();
  ctx.fillStyle = "#333"; ctx.font = (11 * devicePixelRatio) + "px sans-serif";
  { let step = 1; while (yMax / 1.05 / step > 5) step *= 2;
    for (let b = 0; b <= yMax / 1.05; b += step) ctx.fillText(axisLabel(b), 2, sy(b) + 4); }
  drawXAxis();
  const m = $("oom-marker");
  if (OOM && OOM.event_index >= v0 && OOM.event_index <= v1) { m.style.display = ""; m.style.left = (sx(OOM.event_index + 0.5) / devicePixelRatio) + "px"; }
  else m.style.display = "none";
}
let pending = false; function redraw(resetSites) { if (resetSites) { sitesCache = null; gapCache = null; } if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; draw(); }); } }
function zoom(f, at) { const c = at === undefined ? (v0 + v1) / 2 : at, w = Math.min(X1, Math.max(4, (v1 - v0) * f));
  v0 = Math.max(0, Math.min(c - (c - v0) / (v1 - v0) * w, X1 - w)); v1 = v0 + w; redraw(true); }
cv.addEventListener("wheel", ev => { ev.preventDefault(); zoom(ev.deltaY > 0 ? 1.25 : 0.8, ex(ev.offsetX * devicePixelRatio)); }, { passive: false });
let drag = null;
cv.addEventListener("mousedown", ev => drag = { x: ev.offsetX, v0, v1, moved: false });
window.addEventListener("mouseup", ev => { if (drag && !drag.moved) pick(ev, true); drag = null; });
function blockAt(px, py) { const e = ex(px), b = by(py);
  for (let i = N - 1; i >= 0; i--) if (B.start[i] <= e && e < Math.max(B.end[i], B.start[i] + (v1 - v0) / cv.width) && B.offset[i] <= b && b < B.offset[i] + B.committed[i]) return i;
  return -1; }
function describe(i) { const s = D.stacks[B.stack[i]];
  return "<b>" + esc(s.site) + "</b><br>block id " + B.id[i] + "<br>requested: " + bytes(B.size[i]) +
    "<br>pool bin: " + (POOL ? bytes(B.rounded[i]) + ", +" + (B.rounded[i] - B.size[i]) + " bytes bin rounding" : "no pool (the request itself)") +
    "<br>device-committed: " + bytes(B.committed[i]) + ", +" + (B.committed[i] - B.rounded[i]) + " bytes page rounding (" + esc(profileText()) + ")" +
    (B.rounded[i] <= D.profile.pack_limit ? "<br>packed: it shares a " + fmt(D.profile.page) + " page with other requests; a page's free room is in the totals below the chart" : "") +
    "<br>lifetime: events " + B.start[i] + " to " +
    (B.end[i] > EVENTS - 1 ? "the end (still live)" : B.end[i] + ", " + ((B.t1[i] - B.t0[i]) / 1e6).toFixed(3) + " ms") +
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
$("show-rounding").addEventListener("change", () => { gapCache = null; });
$("measure").onchange = ev => { measure = ev.target.value; redraw(true); };
$("show-rounding").onchange = ev => { showRounding = ev.target.checked; redraw(false); };
window.addEventListener("resize", () => redraw(false));
function swatch(color, cross) { return "<i class=band style='background:repeating-linear-gradient(45deg," + color + " 0 2px,transparent 2px 5px)" +
  (cross ? ",repeating-linear-gradient(-45deg," + color + " 0 2px,transparent 2px 5px)" : "") + "'></i>"; }
{ const split = D.page_rounding_split;
  $("legend").innerHTML = "<span><i style='background:" + LINE_COLORS.device + "'></i>device used</span>" +
  (POOL ? "<span><i style='background:" + LINE_COLORS.pool + "'></i>pool held</span>" : "") +
  (capShown ? "<span><i style='background:" + LINE_COLORS.capacity + "'></i>capacity " + fmt(CAPACITY) + "</span>" : "") +
  "<span id=legend-gap>" + swatch(GAP_COLOR) + "device used above the drawn blocks: " +
    [D.profile.pack_limit ? "free room in shared pages" : "", POOL ? "blocks the pool holds" : "", N < D.total_blocks ? "the blocks not drawn" : "",
     !D.profile.pack_limit && !POOL && N >= D.total_blocks ? "the layout's free space" : ""].filter(x => x).join(", ") +
    (OOM && split ? " (" + fmt(split.shared_room) + " of free room at the failure)" : "") + "</span>" +
  (capShown && HEADROOM > 0 ? "<span id=legend-headroom>" + swatch(HEADROOM_COLOR, true) + D.driver_headroom_name + ", never handed out, " + fmt(HEADROOM) + "</span>" : "") +
  "<span>band: solid requested, pale pool bin, hatched device pages</span>" +
  rank.slice(0, TOP).map(s => "<span><i style='background:" + siteColor(siteRank[s], 1) + "'></i>" + esc(siteNames[s]) + "</span>").join(""); }
// For tests and scripts: where block i is drawn, in CSS pixels of the canvas.
window.clpoolBlockCenter = i => ({ x: (sx((B.start[i] + Math.min(B.end[i], v1)) / 2)) / devicePixelRatio,
  y: sy(B.offset[i] + B.committed[i] / 2) / devicePixelRatio });
window.clpoolLargestLiveBlock = () => { let best = -1; for (let i = 0; i < N; i++) if (B.end[i] >= EVENTS && (best < 0 || B.committed[i] > B.committed[best])) best = i; return best; };
window.clpoolData = D; window.clpoolResult = RESULT; window.clpoolReplay = R;
// The colours of the lines and of the sites in the legend, the event axis' labels (CSS pixels of the
// canvas) and the bands above the blocks, for tests.
window.clpoolPalette = () => ({ lines: LINE_COLORS, sites: rank.slice(0, TOP).map(s => siteColor(siteRank[s], 1)) });
window.clpoolXTicks = () => ({ ticks: xTicks, width: cv.width / devicePixelRatio, start: v0, end: v1 });
window.clpoolBands = () => { if (!gapCache) gapCache = gapSeries(); let gap = 0, most = 0;
  for (let k = 0; k < gapCache.W; k++) if (gapCache.used[k] > gapCache.top[k]) { gap++; most = Math.max(most, gapCache.used[k] - gapCache.top[k]); }
  return { gap_buckets: gap, largest_gap: most, headroom: capShown ? HEADROOM : 0 }; };
draw(); document.body.dataset.ready = "1";
