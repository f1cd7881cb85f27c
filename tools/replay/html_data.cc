#include "tools/replay/html_data.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "common/text_escape.h"
#include "device_model/device_memory.h"
#include "pool/bins.h"
#include "tools/replay/site_report.h"
#include "trace/trace_reader.h"

namespace clpool::replay {
namespace {

struct block {
  // size: requested; rounded: the pool's bin; committed: what the device's profile makes of it.
  std::uint64_t id = 0, start = 0, end = 0, size = 0, rounded = 0, committed = 0, stack = 0, offset = 0;
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
  std::map<std::uint64_t, std::uint64_t> gaps_;                 // offset -> size
  std::set<std::pair<std::uint64_t, std::uint64_t>> by_size_;  // (size, offset)
  std::uint64_t top_ = 0;
};

nlohmann::json site_rows(const std::vector<site_usage>& raw, const replay_report& r) {
  const std::vector<site_usage> list = merge_by_site(raw, r.sites.get());
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t i = 0; i < list.size() && i < 20; ++i) {
    a.push_back({{"site", site_name(r.sites.get(), list[i].stack)},
                 {"requested", list[i].requested_bytes},
                 {"rounded", list[i].rounded_bytes},
                 {"committed", list[i].committed_bytes},
                 {"blocks", list[i].blocks},
                 {"frames", stack_lines(r.sites.get(), list[i].stack)}});
  }
  return a;
}

}  // namespace

nlohmann::json html_data(const replay_report& r, const std::string& trace_path,
                         const std::string& title, const html_limits& limits) {
  trace::trace_reader reader(trace_path, {.check_liveness = false});
  const bool pool = r.config.use_pool;
  std::vector<block> blocks;
  std::unordered_map<std::uint64_t, std::size_t> live;  // trace id -> index in blocks
  best_fit layout;
  trace::trace_event e;
  std::uint64_t index = 0;
  while (index < r.events && reader.next(e)) {
    if (e.action == trace::trace_action::alloc && e.kind != trace::trace_kind::sub &&
        e.kind != trace::trace_kind::host && e.size != 0) {
      block b;
      b.id = e.id;
      b.start = b.end = index;
      b.size = e.size;
      b.rounded = pool ? rounded_size(e.size, r.config.leading_bits) : e.size;
      b.committed = device_model::profile_rounded(r.device.profile, b.rounded);
      b.stack = e.stack;
      b.t0 = b.t1 = e.time_ns;
      b.offset = layout.place(b.committed);
      live[e.id] = blocks.size();
      blocks.push_back(b);
    } else if (e.action == trace::trace_action::free) {
      if (const auto it = live.find(e.id); it != live.end()) {
        block& b = blocks[it->second];
        b.end = index;
        b.t1 = e.time_ns;
        b.live_at_end = false;
        layout.release(b.offset, b.committed);
        live.erase(it);
      }
    }
    ++index;
  }
  // Frames may follow the failure (lazy symbolization): read the sites to the end.
  try {
    while (reader.next(e)) {
    }
  } catch (const trace::trace_error&) {
  }
  const std::uint64_t last = index == 0 ? 0 : index - 1;
  for (block& b : blocks) {
    if (b.live_at_end) b.end = last + 1;
  }
  const std::size_t total_blocks = blocks.size();
  std::uint64_t total_area = 0, drawn_area = 0;
  for (const block& b : blocks) total_area += b.committed * (b.end - b.start);
  if (blocks.size() > limits.max_blocks) {
    // Keep the blocks that cover most of the picture: bytes x lifetime, live ones at the end first.
    std::nth_element(blocks.begin(), blocks.begin() + static_cast<std::ptrdiff_t>(limits.max_blocks),
                     blocks.end(), [](const block& a, const block& b) {
                       if (a.live_at_end != b.live_at_end) return a.live_at_end;
                       return a.committed * (a.end - a.start) > b.committed * (b.end - b.start);
                     });
    blocks.resize(limits.max_blocks);
    std::sort(blocks.begin(), blocks.end(), [](const block& a, const block& b) { return a.start < b.start; });
  }
  for (const block& b : blocks) drawn_area += b.committed * (b.end - b.start);

  const trace::site_table& sites = reader.sites();
  std::unordered_map<std::uint64_t, std::size_t> stack_index;  // stack id -> index in "stacks"
  nlohmann::json stacks = nlohmann::json::array();
  stacks.push_back({{"site", "(no stack recorded)"}, {"frames", nlohmann::json::array()}});
  stack_index[0] = 0;
  nlohmann::json cols = {{"id", nlohmann::json::array()},    {"start", nlohmann::json::array()},
                         {"end", nlohmann::json::array()},   {"size", nlohmann::json::array()},
                         {"rounded", nlohmann::json::array()}, {"committed", nlohmann::json::array()},
                         {"offset", nlohmann::json::array()},
                         {"stack", nlohmann::json::array()}, {"t0", nlohmann::json::array()},
                         {"t1", nlohmann::json::array()}};
  for (const block& b : blocks) {
    auto [it, added] = stack_index.emplace(b.stack, stacks.size());
    if (added) {
      stacks.push_back({{"site", site_name(&sites, b.stack)}, {"frames", stack_lines(&sites, b.stack)}});
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
  nlohmann::json timeline = nlohmann::json::array();
  for (const timeline_point& p : r.timeline) {
    timeline.push_back({p.event, p.active_bytes, p.held_bytes, p.managed_bytes, p.device_used_bytes});
  }
  nlohmann::json j;
  j["title"] = common::escape_text(title);
  j["config"] = to_string(r.config);
  j["pool"] = pool;
  j["leading_bits"] = r.config.leading_bits;
  j["capacity"] = r.device.capacity;
  j["device"] = r.device.backend + ", " + std::string(to_string(r.device.semantics)) + " allocation, " +
                common::escape_text(r.device.profile.name) + " profile";
  // How the device rounds a block (the measured device of --device opencl has no profile: exact).
  const device_model::device_profile& prof = r.device.profile;
  j["profile"] = {{"name", r.device.measured ? "none (measured device)" : common::escape_text(prof.name)},
                  {"page", prof.page},
                  {"pack_limit", prof.pack_limit},
                  {"pack_granule", prof.pack_granule},
                  {"headroom", prof.headroom}};
  j["events"] = r.events;
  j["blocks"] = cols;
  j["total_blocks"] = total_blocks;
  j["drawn_area_fraction"] = total_area == 0 ? 1.0 : static_cast<double>(drawn_area) / static_cast<double>(total_area);
  j["stacks"] = stacks;
  j["timeline"] = timeline;
  j["has_sites"] = !sites.empty();
  if (r.oom) {
    const oom_point& p = *r.oom;
    // The device's page rounding in two parts (a v2 trace, whose replay kept every block's site):
    // each committed block rounded on its own, and the free room of partly filled shared pages.
    nlohmann::json page_split = nullptr;
    if (reader.version() >= trace::sites_format_version) {
      std::uint64_t per_block = 0;
      for (const auto* list : {&p.live_sites, &p.held_sites}) {
        for (const site_usage& u : *list) per_block += u.committed_bytes - u.rounded_bytes;
      }
      page_split = {{"per_block", per_block},
                    {"shared_room", p.page_loss_bytes > per_block ? p.page_loss_bytes - per_block : 0}};
    }
    j["oom"] = {{"event", p.event_index},
                {"requested", p.requested_bytes},
                {"rounded", p.rounded_bytes},
                {"cause", std::string(to_string(p.site))},
                {"device_used", p.device_used_bytes},
                {"held", p.held_bytes},
                {"active", p.active_bytes},
                {"active_rounded", p.active_rounded_bytes},
                {"bin_rounding", p.rounding_loss_bytes},
                {"page_rounding", p.page_loss_bytes},
                {"page_rounding_split", page_split},
                {"site", site_name(&sites, p.stack)},
                {"frames", stack_lines(&sites, p.stack)},
                {"live_sites", site_rows(p.live_sites, r)},
                {"held_sites", site_rows(p.held_sites, r)}};
  } else {
    j["oom"] = nullptr;
  }
  return j;
}

}  // namespace clpool::replay
