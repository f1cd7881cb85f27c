#include "replay/diff.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "common/cli.h"
#include "common/text_escape.h"
#include "replay/config.h"
#include "replay/free_schedule.h"
#include "replay/result_json.h"
#include "replay/site_names.h"
#include "trace/trace_reader.h"

namespace clpool::replay {
namespace {

using common::usage_error;

// The key and name of a stack's site: the naming frame's function and file name (so that a site
// whose line moved between the two versions, or whose checkout is elsewhere, is still the same
// site), and its full name.
struct site_id {
  std::string key, name;
};

site_id identify(const trace::site_table* sites, std::uint64_t stack) {
  if (sites == nullptr || stack == 0) return {"(no stack recorded)", "(no stack recorded)"};
  const std::uint64_t frame = naming_frame(*sites, stack);
  const trace::frame_info* f = sites->find_frame(frame);
  if (f == nullptr) return {site_name(sites, stack), site_name(sites, stack)};
  const std::size_t slash = f->file.rfind('/');
  const std::string file = slash == std::string::npos ? f->file : f->file.substr(slash + 1);
  return {f->function + "\n" + file, site_name(sites, stack)};
}

// The event where a replay was refused for its size (oom_point::refused_for_size), if it was.
std::optional<std::uint64_t> refused_at(const config_result& r) {
  if (!r.replay || !r.replay->oom || !r.replay->oom->refused_for_size()) return std::nullopt;
  return r.replay->oom->event_index;
}

std::string describe_device(const std::vector<config_result>& run) {
  for (const config_result& r : run) {
    const std::optional<replay_report>& rep = r.replay;
    if (!rep) continue;
    std::string s =
        rep->device.backend + ", " + std::string(to_string(rep->device.semantics)) + " allocation";
    // Device and profile names are a driver's or a profile file's: in their printable form.
    if (rep->device.measured) return s + ", " + common::escape_text(rep->device.measured->name);
    s += ", " + common::escape_text(rep->device.profile.name) + " profile";
    if (rep->device.max_alloc != unlimited)
      s += ", max alloc " + common::format_bytes_exact(rep->device.max_alloc);
    return s;
  }
  return "";
}

}  // namespace

double parse_growth(const std::string& text, const std::string& what) {
  std::string s = text;
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  std::size_t start = 0;
  while (start < s.size() && (s[start] == ' ' || s[start] == '\t')) ++start;
  s = s.substr(start);
  const auto bad = [&](const std::string& why) {
    return usage_error(what + ": '" + text + "' " + why);
  };
  if (s.empty() || s.back() != '%') throw bad("needs a percent sign, e.g. 5%");
  s.pop_back();
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  if (s.empty()) throw bad("is not a number");
  if (s[0] == '-') throw bad("is negative");
  std::size_t digits = 0, dots = 0;
  for (const char c : s) {
    if (c == '.') {
      ++dots;
    } else if (c >= '0' && c <= '9') {
      ++digits;
    } else {
      throw bad("is not a number");
    }
  }
  if (digits == 0 || dots > 1) throw bad("is not a number");
  const double v = std::stod(s);
  if (!std::isfinite(v) || v > 1e9) throw bad("is too large");
  return v / 100;
}

double growth(std::uint64_t old_value, std::uint64_t new_value) {
  if (old_value == 0) return new_value == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return (static_cast<double>(new_value) - static_cast<double>(old_value)) /
         static_cast<double>(old_value);
}

std::string growth_percent(double g) {
  if (std::isinf(g)) return "new";
  std::ostringstream s;
  s << (g >= 0 ? "+" : "") << std::fixed << std::setprecision(1) << g * 100 << "%";
  return s.str();
}

namespace {

// The whole trace's frames and stacks (they may be defined after the events that use them,
// FORMAT.md); null for a trace without sites.
std::shared_ptr<trace::site_table> read_sites(const std::string& path,
                                              const std::vector<std::string>& patterns) {
  trace::trace_reader reader(path, {.check_liveness = false});
  trace::trace_event e;
  while (reader.next(e)) {
  }
  if (reader.sites().empty()) return nullptr;
  auto table = std::make_shared<trace::site_table>(reader.sites());
  table->set_library_patterns(patterns);
  return table;
}

// Each device block (buffer, SVM) of the trace: on_alloc(event index, event) at its alloc,
// on_free(id) where the replays free it (a version-3 trace's frees by `moment`, free_schedule.h).
template <class Alloc, class Free>
void walk_blocks(const std::string& path, free_moment moment, Alloc on_alloc, Free on_free) {
  trace::trace_reader reader(path, {.check_liveness = false});
  trace::trace_event e;
  free_schedule schedule(moment);
  for (std::uint64_t index = 0; reader.next(e); ++index) {
    if (e.action == trace::trace_action::alloc && trace::takes_device_memory(e.kind)) {
      on_alloc(index, e);
    } else {
      schedule.on_event(e, on_free);
    }
  }
}

// What the site's lines held at its peak: the live blocks of its stacks, `live` (per stack),
// summed per line (site name), largest first, each with its callers.
std::vector<site_line> lines_at_peak(const std::vector<std::uint64_t>& stacks,
                                     const std::unordered_map<std::uint64_t, site_usage>& live,
                                     const trace::site_table* sites) {
  std::vector<site_usage> held;
  for (const std::uint64_t stack : stacks) {
    const auto it = live.find(stack);
    if (it != live.end() && it->second.blocks != 0) held.push_back(it->second);
  }
  std::map<std::string, site_line> by_name;
  for (const site_usage& u : held) {
    site_line& l = by_name[site_name(sites, u.stack)];
    l.bytes += u.requested_bytes;
    l.blocks += u.blocks;
  }
  std::vector<site_line> lines;
  for (auto& [name, l] : by_name) {
    l.name = name;
    l.callers = callers_of(held, sites, name);
    lines.push_back(std::move(l));
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const site_line& a, const site_line& b) { return a.bytes > b.bytes; });
  return lines;
}

// A second walk to each site's peak (`peak_at`: the event index at which it first reached it):
// what each of its lines held then (site_peak::lines), and the site named by its largest line.
void fill_lines(const std::string& path, free_moment moment, const trace::site_table* sites,
                const std::unordered_map<std::uint64_t, site_id>& by_stack,
                const std::unordered_map<std::string, std::uint64_t>& peak_at,
                std::map<std::string, site_peak>& by_key) {
  std::map<std::uint64_t, std::vector<site_peak*>> due;
  for (const auto& [key, index] : peak_at) due[index].push_back(&by_key.at(key));
  std::unordered_map<std::uint64_t, site_usage> live;  // per stack
  std::unordered_map<std::string, std::vector<std::uint64_t>>
      stacks_of;  // per key, in first use order
  std::unordered_set<std::uint64_t> seen;
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>>
      blocks;  // id -> stack, size
  walk_blocks(
      path, moment,
      [&](std::uint64_t index, const trace::trace_event& e) {
        site_usage& u = live[e.stack];
        if (seen.insert(e.stack).second) stacks_of[by_stack.at(e.stack).key].push_back(e.stack);
        u.stack = e.stack;
        u.requested_bytes += e.size, u.rounded_bytes += e.size, u.committed_bytes += e.size,
            ++u.blocks;
        blocks[e.id] = {e.stack, e.size};
        const auto it = due.find(index);
        if (it == due.end()) return;
        for (site_peak* p : it->second) {
          p->lines = lines_at_peak(stacks_of[p->key], live, sites);
          if (!p->lines.empty()) p->name = p->lines.front().name;
        }
      },
      [&](std::uint64_t id) {
        const auto it = blocks.find(id);
        if (it == blocks.end()) return;
        site_usage& u = live[it->second.first];
        u.requested_bytes -= it->second.second, u.rounded_bytes -= it->second.second;
        u.committed_bytes -= it->second.second, --u.blocks;
        blocks.erase(it);
      });
}

}  // namespace

std::vector<site_peak> site_peaks(const std::string& trace_path,
                                  const std::vector<std::string>& library_patterns,
                                  free_moment moment) {
  // Names from a first pass to the end, the peaks from a second, what each line held at its
  // site's peak from a third.
  const std::shared_ptr<trace::site_table> table = read_sites(trace_path, library_patterns);
  std::unordered_map<std::uint64_t, site_id> by_stack;
  std::map<std::string, site_peak> by_key;
  std::unordered_map<std::string, std::uint64_t> live_bytes, peak_at;
  std::unordered_map<std::uint64_t, std::pair<std::string, std::uint64_t>> live;  // id -> key, size
  walk_blocks(
      trace_path, moment,
      [&](std::uint64_t index, const trace::trace_event& e) {
        auto it = by_stack.find(e.stack);
        if (it == by_stack.end())
          it = by_stack.emplace(e.stack, identify(table.get(), e.stack)).first;
        site_peak& p = by_key[it->second.key];
        if (p.key.empty()) p = {it->second.key, it->second.name, 0, {}};
        const std::uint64_t now = live_bytes[it->second.key] += e.size;
        if (now > p.peak_bytes) p.peak_bytes = now, peak_at[p.key] = index;
        live[e.id] = {it->second.key, e.size};
      },
      [&](std::uint64_t id) {
        if (auto it = live.find(id); it != live.end()) {
          live_bytes[it->second.first] -= it->second.second;
          live.erase(it);
        }
      });
  fill_lines(trace_path, moment, table.get(), by_stack, peak_at, by_key);
  std::vector<site_peak> out;
  for (auto& [key, p] : by_key) out.push_back(std::move(p));
  std::stable_sort(out.begin(), out.end(), [](const site_peak& a, const site_peak& b) {
    return a.peak_bytes > b.peak_bytes;
  });
  return out;
}

namespace {

// Names `c` by the line that holds its change (site_change): of the trace that has more of the
// site (`more`), the line whose bytes at the site's peak differ most from the same line's in the
// other (`less`, perhaps null); a line only one trace has counts from 0.
void name_by_line(site_change& c, const site_peak* more, const site_peak* less) {
  c.name = more->name;
  std::int64_t best = std::numeric_limits<std::int64_t>::min();
  for (const site_line& l : more->lines) {
    std::uint64_t before = 0;
    if (less != nullptr) {
      for (const site_line& o : less->lines) {
        if (o.name == l.name) before = o.bytes;
      }
    }
    const std::int64_t d = static_cast<std::int64_t>(l.bytes) - static_cast<std::int64_t>(before);
    if (d > best) best = d, c.name = l.name, c.callers = l.callers;
  }
}

}  // namespace

diff_result compare_runs(const std::string& old_path, const std::vector<config_result>& old_run,
                         const std::vector<site_peak>& old_sites, const std::string& new_path,
                         const std::vector<config_result>& new_run,
                         const std::vector<site_peak>& new_sites,
                         std::optional<double> max_growth) {
  diff_result d;
  d.old_path = old_path;
  d.new_path = new_path;
  d.device = describe_device(old_run);
  d.max_growth = max_growth;
  for (std::size_t i = 0; i < old_run.size() && i < new_run.size(); ++i) {
    const config_result& a = old_run[i];
    const config_result& b = new_run[i];
    config_change c;
    c.config = to_string(a.config);
    if (a.replay) c.old_peak = a.replay->peak_device_bytes;
    if (b.replay) c.new_peak = b.replay->peak_device_bytes;
    if (a.min_capacity) {
      d.granule = a.min_capacity->granule;
      if (a.min_capacity->found) c.old_min = a.min_capacity->capacity;
    }
    if (b.min_capacity && b.min_capacity->found) c.new_min = b.min_capacity->capacity;
    c.old_refused = refused_at(a);
    c.new_refused = refused_at(b);
    if (max_growth && c.new_refused) {
      d.over.push_back(c.config + ": the new trace's event " + std::to_string(*c.new_refused) +
                       " is above the device's maximum allocation");
    }
    if (max_growth) {
      const double g = growth(c.old_peak, c.new_peak);
      if (g > *max_growth)
        d.over.push_back(c.config + "'s peak device memory grew " + growth_percent(g));
      if (c.old_min && !c.new_min) {
        d.over.push_back(c.config + " no longer fits any device");
      } else if (c.old_min && c.new_min) {
        const double m = growth(*c.old_min, *c.new_min);
        if (m > *max_growth)
          d.over.push_back(c.config + "'s minimum capacity grew " + growth_percent(m));
      }
    }
    d.configs.push_back(c);
  }
  std::map<std::string, std::pair<const site_peak*, const site_peak*>> sites;  // key -> old, new
  for (const site_peak& p : old_sites) sites[p.key].first = &p;
  for (const site_peak& p : new_sites) sites[p.key].second = &p;
  for (const auto& [key, both] : sites) {
    const auto [before, after] = both;
    site_change s;
    s.old_bytes = before != nullptr ? before->peak_bytes : 0;
    s.new_bytes = after != nullptr ? after->peak_bytes : 0;
    const bool grew = s.change() >= 0;
    const site_peak* more =
        grew ? (after != nullptr ? after : before) : (before != nullptr ? before : after);
    name_by_line(s, more, more == after ? before : after);
    d.sites.push_back(std::move(s));
  }
  std::stable_sort(d.sites.begin(), d.sites.end(), [](const site_change& a, const site_change& b) {
    return a.change() > b.change();
  });
  return d;
}

diff_result diff_traces(const std::string& old_path, const std::vector<config_result>& old_run,
                        const std::string& new_path, const std::vector<config_result>& new_run,
                        const std::vector<std::string>& library_patterns,
                        std::optional<double> max_growth) {
  // Each trace's sites with its frees where its replays put them (FORMAT.md "Two moments of a
  // free"): the profile's rule or --frees-at, as the first replay applied it.
  const auto moment = [](const std::vector<config_result>& run) {
    for (const config_result& r : run) {
      if (r.replay) return r.replay->frees_at;
    }
    return free_moment::driver;
  };
  return compare_runs(old_path, old_run, site_peaks(old_path, library_patterns, moment(old_run)),
                      new_path, new_run, site_peaks(new_path, library_patterns, moment(new_run)),
                      max_growth);
}

nlohmann::json diff_json(const diff_result& d) {
  nlohmann::json j;
  j["schema_version"] = diff_schema_version;
  j["old"] = common::json_text(d.old_path);
  j["new"] = common::json_text(d.new_path);
  j["device"] = d.device;
  j["granule_bytes"] = d.granule;
  const auto ratio = [](double g) -> nlohmann::json {
    if (std::isinf(g)) return nullptr;
    return g;
  };
  j["configurations"] = nlohmann::json::array();
  for (const config_change& c : d.configs) {
    nlohmann::json x;
    x["config"] = c.config;
    const auto or_null = [](const std::optional<std::uint64_t>& v) {
      return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    x["old"] = {{"peak_device_bytes", c.old_peak},
                {"min_capacity", or_null(c.old_min)},
                {"refused_for_size_at_event", or_null(c.old_refused)}};
    x["new"] = {{"peak_device_bytes", c.new_peak},
                {"min_capacity", or_null(c.new_min)},
                {"refused_for_size_at_event", or_null(c.new_refused)}};
    x["peak_growth"] = ratio(growth(c.old_peak, c.new_peak));
    x["min_capacity_growth"] =
        c.old_min && c.new_min ? ratio(growth(*c.old_min, *c.new_min)) : nlohmann::json(nullptr);
    j["configurations"].push_back(x);
  }
  j["sites"] = nlohmann::json::array();
  for (const site_change& s : d.sites) {
    j["sites"].push_back({{"site", s.name},
                          {"old_peak_bytes", s.old_bytes},
                          {"new_peak_bytes", s.new_bytes},
                          {"change_bytes", s.change()},
                          {"callers", callers_json(s.callers)}});
  }
  j["max_growth"] = d.max_growth ? nlohmann::json(*d.max_growth) : nlohmann::json(nullptr);
  j["exceeded"] = d.over;
  j["passed"] = d.passed();
  return j;
}

}  // namespace clpool::replay
