#include "tools/record/sweep_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

#include "common/byte_size.h"
#include "common/cli.h"
#include "common/output_file.h"
#include "common/text_escape.h"
#include "replay/site_names.h"

namespace clpool::record {
namespace {

constexpr verdict order[] = {verdict::crashed,    verdict::hung,    verdict::leaked,
                             verdict::silent,     verdict::handled, verdict::unreached,
                             verdict::interrupted};

std::string seconds(double s) {
  char b[32];
  std::snprintf(b, sizeof b, s < 10 ? "%.2f s" : "%.0f s", s);
  return b;
}

std::string point_text(const failure_point& p) {
  return to_string(p.id) + " (" + common::format_bytes(p.bytes) +
         (p.id.first_use ? ", " + p.what : " " + p.what) + ")";
}

// Runs of one verdict by the site they failed at, in the order of their first run; within a site,
// the runs of each call path together, in the order of the path's first run (one site can be
// reached through several callers).
std::vector<std::pair<std::string, std::vector<const run_outcome*>>> by_site(const sweep_result& r,
                                                                             verdict v) {
  std::vector<std::pair<std::string, std::vector<const run_outcome*>>> groups;
  for (const run_outcome& run : r.runs) {
    if (run.what != v) continue;
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == run.point.site; });
    if (it == groups.end()) it = groups.insert(groups.end(), {run.point.site, {}});
    auto& runs = it->second;
    const auto last_of_path = std::find_if(runs.rbegin(), runs.rend(), [&](const run_outcome* o) {
      return o->point.path == run.point.path;
    });
    runs.insert(last_of_path == runs.rend() ? runs.end() : last_of_path.base(), &run);
  }
  return groups;
}

void headline(std::ostringstream& out, const sweep_result& r) {
  std::string program;
  for (const std::string& a : r.program) program += (program.empty() ? "" : " ") + a;
  std::size_t allocs = 0, first_uses = 0;
  for (const failure_point& p : r.points) (p.id.first_use ? first_uses : allocs)++;
  const auto counted = [](std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  out << "clpool sweep: " << common::escape_text(program) << "\n"
      << "profile " << common::escape_text(r.profile) << ": "
      << counted(r.points.size(), "failure point", "failure points") << " ("
      << counted(allocs, "allocation", "allocations") << ", "
      << counted(first_uses, "first use", "first uses") << ") in the fault-free run ("
      << seconds(r.fault_free_seconds) << ", "
      << (r.fault_free_live_at_exit ? common::format_bytes_both(*r.fault_free_live_at_exit)
                                    : "unknown")
      << " held at exit"
      << (r.fault_free_live_from_trace ? ", by its trace: no exit handlers ran" : "") << ")\n";
  if (r.points.empty()) {
    out << "0 failure points: the program made no device allocation; nothing to sweep\n";
    return;
  }
  std::map<verdict, std::size_t> count;
  for (const run_outcome& run : r.runs) ++count[run.what];
  out << "runs: " << r.runs.size() - count[verdict::interrupted] << " of " << r.runs.size()
      << " in " << seconds(r.seconds) << " (-j " << r.jobs << ", timeout " << seconds(r.timeout)
      << ")";
  if (r.shard_count > 1) out << ", shard " << r.shard_index + 1 << "/" << r.shard_count;
  out << "\n ";
  const char* sep = " ";
  for (const verdict v : order) {
    if (v == verdict::interrupted && count[v] == 0) continue;
    out << sep << to_string(v) << " " << count[v];
    sep = ", ";
  }
  out << "\n";
  if (r.remaining != 0) {
    out << "interrupted: " << r.remaining << " of " << r.runs.size()
        << " runs remain (the report covers those done)\n";
  }
}

void run_lines(std::ostringstream& out, const run_outcome& run, bool details) {
  out << "    " << point_text(run.point) << ": " << common::escape_text(run.detail) << "\n";
  if (!details) return;
  for (const std::string& frame : run.crash_stack)
    out << "      " << common::escape_text(frame) << "\n";
  out << "      replay: " << common::escape_text(run.replay) << "\n";
}

}  // namespace

std::string sweep_text(const sweep_result& r) {
  std::ostringstream out;
  headline(out, r);
  for (const verdict v : order) {
    const auto groups = by_site(r, v);
    if (groups.empty()) continue;
    std::size_t n = 0;
    for (const auto& g : groups) n += g.second.size();
    out << "\n"
        << to_string(v) << ": " << n << (n == 1 ? " run" : " runs") << " at " << groups.size()
        << (groups.size() == 1 ? " site" : " sites") << "\n";
    const bool details = v != verdict::handled && v != verdict::interrupted;
    for (const auto& [site, runs] : groups) {
      out << "  " << site << "\n";
      // Each call path, then its runs (of a handled path, the first 3 when there are more than 4).
      for (std::size_t i = 0, first = 0; i < runs.size(); ++i) {
        const std::string& path = runs[i]->point.path;
        if (i == 0 || path != runs[i - 1]->point.path) {
          first = i;
          if (path != site) out << "    path: " << path << "\n";
        }
        const std::size_t of_path = static_cast<std::size_t>(
            std::find_if(runs.begin() + first, runs.end(),
                         [&](const run_outcome* o) { return o->point.path != path; }) -
            (runs.begin() + first));
        if (!details && i - first >= 3 && of_path > 4) {
          if (i - first == 3) out << "    ... " << of_path - 3 << " more\n";
          continue;
        }
        run_lines(out, *runs[i], details);
      }
    }
  }
  if (std::any_of(r.points.begin(), r.points.end(),
                  [](const failure_point& p) { return p.unnamed; })) {
    out << "\n" << replay::unnamed_site_note << "\n";
  }
  if (!r.left_out.empty()) {
    out << "\nleft out: " << r.left_out.size()
        << (r.left_out.size() == 1 ? " point (" : " points (") << r.left_out_why << "):";
    for (std::size_t i = 0; i < r.left_out.size() && i < 20; ++i)
      out << " " << to_string(r.left_out[i].id);
    out << (r.left_out.size() > 20 ? " ..." : "") << "\n";
  }
  return out.str();
}

std::string sweep_json(const sweep_result& r) {
  using nlohmann::json;
  const auto point = [](const failure_point& p) {
    return json{{"point", to_string(p.id)},
                {"kind", p.id.first_use ? "first_use" : "alloc"},
                {"n", p.id.n},
                {"block_bytes", p.bytes},
                {"what", common::json_text(p.what)},
                {"site", common::json_text(p.site)},
                {"path", common::json_text(p.path)},
                {"ordinal_at_site", p.ordinal}};
  };
  json j;
  j["schema_version"] = sweep_schema_version;
  j["tool"] = "clpool sweep";
  j["program"] = json::array();
  for (const std::string& a : r.program) j["program"].push_back(common::json_text(a));
  j["profile"] = common::json_text(r.profile);
  j["fault_free"] = {
      {"seconds", r.fault_free_seconds},
      {"live_at_exit_bytes",
       r.fault_free_live_at_exit ? json(*r.fault_free_live_at_exit) : json(nullptr)}};
  j["timeout_seconds"] = r.timeout;
  j["jobs"] = r.jobs;
  j["shard"] = {{"index", r.shard_index + 1}, {"count", r.shard_count}};
  j["points"] = json::array();
  for (const failure_point& p : r.points) j["points"].push_back(point(p));
  j["runs"] = json::array();
  for (const run_outcome& run : r.runs) {
    json one = point(run.point);
    one["verdict"] = to_string(run.what);
    one["detail"] = common::json_text(run.detail);
    one["ran_as"] = run.ran_as;
    one["exit_code"] = run.result.signaled ? json(nullptr) : json(run.result.exit_code);
    one["signal"] = run.result.signaled ? json(run.result.signal) : json(nullptr);
    one["seconds"] = run.result.seconds;
    one["live_at_exit_bytes"] = run.live_at_exit ? json(*run.live_at_exit) : json(nullptr);
    one["crash_stack"] = json::array();
    for (const std::string& f : run.crash_stack) one["crash_stack"].push_back(common::json_text(f));
    one["replay"] = common::json_text(run.replay);
    one["dir"] = common::json_text(run.dir);
    j["runs"].push_back(std::move(one));
  }
  j["left_out"] = json::array();
  for (const failure_point& p : r.left_out) j["left_out"].push_back(to_string(p.id));
  j["left_out_why"] = r.left_out_why;
  j["remaining"] = r.remaining;
  j["seconds"] = r.seconds;
  return j.dump(2) + "\n";
}

std::string sweep_html(const sweep_result& r) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>clpool "
         "sweep</title>\n"
         "<style>body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}h1{font-size:1.3em}"
         "pre{background:#f6f6f6;padding:.6em;overflow:auto}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}"
         ".crashed,.hung,.leaked{color:#b00020;font-weight:600}.silent{color:#a15c00;font-weight:"
         "600}"
         "</style></head><body>\n<h1>clpool sweep</h1>\n<pre>";
  std::ostringstream head;
  headline(head, r);
  // Line by line: escape_xml writes a newline as \x0A, and the <pre> keeps the lines.
  std::istringstream lines(head.str());
  for (std::string line; std::getline(lines, line);) out << common::escape_xml(line) << "\n";
  out << "</pre>\n<table><tr><th>verdict</th><th>point</th><th>site</th>"
      << "<th>what happened</th><th>replay</th></tr>\n";
  for (const run_outcome& run : r.runs) {
    const std::string v = to_string(run.what);
    out << "<tr><td class=\"" << (v == "not reached" ? "unreached" : v) << "\">"
        << common::escape_xml(v) << "</td><td>" << common::escape_xml(point_text(run.point))
        << "</td><td>" << common::escape_xml(run.point.path) << "</td><td>"
        << common::escape_xml(run.detail);
    for (const std::string& f : run.crash_stack)
      out << "<br><code>" << common::escape_xml(f) << "</code>";
    out << "</td><td><code>" << common::escape_xml(run.replay) << "</code></td></tr>\n";
  }
  out << "</table>\n</body></html>\n";
  return out.str();
}

bool write_sweep_reports(const sweep_result& r, const sweep_options& o) {
  bool ok = true;
  const auto attempt = [&ok](const char* flag, const std::string& path, const std::string& text) {
    try {
      if (path == "-") {
        common::write_standard_output(text);
      } else {
        common::atomic_output_file f(path, flag);
        f.stream() << text;
        f.commit();
        std::cerr << "clpool sweep: " << flag << ": wrote " << common::escape_text(path) << "\n";
      }
    } catch (const std::exception& e) {
      std::cerr << common::error_line("clpool sweep", e.what()) << "\n";
      ok = false;
    }
  };
  if (o.json) attempt("--json", *o.json, sweep_json(r));
  if (o.html) attempt("--html", *o.html, sweep_html(r));
  if (!o.json || *o.json != "-") attempt("standard output", "-", sweep_text(r));
  return ok;
}

}  // namespace clpool::record
