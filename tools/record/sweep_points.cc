// clpool sweep's failure points: what the fault-free run's report lists, named by the sites its
// trace holds, and which of them a sweep (or a shard of it) runs.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include "common/text_escape.h"
#include "replay/site_names.h"
#include "tools/record/sweep.h"
#include "trace/trace_reader.h"

namespace clpool::record {
namespace {

// The sites of the trace the run wrote (its frames and stacks).
struct trace_sites {
  std::shared_ptr<trace::site_table> sites;
};

trace_sites read_sites(const std::string& path, std::string& problem) {
  trace_sites out;
  trace::read_result r = trace::read_all(path, {.check_liveness = false});
  if (r.error && r.events.empty()) {
    problem = std::string("its trace cannot be read: ") + r.error->what();
    return out;
  }
  out.sites = std::make_shared<trace::site_table>(std::move(r.sites));
  return out;
}

void name(failure_point& p, std::uint64_t stack, const trace_sites& t) {
  if (stack == 0) {
    p.site = p.path = "(no stack recorded)";
    return;
  }
  p.site = replay::site_name(t.sites.get(), stack);
  p.unnamed = replay::is_unnamed_site(t.sites.get(), stack);
  // The path's files relative to where the sweep runs, as a user typed the program's path: a
  // native frame's file is its module's path, repeated on every frame.
  static const std::string cwd = [] {
    std::error_code ec;
    const std::filesystem::path here = std::filesystem::current_path(ec);
    return ec ? std::string() : here.string();
  }();
  replay::site_path_rule rule;
  if (cwd != "/") rule.root = cwd;
  p.path = replay::site_path_name(t.sites.get(), stack, rule);
}

}  // namespace

const char* to_string(verdict v) {
  switch (v) {
    case verdict::crashed:
      return "crashed";
    case verdict::hung:
      return "hung";
    case verdict::leaked:
      return "leaked";
    case verdict::silent:
      return "silent";
    case verdict::handled:
      return "handled";
    case verdict::unreached:
      return "not reached";
    case verdict::interrupted:
      return "interrupted";
  }
  return "?";
}

std::vector<failure_point> read_points(const std::string& report, const std::string& trace,
                                       bool first_uses, std::optional<std::uint64_t>& live_at_exit,
                                       std::string& problem) {
  std::vector<failure_point> points;
  std::vector<std::uint64_t> stacks;  // each point's, as the report gives it
  std::ifstream in(report);
  if (!in) return points;  // the layer never loaded: no OpenCL call, so no failure point
  std::uint64_t last_alloc = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string word;
    words >> word;
    failure_point p;
    std::uint64_t stack = 0;
    if (word == "alloc") {
      words >> p.id.n >> p.block >> p.bytes >> p.what >> stack;
    } else if (word == "first_use" && first_uses) {
      p.id.first_use = true;
      words >> p.id.n >> p.block >> stack >> p.what;
    } else if (word == "exit") {
      std::string blocks_word, bytes_word;
      std::uint64_t blocks = 0, bytes = 0;
      if (words >> blocks_word >> blocks >> bytes_word >> bytes) live_at_exit = bytes;
      continue;
    } else {
      continue;  // a first use with a profile that fails at creation, an injected fault, ...
    }
    if (!words || p.id.n == 0) continue;
    // One process counts its allocations 1, 2, 3, ...; a count that starts again is another
    // process's, appending to the same report (the layer loads in each). Their Nth allocations
    // all fail at once, so no run could be told apart: refused rather than swept wrongly.
    if (!p.id.first_use) {
      if (p.id.n <= last_alloc) {
        problem = "the program allocates device memory in more than one process (alloc " +
                  std::to_string(p.id.n) + " came again after alloc " + std::to_string(last_alloc) +
                  "): each process would fail its own Nth allocation in the same run; sweep each "
                  "process's command on its own";
        return {};
      }
      last_alloc = p.id.n;
    }
    stacks.push_back(stack);
    points.push_back(std::move(p));
  }
  if (points.empty()) return points;
  const trace_sites t = read_sites(trace, problem);
  if (!problem.empty()) return points;
  std::map<std::pair<bool, std::string>, std::uint64_t> ordinals;
  for (std::size_t i = 0; i < points.size(); ++i) {
    failure_point& p = points[i];
    name(p, stacks[i], t);
    // Naming a first use: the buffer's size is where it was allocated.
    if (p.id.first_use) {
      for (const failure_point& a : points) {
        if (!a.id.first_use && a.block == p.block) p.bytes = a.bytes;
      }
    }
    p.ordinal = ++ordinals[{p.id.first_use, p.site}];
  }
  return points;
}

std::optional<std::uint64_t> held_at_trace_end(const std::string& trace) {
  const trace::read_result r = trace::read_all(trace, {.check_liveness = false});
  if (r.version == 0) return std::nullopt;
  std::unordered_map<std::uint64_t, std::uint64_t> held;  // id -> bytes
  for (const trace::trace_event& e : r.events) {
    if (e.action == trace::trace_action::alloc && trace::takes_device_memory(e.kind)) {
      held[e.id] = e.size;
    } else if (e.action == trace::trace_action::release || e.action == trace::trace_action::free) {
      held.erase(e.id);
    }
  }
  std::uint64_t bytes = 0;
  for (const auto& [id, size] : held) bytes += size;
  return bytes;
}

namespace {
// 1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st.
std::string ordinal(std::uint64_t n) {
  const std::uint64_t tens = n % 100, ones = n % 10;
  const char* suffix = tens >= 11 && tens <= 13 ? "th"
                       : ones == 1              ? "st"
                       : ones == 2              ? "nd"
                       : ones == 3              ? "rd"
                                                : "th";
  return std::to_string(n) + suffix;
}
}  // namespace

std::vector<failure_point> select_points(const std::vector<failure_point>& all, point_kinds kinds,
                                         const sweep_options& o,
                                         std::vector<failure_point>& left_out, std::string& why) {
  std::vector<failure_point> wanted;
  for (const failure_point& p : all) {
    if (o.only) {
      if (p.id == *o.only) wanted.push_back(p);
      continue;
    }
    if ((kinds == point_kinds::alloc && p.id.first_use) ||
        (kinds == point_kinds::first_use && !p.id.first_use)) {
      continue;
    }
    wanted.push_back(p);
  }
  std::vector<failure_point> shard;
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    (i % o.shard_count == o.shard_index ? shard : left_out).push_back(wanted[i]);
  }
  if (o.shard_count > 1) {
    why = "in shard " + std::to_string(o.shard_index + 1) + "/" + std::to_string(o.shard_count) +
          ": every " + ordinal(o.shard_count) + " point from the " + ordinal(o.shard_index + 1);
  }
  if (!o.max_runs || shard.size() <= *o.max_runs) return shard;
  // Evenly: M of P points, the first at an offset the seed picks, then every P/M.
  const std::size_t p = shard.size(), m = static_cast<std::size_t>(*o.max_runs);
  const std::size_t offset = static_cast<std::size_t>(o.seed % (p / m));
  std::vector<bool> keep(p, false);
  for (std::size_t i = 0; i < m; ++i) keep[offset + i * p / m] = true;
  std::vector<failure_point> sampled;
  for (std::size_t i = 0; i < p; ++i) (keep[i] ? sampled : left_out).push_back(shard[i]);
  why += std::string(why.empty() ? "" : "; ") + "--max-runs " + std::to_string(m) + ": " +
         std::to_string(m) + " of " + std::to_string(p) + " points, evenly from the " +
         ordinal(offset + 1) + " (--seed " + std::to_string(o.seed) + ")";
  std::sort(left_out.begin(), left_out.end(), [](const failure_point& a, const failure_point& b) {
    return a.id.first_use != b.id.first_use ? !a.id.first_use : a.id.n < b.id.n;
  });
  return sampled;
}

}  // namespace clpool::record
