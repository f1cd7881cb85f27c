#include "replay/result_json.h"

#include "common/text_escape.h"
#include "replay/site_names.h"

namespace clpool::replay {
nlohmann::json callers_json(const std::vector<caller_usage>& callers) {
  nlohmann::json a = nlohmann::json::array();
  for (const caller_usage& c : callers) {
    a.push_back({{"caller", c.name},
                 {"requested_bytes", c.requested_bytes},
                 {"rounded_bytes", c.rounded_bytes},
                 {"committed_bytes", c.committed_bytes},
                 {"blocks", c.blocks},
                 {"callers", callers_json(c.callers)}});
  }
  return a;
}

namespace {

nlohmann::json site_list_json(const std::vector<site_usage>& raw, const replay_report& r,
                              std::size_t top) {
  return site_usage_json(raw, r.sites.get(), top);
}

}  // namespace

nlohmann::json site_usage_json(const std::vector<site_usage>& raw, const trace::site_table* sites,
                               std::size_t top) {
  const std::vector<site_usage> list = merge_by_site(raw, sites);
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t i = 0; i < list.size() && i < top; ++i) {
    const site_usage& u = list[i];
    const std::string name = site_name(sites, u.stack);
    a.push_back({{"stack", u.stack},
                 {"site", name},
                 {"frames", stack_lines(sites, u.stack)},
                 {"requested_bytes", u.requested_bytes},
                 {"rounded_bytes", u.rounded_bytes},
                 {"committed_bytes", u.committed_bytes},
                 {"blocks", u.blocks},
                 {"callers", callers_json(callers_of(raw, sites, name))}});
  }
  return a;
}

void sites_json(nlohmann::json& oom, const replay_report& r, std::size_t top) {
  if (!r.oom || !r.sites) return;
  const oom_point& p = *r.oom;
  oom["stack"] = p.stack;
  oom["site"] = site_name(r.sites.get(), p.stack);
  oom["frames"] = stack_lines(r.sites.get(), p.stack);
  oom["live_sites"] = site_list_json(p.live_sites, r, top);
  oom["held_sites"] = site_list_json(p.held_sites, r, top);
}

nlohmann::json capacity_sum_json(const capacity_sum& s) {
  return {{"live_requested_bytes", s.live_requested},
          {"bin_rounding_bytes", s.bin_rounding},
          {"held_bytes", s.held},
          {"page_rounding_bytes", s.page_rounding},
          {"other_bytes", s.other},
          {"device_used_bytes", s.device_used},
          {"driver_headroom_bytes",
           s.headroom_known ? nlohmann::json(s.headroom) : nlohmann::json(nullptr)},
          {"free_to_program_bytes", s.free},
          {"capacity_bytes", s.capacity},
          {"request_rounded_bytes", s.request_rounded},
          {"request_device_bytes", s.request_device},
          {"request_takes_new_shared_page", s.request_takes_new_shared_page},
          {"unused_bytes", s.unused},
          {"unused_bin_rounding_bytes", s.unused_bin_rounding},
          {"held_unused_bytes", s.held_unused}};
}

namespace {
// A count of the whole trace's, null when the rest of the trace could not be read.
nlohmann::json in_trace_json(const replay_report& r, std::uint64_t n) {
  return r.trace_counts_known ? nlohmann::json(n) : nlohmann::json(nullptr);
}
}  // namespace

nlohmann::json frees_at_json(const replay_report& r) {
  const auto in_trace = [&r](std::uint64_t n) { return in_trace_json(r, n); };
  return {{"moment", std::string(to_string(r.frees_at))},
          {"given", r.frees_at_given},
          {"releases_replayed", r.releases},
          {"waits_replayed", r.waits},
          {"releases_in_trace", in_trace(r.in_trace.releases)},
          {"waits_in_trace", in_trace(r.in_trace.waits)}};
}

// A version-4 trace's first uses, and the live blocks no command had used yet (in the active
// figures, in no site's); nothing for a trace without them.
void first_uses_json(const replay_report& r, nlohmann::json& j) {
  if (r.first_use_kinds.empty()) return;
  j["first_uses"] = {{"kinds", r.first_use_kinds},
                     {"use_events", r.uses},
                     {"use_events_in_trace", in_trace_json(r, r.in_trace.uses)}};
  j["end_unused_bytes"] = r.end_unused_bytes;
  j["end_unused_blocks"] = r.end_unused_blocks;
  if (r.peak_asked && r.sites) {
    j["peak_unused_bytes"] = r.peak_unused_bytes;
    j["peak_unused_blocks"] = r.peak_unused_blocks;
  }
}

namespace {

// The device a replay ran on: its backend, capacity, semantics, maximum allocation, and its
// profile's name or, for a real device, its own account.
void device_json(const device_spec& d, nlohmann::json& j) {
  j["device"] = d.backend;
  j["capacity"] = d.capacity;
  j["semantics"] = std::string(to_string(d.semantics));
  j["max_alloc"] = d.max_alloc == unlimited ? nlohmann::json(nullptr) : nlohmann::json(d.max_alloc);
  j["profile"] =
      d.measured ? nlohmann::json(nullptr) : nlohmann::json(common::json_text(d.profile.name));
  if (const auto& m = d.measured) {
    j["measured_device"] = {
        {"name", common::json_text(m->name)},
        {"driver_version", common::json_text(m->driver_version)},
        {"free_at_start", m->free_at_start},
        {"free_memory_source", m->free_memory_source},
        {"failure_point", m->failure_point},
        {"usable_bytes", m->usable_bytes},
        {"above_max_alloc", m->above_max_alloc.empty() ? nlohmann::json(nullptr)
                                                       : nlohmann::json(m->above_max_alloc)}};
  }
}

}  // namespace

nlohmann::json to_json(const replay_report& r) {
  nlohmann::json j;
  j["config"] = to_string(r.config);
  device_json(r.device, j);
  j["looks_recorded_below_a_pool"] = r.looks_recorded_below_a_pool();
  // The trace ended in a recorder's zero-filled tail (no normal end), and the blocks it left live.
  j["trace_cut_off"] = r.trace_counts_known && r.in_trace.cut_off;
  j["live_blocks_at_trace_end"] = in_trace_json(r, r.in_trace.live_at_end());
  j["ok"] = r.ok();
  j["events"] = r.events;
  j["allocs"] = r.allocs;
  j["frees"] = r.frees;
  j["recorded_failures"] = r.recorded_failures;
  j["recorded_failures_that_fit"] = r.recorded_failures_that_fit;
  j["recorded_size_refusals"] = r.recorded_size_refusals;
  j["peak_active_bytes"] = r.peak_active_bytes;
  j["peak_active_event"] = r.peak_active_event;
  j["end_active_bytes"] = r.end_active_bytes;
  j["end_active_blocks"] = r.end_active_blocks;
  if (r.peak_asked && r.sites) {
    j["peak_sites"] = site_list_json(r.peak_live_sites, r, 20);
    j["end_sites"] = site_list_json(r.end_live_sites, r, 20);
  }
  j["peak_managed_bytes"] = r.peak_managed_bytes;
  j["peak_device_bytes"] = r.peak_device_bytes;
  j["peak_host_bytes"] = r.peak_host_bytes;
  j["host_allocs"] = r.host_allocs;
  j["hits"] = r.hits;
  j["misses"] = r.misses;
  j["hit_rate"] = r.hit_rate();
  j["allocator_allocations"] = r.allocator_allocations;
  j["allocator_frees"] = r.allocator_frees;
  j["allocator_failures"] = r.allocator_failures;
  j["oom_retries"] = r.oom_retries;
  j["rescued_requests"] = r.rescued_requests;
  if (r.has_releases()) j["frees_at"] = frees_at_json(r);
  // A trace with first uses (version 4): the kinds it records them for, the use events applied.
  first_uses_json(r, j);
  if (r.oom) {
    const oom_point& p = *r.oom;
    j["oom"] = {{"event_index", p.event_index},
                {"seq", p.seq},
                {"line", p.line},
                {"action", std::string(trace::to_string(p.action))},
                {"id", p.id},
                {"requested_bytes", p.requested_bytes},
                {"rounded_bytes", p.rounded_bytes},
                {"cause", std::string(to_string(p.site))},
                {"refused_for_size", p.refused_for_size()},
                {"recorded_failure", p.recorded_failure},
                {"active_bytes", p.active_bytes},
                {"active_rounded_bytes", p.active_rounded_bytes},
                {"held_bytes", p.held_bytes},
                {"managed_bytes", p.managed_bytes},
                {"device_used_bytes", p.device_used_bytes},
                {"capacity", p.capacity},
                {"limit", p.limit == unlimited ? nlohmann::json(nullptr) : nlohmann::json(p.limit)},
                {"held_in_other_bins_bytes", p.held_before_bytes},
                {"rounding_loss_bytes", p.rounding_loss_bytes},
                {"page_loss_bytes", p.page_loss_bytes},
                {"retries", p.retries},
                {"message", p.message}};
    if (const std::optional<capacity_sum> s = capacity_sum_at(p, r.device, r.config.use_pool)) {
      j["oom"]["capacity_sum"] = capacity_sum_json(*s);
    }
    sites_json(j["oom"], r);
  } else {
    j["oom"] = nullptr;
  }
  return j;
}

nlohmann::json to_json(const min_capacity_result& m) {
  nlohmann::json j;
  j["found"] = m.found;
  j["capacity"] = m.found ? nlohmann::json(m.capacity) : nlohmann::json(nullptr);
  j["granule"] = m.granule;
  j["replays"] = m.replays;
  if (!m.found) j["why_not"] = m.why_not;
  if (m.at_result && m.at_result->has_releases()) {
    j["frees_at"] = frees_at_json(*m.at_result);
  }
  if (m.found && m.one_granule_below && m.one_granule_below->oom && m.one_granule_below->sites) {
    const replay_report& below = *m.one_granule_below;
    j["set_by"] = {{"event_index", below.oom->event_index},
                   {"stack", below.oom->stack},
                   {"site", site_name(below.sites.get(), below.oom->stack)},
                   {"frames", stack_lines(below.sites.get(), below.oom->stack)}};
  }
  return j;
}

nlohmann::json to_json(const std::vector<config_result>& results, const std::string& input,
                       int exit_code) {
  nlohmann::json j;
  j["schema_version"] = result_schema_version;
  j["input"] = common::json_text(input);
  j["exit_code"] = exit_code;
  j["results"] = nlohmann::json::array();
  for (const config_result& res : results) {
    nlohmann::json c;
    c["config"] = to_string(res.config);
    c["replay"] = res.replay ? to_json(*res.replay) : nlohmann::json(nullptr);
    c["min_capacity"] = res.min_capacity ? to_json(*res.min_capacity) : nlohmann::json(nullptr);
    if (!res.trials.empty()) {
      nlohmann::json& trials = c["trials"] = nlohmann::json::array();
      for (const capacity_trial& t : res.trials) {
        nlohmann::json one = {{"capacity", t.capacity}, {"ok", !t.oom}};
        if (t.device_start) {
          one["device_free_bytes"] = t.device_start->free_queried
                                         ? nlohmann::json(*t.device_start->free_queried)
                                         : nlohmann::json(nullptr);
          one["fill_accepted_bytes"] = t.device_start->fill_accepted;
          one["device_free_at_start_bytes"] = t.device_start->free_at_start;
        }
        if (t.oom) {
          one["oom"] = {{"event_index", t.oom->event_index},
                        {"requested_bytes", t.oom->requested_bytes},
                        {"rounded_bytes", t.oom->rounded_bytes},
                        {"cause", std::string(to_string(t.oom->site))},
                        {"device_used_bytes", t.oom->device_used_bytes}};
        }
        trials.push_back(std::move(one));
      }
    }
    j["results"].push_back(std::move(c));
  }
  return j;
}

}  // namespace clpool::replay
