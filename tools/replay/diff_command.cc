#include "tools/replay/diff_command.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>
#include <vector>

#include "common/byte_size.h"
#include "common/cli.h"
#include "common/output_file.h"
#include "common/text_escape.h"
#include "device_model/profile.h"
#include "replay/config.h"
#include "tools/replay/outputs.h"
#include "tools/replay/site_report.h"

namespace clpool::replay_cli {

using replay::config_change;
using replay::diff_json;
using replay::diff_result;
using replay::diff_traces;
using replay::format_bytes;
using replay::format_bytes_exact;
using replay::growth;
using replay::growth_percent;
using replay::parse_growth;
using replay::site_change;

namespace {

using common::usage_error;

std::string both(std::uint64_t bytes) { return common::format_bytes_both(bytes); }

std::string signed_bytes(std::int64_t change) {
  if (change == 0) return "0 bytes";
  const std::uint64_t magnitude =
      change < 0 ? static_cast<std::uint64_t>(-change) : static_cast<std::uint64_t>(change);
  return std::string(change < 0 ? "-" : "+") + format_bytes(magnitude);
}

std::string min_text(const std::optional<std::uint64_t>& v) {
  return v ? format_bytes_exact(*v) : std::string("none");
}

}  // namespace

std::string diff_text(const diff_result& d, std::size_t top) {
  std::ostringstream out;
  out << "old  " << common::escape_text(d.old_path) << "\nnew  " << common::escape_text(d.new_path)
      << "\n";
  out << "device: " << d.device << "; peak: device memory on an unbounded device; minimum "
      << "capacity: the smallest device with no out-of-memory";
  if (d.granule != 0) out << ", in steps of " << format_bytes_exact(d.granule);
  out << "\n";
  std::vector<std::vector<std::string>> rows = {{"configuration", "peak old", "peak new", "change",
                                                 "min capacity old", "min capacity new", "change"}};
  for (const config_change& c : d.configs) {
    const std::string min_change = c.old_min && c.new_min
                                       ? growth_percent(growth(*c.old_min, *c.new_min))
                                       : (c.old_min ? "none fits" : "-");
    rows.push_back({c.config, format_bytes(c.old_peak), format_bytes(c.new_peak),
                    growth_percent(growth(c.old_peak, c.new_peak)), min_text(c.old_min),
                    min_text(c.new_min), min_change});
  }
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  for (std::size_t k = 0; k < rows.size(); ++k) {
    std::string line;
    for (std::size_t i = 0; i < rows[k].size(); ++i) {
      const std::string& cell = rows[k][i];
      const std::string pad(width[i] - cell.size(), ' ');
      line += (i == 0 ? cell + pad : pad + cell);
      if (i + 1 < rows[k].size()) line += "  ";
    }
    out << line << "\n";
    if (k == 0) out << std::string(line.size(), '-') << "\n";
  }
  for (const config_change& c : d.configs) {
    for (const auto& [which, at] : {std::pair{"old", c.old_refused}, {"new", c.new_refused}}) {
      if (at) {
        out << c.config << ": the " << which << " trace's event " << *at
            << " is above the device's maximum allocation: its figures stop there\n";
      }
    }
  }
  std::vector<const site_change*> grew, shrank;
  for (const site_change& s : d.sites) {
    if (s.change() > 0) grew.push_back(&s);
  }
  for (auto it = d.sites.rbegin(); it != d.sites.rend(); ++it) {
    if (it->change() < 0) shrank.push_back(&*it);
  }
  const auto list = [&](const char* title, const std::vector<const site_change*>& v) {
    if (v.empty()) return;
    out << title << "\n";
    for (std::size_t i = 0; i < v.size() && i < top; ++i) {
      out << "  " << (i + 1) << ". " << v[i]->name << "\n     " << signed_bytes(v[i]->change())
          << ": " << both(v[i]->old_bytes) << " -> " << both(v[i]->new_bytes) << "\n";
      callers_text(out, v[i]->callers, " (live at the site's peak, requested bytes)");
    }
    if (v.size() > top) out << "  ... " << (v.size() - top) << " more\n";
  };
  list("sites whose memory grew most (each site's peak of live device memory, requested bytes):",
       grew);
  list("sites whose memory shrank most:", shrank);
  if (grew.empty() && shrank.empty()) out << "no site's peak changed\n";
  if (d.max_growth) {
    out << "--max-growth " << growth_percent(*d.max_growth).substr(1) << ": ";
    if (d.passed()) {
      out << "passed\n";
    } else {
      out << "exceeded:";
      for (std::size_t i = 0; i < d.over.size(); ++i) out << (i ? "; " : " ") << d.over[i];
      out << "\n";
    }
  }
  return out.str();
}

int run_diff(const command_line& cl, const std::function<run_output(const std::string&)>& replay) {
  if (cl.diff_paths.size() != 2) throw usage_error("--diff takes two traces: OLD NEW");
  if (!cl.trace_path.empty() || !cl.rmm_path.empty()) {
    throw usage_error("--diff compares the two traces it names; give no other trace or --rmm-csv");
  }
  if (!cl.capacity_text.empty()) {
    throw usage_error(
        "--diff finds each configuration's peak and minimum capacity itself; "
        "drop --capacity");
  }
  if (!cl.write_trace_path.empty()) throw usage_error("--diff writes no trace; drop --write-trace");
  if (!cl.trials_text.empty()) throw usage_error("--diff runs no trials; drop --trials");
  for (const std::string& p : cl.diff_paths) {
    if (p == "-")
      throw usage_error("--diff: each trace is replayed several times; give files, not '-'");
  }
  const std::optional<double> max_growth =
      cl.max_growth_text.empty() ? std::nullopt
                                 : std::optional<double>(parse_growth(cl.max_growth_text));
  std::vector<output_request> outputs = parse_output_requests(cl.formats);
  std::vector<named_output> outs;
  for (const output_request& o : outputs) {
    if (o.writer->name() != "text" && o.writer->name() != "json") {
      throw usage_error("--diff writes text or json; " + o.label +
                        " shows one replay (run it without --diff)");
    }
    outs.push_back({o.label, o.path});
  }
  std::vector<common::named_input> ins{{"--diff OLD", cl.diff_paths[0]},
                                       {"--diff NEW", cl.diff_paths[1]}};
  if (device_model::names_profile_file(cl.profile_text))
    ins.push_back({"--profile", cl.profile_text});
  if (!cl.mockcl_so.empty()) ins.push_back({"--mockcl-so", cl.mockcl_so});
  refuse_clobbering(ins, outs);
  const run_output old_run = replay(cl.diff_paths[0]);
  const run_output new_run = replay(cl.diff_paths[1]);
  const diff_result d = diff_traces(cl.diff_paths[0], old_run.results, cl.diff_paths[1],
                                    new_run.results, cl.library_frames, max_growth);
  const auto render = [&](const output_request& o) {
    return o.writer->name() == "json" ? diff_json(d).dump(2) + "\n" : diff_text(d);
  };
  // As clpool_replay's other outputs (main.cc write_outputs): files first, then standard output;
  // one that cannot be written is an error naming it and costs no other, and the run exits 2.
  bool all_written = true;
  const auto attempt = [&](const output_request& o, const std::function<void()>& write) {
    all_written &= attempt_output(o.label, write);
  };
  for (const output_request& o : outputs) {
    if (o.path.empty()) continue;
    attempt(o, [&] {
      write_text_file(o.label, o.path, render(o));
      std::cerr << "clpool_replay: " << o.label << ": wrote " << o.path << "\n";
    });
  }
  for (const output_request& o : outputs) {
    if (o.path.empty()) attempt(o, [&] { common::write_standard_output(render(o)); });
  }
  if (!all_written) return common::exit_usage;
  return d.passed() ? common::exit_ok : common::exit_finding;
}

}  // namespace clpool::replay_cli
