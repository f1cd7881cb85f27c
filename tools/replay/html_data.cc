#include "tools/replay/html_data.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "common/text_escape.h"
#include "device_model/device_memory.h"
#include "pool/bins.h"
#include "replay/free_schedule.h"
#include "replay/replay.h"
#include "replay/result_json.h"
#include "replay/site_names.h"
#include "tools/replay/report_format.h"
#include "trace/trace_reader.h"

namespace clpool::replay_cli {

using replay::capacity_sum;
using replay::capacity_sum_at;
using replay::format_bytes;
using replay::free_schedule;
using replay::oom_point;
using replay::replay_report;
using replay::site_name;
using replay::site_usage;
using replay::site_usage_json;
using replay::stack_lines;
using replay::timeline_point;
using replay::to_json;

namespace {

struct block {
  // size: requested; rounded: the pool's bin; committed: what the device's profile makes of it.
  std::uint64_t id = 0, start = 0, end = 0, size = 0, rounded = 0, committed = 0, stack = 0,
                offset = 0;
  std::uint64_t t0 = 0, t1 = 0;  // time_ns at alloc and free
  bool live_at_end = true;
};

// Best fit in a simulated address space, as an allocator would place the blocks: a freed block's
// range becomes a gap (merged with its neighbours) that the smallest gap that fits serves next.
// O(log n) per block, so the layout of half a million blocks stays as tall as the live memory.
class best_fit {
 public:
  std::uint64_t place(std::uint64_t size) {
    const auto it = by_size_.lower_bound({size, 0});
    if (it == by_size_.end()) {
      const std::uint64_t at = top_;
      top_ += size;
      return at;
    }
    const auto [gap, at] = *it;
    by_size_.erase(it);
    gaps_.erase(at);
    if (gap > size) add_gap(at + size, gap - size);
    return at;
  }
  void release(std::uint64_t at, std::uint64_t size) {
    if (size == 0) return;
    auto next = gaps_.lower_bound(at);
    if (next != gaps_.end() && next->first == at + size) {  // merge with the gap above
      size += next->second;
      by_size_.erase({next->second, next->first});
      next = gaps_.erase(next);
    }
    if (next != gaps_.begin()) {
      const auto prev = std::prev(next);
      if (prev->first + prev->second == at) {  // and with the one below
        at = prev->first;
        size += prev->second;
        by_size_.erase({prev->second, prev->first});
        gaps_.erase(prev);
      }
    }
    if (at + size == top_) {
      top_ = at;  // the top of the layout comes down
    } else {
      add_gap(at, size);
    }
  }

 private:
  void add_gap(std::uint64_t at, std::uint64_t size) {
    gaps_[at] = size;
    by_size_.insert({size, at});
  }
  std::map<std::uint64_t, std::uint64_t> gaps_;                // offset -> size
  std::set<std::pair<std::uint64_t, std::uint64_t>> by_size_;  // (size, offset)
  std::uint64_t top_ = 0;
};

// Every block committed up to event r.events - 1, with its lifetime, sizes and place in a
// best-fit layout of what the device commits: the failing request got no memory and is no block
// (the live blocks at the failure are the replay's). A block the replay committed at its first
// use (replay.h commits_at_first_use, unless the pool handed it out committed:
// committed_at_allocation_events) starts there, and one never used is none. Frames defined after
// the failure are read too (lazy symbolization). `never_used` receives how many blocks allocated up
// to the failure the device never committed (a first use never came).
std::vector<block> read_blocks(trace::trace_reader& reader, const replay_report& r,
                               std::uint64_t& never_used) {
  const bool pool = r.config.use_pool;
  std::vector<block> blocks;
  std::unordered_map<std::uint64_t, std::size_t> live;  // trace id -> index in blocks
  std::unordered_map<std::uint64_t, block> unused;      // trace id -> a block before its first use
  best_fit layout;
  free_schedule schedule(r.frees_at);
  trace::trace_event e;
  std::uint64_t index = 0;
  const auto commit = [&](block b, std::uint64_t at, std::uint64_t time_ns) {
    b.start = b.end = at;
    b.t0 = b.t1 = time_ns;
    b.offset = layout.place(b.committed);
    live[b.id] = blocks.size();
    blocks.push_back(b);
  };
  while (index < r.events && reader.next(e)) {
    const bool failing = r.oom && index == r.oom->event_index;
    if (e.action == trace::trace_action::alloc && e.kind != trace::trace_kind::sub &&
        e.kind != trace::trace_kind::host && e.size != 0 && !failing) {
      block b;
      b.id = e.id;
      b.size = e.size;
      b.rounded = pool ? replay::pool_block_bytes(r.config, r.device, e.size) : e.size;
      b.committed = device_model::profile_rounded(r.device.profile, b.rounded);
      b.stack = e.stack;
      if (replay::commits_at_first_use(r, e.kind) &&
          !std::binary_search(r.committed_at_allocation_events.begin(),
                              r.committed_at_allocation_events.end(), index)) {
        unused[e.id] = b;
      } else {
        commit(b, index, e.time_ns);
      }
    } else if (e.action == trace::trace_action::use) {
      const auto it = unused.find(e.id);
      if (it != unused.end() && !failing) {
        commit(it->second, index, e.time_ns);
        unused.erase(it);
      }
    } else {
      // A block ends where the replay freed it: its free, or its release or a wait (version 3,
      // by the rule the replay used).
      schedule.on_event(e, [&](std::uint64_t id) {
        if (unused.erase(id) != 0) {  // never used: never drawn
          ++never_used;
          return;
        }
        if (const auto it = live.find(id); it != live.end()) {
          block& b = blocks[it->second];
          b.end = index;
          b.t1 = e.time_ns;
          b.live_at_end = false;
          layout.release(b.offset, b.committed);
          live.erase(it);
        }
      });
    }
    ++index;
  }
  try {
    while (reader.next(e)) {
    }
  } catch (const trace::trace_error&) {
  }
  never_used += unused.size();
  const std::uint64_t last = index == 0 ? 0 : index - 1;
  for (block& b : blocks) {
    if (b.live_at_end) b.end = last + 1;
  }
  return blocks;
}

// Keeps the `max` blocks that cover most of the picture (bytes x lifetime, live ones at the end
// first), in start order. Returns the share of the total area they cover.
double keep_largest(std::vector<block>& blocks, std::size_t max) {
  const auto area = [](const block& b) { return b.committed * (b.end - b.start); };
  std::uint64_t total_area = 0, drawn_area = 0;
  for (const block& b : blocks) total_area += area(b);
  if (blocks.size() > max) {
    std::nth_element(blocks.begin(), blocks.begin() + static_cast<std::ptrdiff_t>(max),
                     blocks.end(), [&](const block& a, const block& b) {
                       if (a.live_at_end != b.live_at_end) return a.live_at_end;
                       return area(a) > area(b);
                     });
    blocks.resize(max);
    std::sort(blocks.begin(), blocks.end(),
              [](const block& a, const block& b) { return a.start < b.start; });
  }
  for (const block& b : blocks) drawn_area += area(b);
  return total_area == 0 ? 1.0 : static_cast<double>(drawn_area) / static_cast<double>(total_area);
}

// The blocks as columns (the page reads arrays, not objects), each naming its stack by index in
// `stacks` (index 0: no stack), which receives every stack drawn with its site and frames.
nlohmann::json block_columns(const std::vector<block>& blocks, const trace::site_table& sites,
                             nlohmann::json& stacks) {
  std::unordered_map<std::uint64_t, std::size_t> stack_index;  // stack id -> index in stacks
  stacks = nlohmann::json::array();
  stacks.push_back({{"site", "(no stack recorded)"}, {"frames", nlohmann::json::array()}});
  stack_index[0] = 0;
  nlohmann::json cols;
  for (const char* key :
       {"id", "start", "end", "size", "rounded", "committed", "offset", "stack", "t0", "t1"}) {
    cols[key] = nlohmann::json::array();
  }
  for (const block& b : blocks) {
    auto [it, added] = stack_index.emplace(b.stack, stacks.size());
    if (added) {
      stacks.push_back(
          {{"site", site_name(&sites, b.stack)}, {"frames", stack_lines(&sites, b.stack)}});
    }
    cols["id"].push_back(b.id);
    cols["start"].push_back(b.start);
    cols["end"].push_back(b.end);
    cols["size"].push_back(b.size);
    cols["rounded"].push_back(b.rounded);
    cols["committed"].push_back(b.committed);
    cols["offset"].push_back(b.offset);
    cols["stack"].push_back(it->second);
    cols["t0"].push_back(b.t0);
    cols["t1"].push_back(b.t1);
  }
  return cols;
}

// The device's page rounding at an out-of-memory in two parts (a v2 trace, whose replay kept
// every block's site): each committed block rounded on its own, and the free room of partly
// filled shared pages. Null when there is no failure or no sites.
nlohmann::json page_rounding_split(const replay_report& r, bool has_sites) {
  if (!r.oom || !has_sites) return nullptr;
  const oom_point& p = *r.oom;
  std::uint64_t per_block = 0;
  for (const auto* list : {&p.live_sites, &p.held_sites}) {
    for (const site_usage& u : *list) per_block += u.committed_bytes - u.rounded_bytes;
  }
  return {{"per_block", per_block},
          {"shared_room", p.page_loss_bytes > per_block ? p.page_loss_bytes - per_block : 0}};
}

// Without an out-of-memory, the sites at the peak: the event at which the blocks' device-committed
// bytes add up to the most (the first such), and per stack what was live then, as the result's
// site lists are (site_usage_json). Null at an out-of-memory, whose sites the result has.
nlohmann::json peak_sites(const std::vector<block>& blocks, const replay_report& r,
                          const trace::site_table& sites) {
  if (r.oom || blocks.empty()) return nullptr;
  // The change of live committed bytes at each event (a block lives from its start to its end),
  // summed in event order: linear in the blocks and events, no sort.
  std::uint64_t last = 0;
  for (const block& b : blocks) last = std::max(last, b.end);
  std::vector<std::int64_t> change(last + 1, 0);
  for (const block& b : blocks) {
    change[b.start] += static_cast<std::int64_t>(b.committed);
    if (!b.live_at_end) change[b.end] -= static_cast<std::int64_t>(b.committed);
  }
  std::int64_t live = 0, best = -1;
  std::uint64_t at = 0;
  for (std::uint64_t event = 0; event <= last; ++event) {
    live += change[event];
    if (live > best) best = live, at = event;
  }
  std::unordered_map<std::uint64_t, site_usage> by_stack;
  for (const block& b : blocks) {
    if (b.start > at || (!b.live_at_end && b.end <= at)) continue;
    site_usage& u = by_stack[b.stack];
    u.stack = b.stack;
    u.requested_bytes += b.size;
    u.rounded_bytes += b.rounded;
    u.committed_bytes += b.committed;
    ++u.blocks;
  }
  std::vector<site_usage> list;
  for (const auto& [stack, u] : by_stack) list.push_back(u);
  std::sort(list.begin(), list.end(), [](const site_usage& a, const site_usage& b) {
    return a.rounded_bytes != b.rounded_bytes ? a.rounded_bytes > b.rounded_bytes
                                              : a.stack < b.stack;
  });
  return {{"event", at}, {"committed_bytes", best}, {"sites", site_usage_json(list, &sites)}};
}

// The blocks of `blocks` live where the replay ended (the failure, or the last event): their count
// and bytes, as requested, in pool bins and device-committed.
nlohmann::json live_sum(const std::vector<block>& blocks) {
  std::uint64_t n = 0, requested = 0, rounded = 0, committed = 0;
  for (const block& b : blocks) {
    if (!b.live_at_end) continue;
    ++n, requested += b.size, rounded += b.rounded, committed += b.committed;
  }
  return {{"blocks", n},
          {"requested_bytes", requested},
          {"rounded_bytes", rounded},
          {"committed_bytes", committed}};
}

// Every byte count under `j` that the page shows as a figure (a key ending in "_bytes", a
// capacity, a limit, a page's geometry), into `out`.
void collect_figures(const nlohmann::json& j, std::set<std::uint64_t>& out, bool figure = false) {
  if (j.is_number_unsigned()) {
    if (figure) out.insert(j.get<std::uint64_t>());
  } else if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      const bool named = key.ends_with("_bytes") || key == "capacity" || key == "limit" ||
                         key == "page" || key == "pack_limit" || key == "pack_granule" ||
                         key == "headroom" || key == "per_block" || key == "shared_room" ||
                         key == "bytes";
      collect_figures(value, out, named);
    }
  } else if (j.is_array()) {
    for (const auto& value : j) collect_figures(value, out, figure);
  }
}

// Each figure of the page as the text report writes it (common::format_bytes): the page rounds
// nothing itself, so the two never differ in a digit. Keyed by the byte count in decimal.
nlohmann::json bytes_text(const replay_report& r, const nlohmann::json& data) {
  std::set<std::uint64_t> figures;
  collect_figures(to_json(r), figures);
  collect_figures(data, figures);
  for (const char* column : {"size", "rounded", "committed"}) {  // each block's, for its hover
    for (const auto& v : data["blocks"][column]) figures.insert(v.get<std::uint64_t>());
  }
  nlohmann::json text = nlohmann::json::object();
  for (const std::uint64_t b : figures) text[std::to_string(b)] = format_bytes(b);
  return text;
}

// At an out-of-memory on a bounded device: the capacity summed, row by row, and the failing
// request's line, in the text report's words (report_format.h); null otherwise.
void capacity_sum_figures(const replay_report& r, nlohmann::json& j) {
  j["capacity_sum"] = nullptr;
  j["request_text"] = nullptr;
  if (!r.oom) return;
  const std::optional<capacity_sum> s = capacity_sum_at(*r.oom, r.device, r.config.use_pool);
  if (!s) return;
  j["capacity_sum"] = nlohmann::json::array();
  for (const capacity_sum_row& row : capacity_sum_rows(*s, r)) {
    j["capacity_sum"].push_back(
        {{"op", row.op}, {"bytes", row.bytes}, {"what", row.what}, {"total", row.total}});
  }
  j["request_text"] = capacity_request_text(*s, r);
  if (s->unused != 0) j["capacity_unused"] = s->unused;
  if (s->held_unused != 0) j["capacity_held_unused"] = s->held_unused;
  if (const std::string unused = capacity_unused_text(*s); !unused.empty())
    j["capacity_unused_text"] = unused;
}

}  // namespace

std::string search_replay_note(const replay::config_result& first) {
  if (first.replay || !first.min_capacity || !first.min_capacity->found) return "";
  const replay::min_capacity_result& m = *first.min_capacity;
  const std::string minimum = "the minimum capacity, " + exact_size_text(m.capacity) +
                              ", the smallest that replays cleanly";
  if (m.one_granule_below) {
    return "The replay shown is one granule (" + exact_size_text(m.granule, false) + ") below " +
           minimum + ": at " + exact_size_text(m.capacity - m.granule) + " it runs out, as below.";
  }
  return "The replay shown is at " + minimum + ".";
}

nlohmann::json html_data(const replay_report& r, const std::string& trace_path,
                         const std::string& title, const html_limits& limits) {
  trace::trace_reader reader(trace_path, {.check_liveness = false});
  std::uint64_t never_used = 0;
  std::vector<block> blocks = read_blocks(reader, r, never_used);
  const std::size_t total_blocks = blocks.size();
  // Sites named as the replay named them (--library-frames, --site-frames).
  trace::site_table sites = reader.sites();
  if (r.sites) {
    sites.set_library_patterns(r.sites->library_patterns());
    sites.set_site_frames(r.sites->site_frames());
  }
  const nlohmann::json peak =
      peak_sites(blocks, r, sites);  // every block, before some are left out
  const nlohmann::json live_all = live_sum(blocks);
  const double drawn = keep_largest(blocks, limits.max_blocks);
  nlohmann::json stacks;
  nlohmann::json cols = block_columns(blocks, sites, stacks);
  nlohmann::json timeline = nlohmann::json::array();
  for (const timeline_point& p : r.timeline) {
    timeline.push_back(
        {p.event, p.active_bytes, p.held_bytes, p.managed_bytes, p.device_used_bytes});
  }
  nlohmann::json j;
  // The title names the trace file: in its printable form (common/text_escape.h), as every string
  // from a trace or profile.
  j["title"] = common::escape_text(title);
  // How the device rounds a block (the measured device of --device opencl has no profile: exact).
  const device_model::device_profile& prof = r.device.profile;
  j["profile"] = {
      {"name", r.device.measured ? "none (measured device)" : common::escape_text(prof.name)},
      {"page", prof.page},
      {"pack_limit", prof.pack_limit},
      {"pack_granule", prof.pack_granule},
      {"headroom", prof.headroom}};
  j["blocks"] = cols;
  j["total_blocks"] = total_blocks;  // committed, and so drawn unless left out
  j["never_used_blocks"] = never_used;
  j["drawn_area_fraction"] = drawn;
  j["stacks"] = stacks;
  j["timeline"] = timeline;
  j["has_sites"] = !reader.sites().empty();
  j["peak"] = peak;
  j["page_rounding_split"] =
      page_rounding_split(r, reader.version() >= trace::sites_format_version);
  // The blocks live at the end, all and drawn (the page's sentence under the chart).
  j["live_at_end"] = {{"all", live_all}, {"drawn", live_sum(blocks)}};
  capacity_sum_figures(r, j);
  j["free_to_program_name"] = free_to_program_name;
  j["driver_headroom_name"] = driver_headroom_name;
  j["bytes_text"] = bytes_text(r, j);
  return j;
}

}  // namespace clpool::replay_cli
