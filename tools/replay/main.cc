// clpool_replay: reproduce a program's out-of-memory from its allocation trace, without a GPU.
// Everything a user can type is documented in --help; README.md shows the output.
//
// run() is four steps: parse (command_line.h), validate everything into a plan before the first
// replay (a typo should not cost a long run), replay every configuration on the chosen device
// backend (device_backend.h), and write the results through the output writers (output_writer.h).
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/input_file.h"
#include "common/output_file.h"
#include "common/text_escape.h"
#include "device_model/profile.h"
#include "replay/config.h"
#include "replay/min_capacity.h"
#include "replay/replay.h"
#include "tools/replay/command_line.h"
#include "tools/replay/device_backend.h"
#include "tools/replay/diff_command.h"
#include "tools/replay/output_writer.h"
#include "tools/replay/outputs.h"
#include "tools/replay/progress.h"
#include "tools/replay/report_format.h"
#include "tools/replay/trace_copy.h"
#include "trace/library_frames.h"
#include "trace/rmm_import.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace {

using namespace clpool::replay;
using namespace clpool::replay_cli;
namespace trace = clpool::trace;

// The shared conventions (common/cli.h): 1 is replay's finding, an out-of-memory reproduced.
constexpr int exit_clean = clpool::common::exit_ok;
constexpr int exit_oom = clpool::common::exit_finding;
constexpr int exit_bad_input = clpool::common::exit_usage;
using clpool::common::format_bytes_exact;
using clpool::common::size_option;
using clpool::common::usage_error;

// Where events come from: a clpool trace or an RMM CSV log, re-opened for every replay (so memory
// stays bounded by the live set however many replays --min-capacity needs).
struct input {
  std::string trace_path;
  std::string rmm_path;

  std::string name() const { return rmm_path.empty() ? trace_path : rmm_path; }

  template <class F>
  auto with_source(F&& f) const {
    if (!rmm_path.empty()) {
      trace::rmm_csv_reader reader(rmm_path);
      return f(reader);
    }
    // The engine checks liveness itself; one hash lookup per event instead of two.
    trace::trace_reader reader(trace_path, {.check_liveness = false});
    return f(reader);
  }
};

// Everything validated: what to replay, where, how often, and what to write.
struct plan {
  input in;
  std::optional<std::uint64_t> capacity;
  bool min_capacity = false;
  std::uint64_t granule = 0;
  std::vector<std::uint64_t> trials;  // --trials: the capacities, increasing
  std::vector<replay_config> configs;
  std::unique_ptr<device_backend> backend;
  std::vector<output_request> outputs;
  std::string write_trace_path;
  trace::trace_encoding write_encoding = trace::trace_encoding::text;
  progress_style progress = progress_style::off;
  bool sites = false;  // the trace has allocation sites (FORMAT.md version 2)
  unsigned trace_version = trace::format_version;  // the input's (1 for an RMM CSV)
  std::optional<free_moment> frees_at;  // --frees-at; nothing: the device's profile decides
  bool full_stacks = false;
  std::vector<std::string> library_patterns;  // --library-frames
  std::size_t site_frames = 1;                // --site-frames
  bool peak = false;                          // --peak

  // Full replays: one per configuration at --capacity, plus a search per configuration.
  std::size_t passes() const {
    return configs.size() * ((capacity ? 1 : 0) + (min_capacity ? 1 : 0) + trials.size());
  }
  bool needs_timeline() const {
    for (const output_request& o : outputs) {
      if (o.writer->needs_timeline()) return true;
    }
    return false;
  }
};

std::vector<replay_config> configurations(const command_line& cl) {
  std::vector<replay_config> configs;
  for (const std::string& c : cl.compare) {
    configs.push_back(parse_config(c));
    // The same configuration twice (pool and pool:lb=4 are one) would only repeat a column.
    for (std::size_t i = 0; i + 1 < configs.size(); ++i) {
      if (to_string(configs[i]) == to_string(configs.back())) {
        throw usage_error("--compare: '" + clpool::common::escape_text(c) + "' is the same as '" +
                          clpool::common::escape_text(cl.compare[i]) + "' (" +
                          to_string(configs.back()) + ")");
      }
    }
  }
  if (!configs.empty()) return configs;
  if (cl.no_pool &&
      (cl.leading_bits_given || cl.limit_given || cl.trim_max_held_given || cl.trim_ratio_given)) {
    throw usage_error(
        "--no-pool cannot be combined with pool options (--leading-bits, --limit, --trim-*)");
  }
  replay_config c;
  c.use_pool = !cl.no_pool;
  c.leading_bits = cl.leading_bits;
  if (!cl.limit_text.empty()) c.limit = size_option(cl.limit_text, "--limit", {.positive = true});
  if (cl.trim_max_held_given)
    c.trim.max_held_bytes = size_option(cl.trim_max_held_text, "--trim-max-held");
  if (cl.trim_ratio_given) {
    const std::optional<double> ratio = clpool::replay::parse_ratio(cl.trim_ratio_text);
    if (!ratio) {
      throw usage_error("--trim-ratio: '" + clpool::common::escape_text(cl.trim_ratio_text) +
                        "' must be a finite decimal number >= 0");
    }
    c.trim.max_held_to_active_ratio = *ratio;
  }
  return {c};
}

// Step 2: every check that needs no replay, in the order a user would fix them.
// The input, or a usage error: none given, or a trace path that cannot be opened more than once.
input input_of(const command_line& cl) {
  if (cl.trace_path.empty() && cl.rmm_path.empty()) {
    throw usage_error("no input: give a trace file, or --rmm-csv FILE (see --help)");
  }
  // The trace is opened more than once (its version, then each replay): a FIFO would be read
  // once and then waited on forever; refused before anything opens it.
  if (!cl.trace_path.empty() && cl.trace_path != "-") {
    if (const std::string why = clpool::common::reread_input_refusal(cl.trace_path); !why.empty()) {
      throw usage_error(clpool::common::escape_text(cl.trace_path) + ": " + why);
    }
  }
  return {cl.trace_path, cl.rmm_path};
}

// The device's options: its profile (loaded here, once), semantics, host capacity and max alloc.
backend_options backend_options_of(const command_line& cl) {
  backend_options bo;
  bo.profile = clpool::device_model::load_profile(cl.profile_text);  // the one load
  bo.profile_ref = cl.profile_text;
  bo.profile_given = cl.profile_given;
  bo.semantics =
      !cl.semantics_text.empty() ? *parse_semantics(cl.semantics_text) : semantics_of(bo.profile);
  bo.host_capacity = cl.host_capacity_text.empty()
                         ? clpool::unlimited
                         : size_option(cl.host_capacity_text, "--host-capacity");
  if (!cl.max_alloc_text.empty()) {
    bo.max_alloc =
        size_option(cl.max_alloc_text, "--max-alloc", {.device = true, .positive = true});
  }
  bo.semantics_given = !cl.semantics_text.empty();
  bo.mockcl_so = cl.mockcl_so;
  return bo;
}

// What reads the input more than once, refused up front when it is standard input (or, for the
// page, an RMM CSV), rather than failing or writing nothing after the replay.
void refuse_second_reads(const plan& p, bool peak) {
  if ((p.in.trace_path == "-" || p.in.rmm_path == "-") &&
      (p.passes() > 1 || p.min_capacity || !p.write_trace_path.empty() || peak)) {
    throw usage_error(
        "standard input can be read only once; --min-capacity, --trials, --compare, --peak and "
        "--write-trace need a file");
  }
  for (const output_request& o : p.outputs) {
    if (o.writer->reads_trace_again() && (p.in.trace_path == "-" || !p.in.rmm_path.empty())) {
      throw usage_error(o.label + ": the page reads the trace again, so it needs a clpool trace " +
                        (p.in.rmm_path.empty() ? std::string("file, not standard input")
                                               : std::string("file (convert the RMM CSV with "
                                                             "--write-trace first)")));
    }
  }
}

plan validate(const command_line& cl) {
  plan p;
  p.in = input_of(cl);
  if (!cl.capacity_text.empty()) {
    p.capacity = size_option(cl.capacity_text, "--capacity", {.device = true, .positive = true});
  }
  p.min_capacity = cl.min_capacity;
  if (!cl.trials_text.empty()) p.trials = parse_trials(cl.trials_text);
  p.granule = size_option(cl.granule_text, "--granule", {.positive = true});
  check_granule(p.granule, "--granule");
  // --granule steps only the search for a minimum capacity; anywhere else it would be ignored.
  if (cl.granule_given && !p.min_capacity) {
    throw usage_error(
        "--granule is the step of --min-capacity's search; give --min-capacity "
        "(or --diff), or drop --granule");
  }
  if (cl.write_format_given && cl.write_trace_path.empty()) {
    throw usage_error("--write-format needs --write-trace");
  }
  p.write_trace_path = cl.write_trace_path;
  p.write_encoding =
      cl.write_format == "binary" ? trace::trace_encoding::binary : trace::trace_encoding::text;
  p.outputs = parse_output_requests(cl.formats);
  std::vector<named_output> outs{{"--write-trace", p.write_trace_path}};
  for (const output_request& o : p.outputs) outs.push_back({o.label, o.path});
  std::vector<clpool::common::named_input> ins{{"trace", p.in.trace_path},
                                               {"--rmm-csv", p.in.rmm_path}};
  if (clpool::device_model::names_profile_file(cl.profile_text))
    ins.push_back({"--profile", cl.profile_text});
  if (!cl.mockcl_so.empty()) ins.push_back({"--mockcl-so", cl.mockcl_so});
  refuse_clobbering(ins, outs);
  if (!p.capacity && !p.min_capacity && p.trials.empty() && p.write_trace_path.empty()) {
    throw usage_error(
        "--capacity is required (or use --min-capacity to find one, or --trials for several)");
  }
  const backend_options bo = backend_options_of(cl);
  p.configs = configurations(cl);
  refuse_second_reads(p, cl.peak);
  // Attribute memory to allocation sites when the trace has them (its header says version 2).
  if (p.in.rmm_path.empty()) {
    p.trace_version =
        p.in.trace_path == "-"
            ? trace::latest_format_version
            : trace::trace_reader(p.in.trace_path, {.check_liveness = false}).version();
    p.sites = p.trace_version >= trace::sites_format_version;
  }
  if (!cl.frees_at.empty()) p.frees_at = parse_free_moment(cl.frees_at);
  p.full_stacks = cl.full_stacks;
  p.site_frames = cl.site_frames;
  p.peak = cl.peak;
  for (const std::string& pattern : cl.library_frames) {
    const std::string error = trace::library_pattern_error(pattern);
    if (!error.empty()) {
      throw usage_error("--library-frames '" + pattern + "': " + error);
    }
  }
  p.library_patterns = cl.library_frames;
  p.progress =
      choose_progress_style(cl.force_progress, cl.no_progress, ::isatty(STDERR_FILENO) == 1);
  // Last: opening a device is the slowest check, and a real one prints what it found.
  p.backend = open_backend(cl.device_text, bo);
  if (p.capacity) p.backend->check_capacity(*p.capacity);
  // After the device's own checks, so that a wrong --mockcl-so or device is named first. A real
  // device has no profile: its own headroom is what its checks find.
  if (p.capacity && !p.backend->is_real_device()) {
    if (std::string why =
            clpool::device_model::capacity_refusal(bo.profile, *p.capacity, "--capacity");
        !why.empty()) {
      throw usage_error(why);
    }
  }
  return p;
}

void write_trace(const plan& p) {
  p.in.with_source([&](auto& source) {
    const bool rmm = !p.in.rmm_path.empty();
    copy_trace(source,
               {.path = p.write_trace_path,
                .encoding = p.write_encoding,
                .version = rmm ? trace::format_version : p.trace_version,
                .sites = !rmm && p.sites,
                .source = rmm ? "rmm csv " + p.in.rmm_path : "clpool trace " + p.in.trace_path});
    return 0;
  });
}

// The progress of one replay, `label`, on `printer` (with the whole run's when there are several);
// nothing when the printer is off. Shows the replay's start at once.
progress_fn replay_progress(progress_printer& printer, const run_progress& overall,
                            bool several_replays, const std::string& label) {
  if (!printer.enabled()) return {};
  const auto show = [&printer, &overall, several_replays, label](std::uint64_t done,
                                                                 std::uint64_t total, bool first) {
    const double fraction =
        total == 0 ? 0.0 : static_cast<double>(done) / static_cast<double>(total);
    printer.show(progress_bar(done, total) + " " + label +
                     (several_replays ? "; " + overall.summary(fraction) : std::string()),
                 first);
  };
  show(0, 1, true);
  return [show](std::uint64_t done, std::uint64_t total) { show(done, total, false); };
}

// --trials above what a real device has free: refused before any replay.
void check_trials_fit(const plan& p) {
  const std::uint64_t largest = p.backend->largest_capacity();
  if (!p.trials.empty() && largest != 0 && p.trials.back() > largest) {
    throw usage_error("--trials: " + format_bytes_exact(p.trials.back()) +
                      " is more than the device can offer (" + format_bytes_exact(largest) +
                      " free)");
  }
}

// Step 3: every configuration at --capacity and/or searched, with progress on stderr.
run_output replay_all(plan& p) {
  progress_printer printer(p.progress, stderr);
  run_progress overall(p.configs.size());
  const bool several_replays = p.passes() > 1 || p.min_capacity;
  const auto replay_once = [&](const replay_config& c, std::uint64_t cap, bool timeline,
                               const std::string& label,
                               std::optional<std::uint64_t> stop_after = {}) {
    replay_options options;
    options.stop_after_event = stop_after;
    options.timeline = timeline;
    options.sites = p.sites;
    options.library_patterns = p.library_patterns;
    options.frees_at = p.frees_at;
    options.site_frames = p.site_frames;
    const progress_fn progress = replay_progress(printer, overall, several_replays, label);
    replay_report r = p.in.with_source([&](auto& source) {
      return replay_stream(source, c, p.backend->open(cap), options, progress);
    });
    p.backend->after_replay();
    overall.end_replay();
    printer.clear();
    return r;
  };

  run_output out;
  out.input = p.in.name();
  out.trace_path = p.in.rmm_path.empty() ? p.in.trace_path : std::string();
  out.full_stacks = p.full_stacks;
  p.backend->check_device();
  check_trials_fit(p);
  const bool picture = p.needs_timeline();
  bool any_oom = false;
  for (std::size_t i = 0; i < p.configs.size(); ++i) {
    config_result res;
    res.config = p.configs[i];
    const bool timeline = i == 0 && picture;
    const std::string name = to_string(p.configs[i]);
    if (p.capacity) {
      // Alone, it is this configuration's only replay; before a search, the search's are unknown.
      overall.start_replay(i, p.min_capacity ? 0 : 1);
      res.replay = replay_once(p.configs[i], *p.capacity, timeline, name);
      any_oom |= !res.replay->ok();
      if (p.peak) {  // the same replay again, stopped where the peak was reached
        res.replay->peak_asked = true;
        if (p.sites && res.replay->peak_active_bytes != 0) {
          const replay_report at_peak =
              replay_once(p.configs[i], *p.capacity, false, name + " up to its peak",
                          res.replay->peak_active_event);
          res.replay->peak_live_sites = at_peak.end_live_sites;
          res.replay->peak_unused_bytes = at_peak.end_unused_bytes;
          res.replay->peak_unused_blocks = at_peak.end_unused_blocks;
        }
      }
    }
    if (p.min_capacity) {
      std::uint64_t n = 0;
      res.min_capacity = find_min_capacity(
          [&](std::uint64_t cap) {
            return replay_once(p.configs[i], cap, timeline && !p.capacity,
                               name + " min-capacity replay " + std::to_string(++n));
          },
          p.granule, p.backend->largest_capacity(),
          [&](std::uint64_t left) { overall.start_replay(i, left); });
      any_oom |= !res.min_capacity->found;
    }
    if (!p.trials.empty()) overall.start_replay(i, p.trials.size());
    for (const std::uint64_t cap : p.trials) {
      replay_report r =
          replay_once(p.configs[i], cap, false, name + " trial at " + format_bytes_exact(cap));
      res.trials.push_back({cap, r.oom, p.backend->last_replay_start()});
      any_oom |= !r.ok();
    }
    out.results.push_back(std::move(res));
  }
  out.exit_code = any_oom ? exit_oom : exit_clean;
  return out;
}

// Step 4: files first (each says on stderr what it holds), then standard output. An output that
// cannot be rendered or written is reported and costs no other; returns false if any failed.
bool write_outputs(const plan& p, const run_output& out) {
  bool all_written = true;
  const auto attempt = [&](const output_request& o, const std::function<void()>& write) {
    all_written &= attempt_output(o.label, write);
  };
  for (const output_request& o : p.outputs) {
    if (o.path.empty()) continue;
    attempt(o, [&] {
      std::string note;
      if (const std::optional<std::string> text = o.writer->render(out, note)) {
        write_text_file(o.label, o.path, *text);
        std::cerr << "clpool_replay: " << o.label << ": wrote "
                  << clpool::common::escape_text(o.path) << (note.empty() ? "" : ": " + note)
                  << "\n";
      } else {
        std::cerr << "clpool_replay: " << o.label << ": " << note << "\n";
      }
    });
  }
  if (const std::string warning = pooled_trace_warning(out.results); !warning.empty()) {
    std::cerr << "clpool_replay: " << warning;
  }
  for (const output_request& o : p.outputs) {
    if (!o.path.empty()) continue;
    attempt(o, [&] {
      std::string note;
      if (const std::optional<std::string> text = o.writer->render(out, note)) {
        clpool::common::write_standard_output(*text);
      }
      if (!note.empty()) std::cerr << "clpool_replay: " << o.label << ": " << note << "\n";
    });
  }
  return all_written;
}

int run(int argc, char** argv) {
  command_line cl;
  if (const std::optional<int> rc = parse_command_line(argc, argv, cl)) return *rc;
  if (!cl.diff_paths
           .empty()) {  // --diff OLD NEW: each trace's unbounded replay and search (diff_command.h)
    return run_diff(cl, [&cl](const std::string& path) {
      command_line one = cl;
      one.diff_paths.clear();
      one.trace_path = path;
      one.min_capacity = true;
      one.formats.clear();
      plan p = validate(one);
      const std::uint64_t largest = p.backend->largest_capacity();
      p.capacity = largest != 0 ? largest : clpool::common::max_device_bytes;
      return replay_all(p);
    });
  }
  plan p = validate(cl);
  if (!p.write_trace_path.empty()) {
    write_trace(p);
    if (!p.capacity && !p.min_capacity && p.trials.empty()) return exit_clean;
  }
  const run_output out = replay_all(p);
  // An output lost is the run's failure, whatever the replay found.
  return write_outputs(p, out) ? out.exit_code : exit_bad_input;
}

}  // namespace

int main(int argc, char** argv) {
  clpool::common::guard_standard_streams();
  try {
    const int rc = run(argc, argv);
    clpool::common::check_standard_output();  // --help, --version and the like
    return rc;
  } catch (const clpool::trace::trace_error& e) {
    std::cerr << clpool::common::error_line("clpool_replay", e.what()) << "\n";
    if (e.line() > 1) {
      std::cerr << "clpool_replay: " << counted(e.events_read(), "valid event")
                << " came before it\n";
    }
  } catch (const std::exception& e) {
    std::cerr << clpool::common::error_line("clpool_replay", e.what()) << "\n";
  }
  return exit_bad_input;
}
