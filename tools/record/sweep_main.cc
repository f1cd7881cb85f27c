// clpool sweep's order of work (sweep.h): every setting checked, the fault-free run, the points,
// the runs side by side, the moved points sought again, the crashes' stacks, the reports.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <system_error>

#include "common/cli.h"
#include "common/output_file.h"
#include "common/sweep_rules.h"
#include "device_model/profile.h"
#include "layer_api/layer_library.h"
#include "layer_api/layer_settings.h"
#include "tools/record/launch.h"
#include "tools/record/sweep.h"
#include "tools/record/sweep_report.h"
#include "tools/record/sweep_runs.h"

extern char** environ;

namespace clpool::record {
namespace {

constexpr int exit_clean = 0, exit_finding = 1, exit_usage = 2;
constexpr const char* marker = ".clpool-sweep";

std::atomic<bool> interrupted{false};
std::atomic<int> interrupting_signal{SIGINT};
void on_interrupt(int sig) {
  interrupting_signal = sig;
  interrupted = true;
}
// Interrupted: 128 + the signal, as a shell reports a program the signal ended (130 for Ctrl-C,
// 143 for SIGTERM).
int exit_interrupted() { return 128 + interrupting_signal.load(); }

int usage_error(const std::string& message) {
  return common::report_usage_error("clpool sweep", message);
}

// The output directory: made, or an earlier sweep's replaced with --force; anything else there
// is refused, and only the sweep's own folders are ever removed.
std::string prepare_out(const sweep_options& o, bool& made) {
  struct stat st;
  made = false;
  if (::stat(o.out.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return "--out: '" + o.out + "' exists and is not a directory";
    if (::access((o.out + "/" + marker).c_str(), F_OK) != 0) {
      return "--out: '" + o.out + "' exists and is not a sweep's folder: not writing into it";
    }
    if (!o.force)
      return "--out: '" + o.out + "' holds an earlier sweep: pass --force to replace it";
    for (const char* sub : {"/fault-free", "/runs"}) {
      std::error_code ec;  // remove_all removes a symbolic link, never what it points to
      std::filesystem::remove_all(o.out + sub, ec);
      if (ec)
        return "--out: cannot remove the earlier sweep's " + o.out + sub + ": " + ec.message();
    }
  } else if (::mkdir(o.out.c_str(), 0777) != 0) {
    return "--out: cannot make '" + o.out + "': " + std::strerror(errno);
  } else {
    made = true;
  }
  std::ofstream(o.out + "/" + marker) << "clpool sweep\n";
  ::mkdir((o.out + "/runs").c_str(), 0777);
  return "";
}

// A sweep refused after prepare_out (its --only names no point of the program): what it wrote
// goes, and --out too when this sweep made it.
void discard_out(const sweep_options& o, bool made) {
  std::error_code ec;
  for (const char* sub : {"/fault-free", "/runs", "/python"})
    std::filesystem::remove_all(o.out + sub, ec);
  if (!made) return;
  std::filesystem::remove(o.out + "/" + marker, ec);
  ::rmdir(o.out.c_str());  // only if nothing else is there
}

// The environment every run shares: the layer with the sweep's profile on a budget no program
// reaches (so that first uses are counted and failed where the profile's device fails), stacks,
// and Python's faulthandler for a crash's Python stack.
std::string base_environment(const sweep_options& o, const std::string& layer,
                             std::vector<std::string>& env) {
  using namespace clpool::layer;
  const std::vector<std::string> settings = {
      std::string(env_trace) + "=" + absolute(o.out) + "/fault-free/trace",
      std::string(env_stacks) + "=all", std::string(env_profile) + "=" + program_profile(o.profile),
      std::string(env_budget) + "=" + std::to_string(std::uint64_t{1} << 62)};
  const std::string problem = layer_environment(
      layer, settings,
      {env_trace, env_budget, env_profile, env_stacks, env_errors, env_report, env_fail_nth,
       env_fail_first_use_nth, env_fail_until_free, env_fail_prob, env_seed},
      "clpool sweep", env);
  if (!problem.empty()) return problem;
  // The trace is each run's own (run_plan::spec).
  env.erase(
      std::remove_if(env.begin(), env.end(),
                     [](const std::string& e) { return e.rfind("CLPOOL_LAYER_TRACE=", 0) == 0; }),
      env.end());
  env.push_back("PYTHONFAULTHANDLER=1");
  return "";
}

// --check: PROGRAM BASELINE_DIR RUN_DIR exits 0 when the outputs agree.
std::function<bool(const std::string&)> check_function(const std::string& program,
                                                       const sweep_options& o, double timeout) {
  const std::string baseline = absolute(o.out) + "/fault-free";
  return [program, baseline, timeout](const std::string& run_dir) {
    child_spec s;
    s.program = program;
    s.args = {program, baseline, run_dir};
    for (char** e = environ; *e != nullptr; ++e) s.env.emplace_back(*e);
    s.stdout_path = run_dir + "/check.txt";
    s.stderr_path = run_dir + "/check.txt";
    s.timeout_seconds = timeout;
    const child_result r = run_child(s, interrupted);
    return r.started && !r.signaled && r.exit_code == 0;
  };
}

// Where --json and --html go, checked now rather than after every run (a missing directory,
// --out itself): a temporary file made there and removed again. `in_out`: only the reports
// directly inside --out, else only the others.
std::string probe_reports(const sweep_options& o, bool in_out) {
  const auto trimmed = [](std::string p) {
    p = absolute(p);
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p;
  };
  for (const auto& [flag, path] : {std::pair{"--json", o.json}, std::pair{"--html", o.html}}) {
    if (!path || *path == "-") continue;
    if (trimmed(*path) == trimmed(o.out)) {
      return std::string(flag) + ": '" + *path + "' is --out, the sweep's folder";
    }
    struct stat st;
    if (dir_of(trimmed(*path)) == trimmed(o.out) ? !in_out : in_out) continue;
    if (::stat(path->c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
      continue;  // a device or FIFO is written in place at the end (a FIFO's open would wait)
    }
    try {
      common::atomic_output_file probe(*path, flag);
    } catch (const common::output_error& e) {
      return e.what();
    }
  }
  return "";
}

struct setup {
  sweep_options o;
  bool made_out = false;  // --out did not exist before this sweep
  std::string layer, program, check;
  std::vector<std::string> env;
};

// Every check that needs no run, in the order a user would fix them. Returns an exit status to
// stop with, or nothing.
std::optional<int> validate(setup& s, const std::vector<std::string>& args) {
  const sweep_parse_outcome parsed = parse_sweep_options(args);
  if (!parsed.options) return usage_error(parsed.error);
  s.o = *parsed.options;
  if (s.o.help) {
    std::fputs(sweep_usage, stdout);
    return common::standard_output_written("clpool") ? exit_clean : exit_usage;
  }
  std::string looked_in;
  s.layer = s.o.layer ? real_path(*s.o.layer) : find_layer(looked_in);
  if (s.layer.empty()) {
    return usage_error(s.o.layer ? "--layer: '" + *s.o.layer + "' does not exist"
                                 : "cannot find libclpool_layer.so (looked at " + looked_in +
                                       "); give it with --layer PATH");
  }
  if (std::string r = layer::layer_library_refusal(s.o.layer ? "--layer" : "the layer", s.layer);
      !r.empty()) {
    return usage_error(r);
  }
  std::string problem;
  s.program = resolve_program(s.o.program[0], problem);
  if (s.program.empty()) return usage_error("cannot run '" + s.o.program[0] + "': " + problem);
  if (s.o.check) {
    s.check = resolve_program(*s.o.check, problem);
    if (s.check.empty()) return usage_error("--check: cannot run '" + *s.o.check + "': " + problem);
  }
  try {
    common::refuse_overlaps(
        {.inputs = {{"PROGRAM", s.program}, {"--check", s.check}, {"--layer", s.layer}},
         .outputs = {{"--json", s.o.json.value_or("")}, {"--html", s.o.html.value_or("")}}});
  } catch (const common::output_error& e) {
    return usage_error(e.what());
  }
  if (std::string p = base_environment(s.o, s.layer, s.env); !p.empty()) return usage_error(p);
  // Where the reports go is checked before --out is made or an earlier sweep there replaced, so
  // a refusal changes nothing; a report inside --out, once --out is there.
  if (std::string p = probe_reports(s.o, false); !p.empty()) return usage_error(p);
  if (std::string p = prepare_out(s.o, s.made_out); !p.empty()) return usage_error(p);
  if (std::string p = probe_reports(s.o, true); !p.empty()) return usage_error(p);
  return std::nullopt;
}

std::string seconds_text(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", s);
  return b;
}

// The fault-free run: its time, its points; an exit status to stop with when it fails.
std::optional<int> fault_free_run(const setup& s, const run_plan& plan, sweep_result& result) {
  const std::string dir = absolute(s.o.out) + "/fault-free";
  // Without --timeout it runs as long as it takes (Ctrl-C stops it): 0, no limit.
  const double limit = common::fault_free_limit(s.o.timeout).value_or(0);
  const child_result r = run_child(plan.spec(point_id{}, dir, limit), interrupted);
  result.fault_free_seconds = r.seconds;
  std::string why;
  if (r.interrupted) {
    std::cerr << "clpool sweep: interrupted during the fault-free run; nothing swept\n";
    return exit_interrupted();
  }
  if (!r.started)
    why = std::string("cannot start: ") + std::strerror(r.exec_error);
  else if (r.timed_out)
    why = "it did not end in " + seconds_text(limit) + " s (" +
          std::to_string(common::fault_free_limit_factor) + " times --timeout, at least 60 s)";
  else if (r.signaled)
    why = "it was killed by signal " + std::to_string(r.signal);
  else if (r.exit_code != 0)
    why = "it exits " + std::to_string(r.exit_code);
  if (!why.empty()) {
    std::cerr << common::error_line("clpool sweep",
                                    "the program fails without any fault injected: " + why +
                                        " (its output: " + dir +
                                        "/stdout.txt, stderr.txt); nothing to sweep")
              << "\n";
    return exit_usage;
  }
  const device_model::device_profile profile = device_model::load_profile(s.o.profile);
  result.profile = profile.name;
  result.points = read_points(dir + "/report", dir + "/trace",
                              profile.oom_at != device_model::refusal_point::creation,
                              result.fault_free_live_at_exit, why);
  if (!result.fault_free_live_at_exit) {
    result.fault_free_live_at_exit = held_at_trace_end(dir + "/trace");
    result.fault_free_live_from_trace = result.fault_free_live_at_exit.has_value();
  }
  if (!why.empty()) {
    std::cerr << common::error_line("clpool sweep", "the fault-free run cannot be read: " + why)
              << "\n";
    return exit_usage;
  }
  return std::nullopt;
}

std::string options_text(const sweep_options& o) {
  std::string t = "--profile " + shell_quoted(o.profile);
  if (o.timeout) t += " --timeout " + seconds_text(*o.timeout);
  if (o.check) t += " --check " + shell_quoted(*o.check);
  if (o.until_free) t += " --until-free";
  if (o.layer) t += " --layer " + shell_quoted(*o.layer);
  return t;
}

// Runs `points` side by side, classifying each as it ends.
void run_points(const setup& s, const run_plan& plan, const run_context& ctx,
                std::vector<run_outcome>& runs) {
  std::vector<child_spec> specs;
  for (run_outcome& run : runs)
    specs.push_back(plan.spec(point_id{run.point.id.first_use, run.ran_as}, run.dir, ctx.timeout));
  run_children(
      specs, s.o.jobs,
      [&](std::size_t i, const child_result& r) {
        runs[i].result = r;
        classify(runs[i], ctx);
      },
      interrupted);
}

// A run whose fault missed its point (not reached, or a block of another site: the program met
// its points in another order) is run again where that run met the point, once.
void seek_moved(const setup& s, const run_plan& plan, const run_context& ctx,
                std::vector<run_outcome>& runs) {
  std::vector<run_outcome> again;
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    run_outcome& run = runs[i];
    if (run.what == verdict::interrupted) continue;
    std::optional<std::uint64_t> live;
    std::string problem;
    bool landed = false, seen = false;
    std::string hit;  // what the fault hit instead, when it is known not to be the point
    for (const failure_point& p : read_points(run.dir + "/report", run.dir + "/trace",
                                              run.point.id.first_use, live, problem)) {
      if (p.id.first_use != run.point.id.first_use || p.id.n != run.ran_as) continue;
      seen = true;
      // A run that ended before the layer named its native frames (it does so at exit and at
      // each failure) cannot say at which site it failed, nor can a fault-free run that ended
      // so (_exit): its N is taken as the point's when the block is alike.
      const auto undefined = [](const std::string& site) {
        return site.find(" not defined)") != std::string::npos;
      };
      const bool named = !undefined(p.site) && !undefined(run.point.site);
      landed = named ? p.site == run.point.site && p.ordinal == run.point.ordinal
                     : p.bytes == run.point.bytes && p.what == run.point.what;
      if (!landed) hit = std::to_string(p.bytes) + " B " + p.what;
    }
    if (landed && run.what != verdict::unreached) continue;
    // Stopped at --timeout with nothing to say where it was (a killed run's report may not list
    // its fault): hung, not "not reached". It met its point elsewhere only when its report says so.
    if (run.what == verdict::hung && !seen) continue;
    const std::optional<std::uint64_t> n =
        moved_point(run, run.dir + "/report", run.dir + "/trace");
    if (!n || *n == run.ran_as) {
      if (!landed && run.what == verdict::crashed && !hit.empty()) {
        // The crash is the program's whatever it met: kept, with where the fault went.
        run.detail += "; in this run the fault hit another allocation (" + hit +
                      ": the program's threads or inputs ordered them differently)";
      } else if (!landed) {
        run.what = verdict::unreached;
        run.detail =
            "this run met the point's site fewer times, or in another order (" + run.detail + ")";
      }
      continue;
    }
    run_outcome moved = run;
    moved.ran_as = *n;
    moved.dir = run.dir + "-again";
    again.push_back(moved);
    where.push_back(i);
  }
  if (again.empty() || interrupted) return;
  run_points(s, plan, ctx, again);
  for (std::size_t k = 0; k < again.size(); ++k) runs[where[k]] = again[k];
}

// --only naming a point the fault-free run does not have (a replay command from another build,
// another profile): what it has instead.
std::string no_such_point(const point_id& only, const std::vector<failure_point>& points) {
  std::uint64_t allocs = 0, first_uses = 0;
  for (const failure_point& p : points) (p.id.first_use ? first_uses : allocs) += 1;
  const auto range = [](const char* kind, std::uint64_t n) {
    return n == 0 ? std::string("no ") + kind + " point"
                  : std::string(kind) + ":1" + (n > 1 ? ".." + std::to_string(n) : "");
  };
  return "--only " + to_string(only) + ": the fault-free run has no such point (it has " +
         range("alloc", allocs) + " and " + range("first-use", first_uses) + ")";
}

int finish(const setup& s, sweep_result& result) {
  std::sort(result.runs.begin(), result.runs.end(), [](const run_outcome& a, const run_outcome& b) {
    if (a.what != b.what) return a.what < b.what;
    return a.point.id.first_use != b.point.id.first_use ? !a.point.id.first_use
                                                        : a.point.id.n < b.point.id.n;
  });
  bool written = write_sweep_reports(result, s.o);
  bool finding = false;
  for (const run_outcome& run : result.runs) {
    finding |=
        run.what == verdict::crashed || run.what == verdict::hung || run.what == verdict::leaked;
  }
  if (interrupted) return exit_interrupted();
  if (!written) return exit_usage;
  return finding ? exit_finding : exit_clean;
}

}  // namespace

int run_sweep(const std::vector<std::string>& args) {
  const auto started = std::chrono::steady_clock::now();
  setup s;
  if (const std::optional<int> stop = validate(s, args)) return *stop;
  struct sigaction action = {};
  action.sa_handler = on_interrupt;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  run_plan plan(s.o, s.program, s.env);
  if (s.o.gdb) plan.set_gdb(find_gdb());
  if (std::string p = plan.prepare_python(absolute(s.o.out) + "/python", s.layer); !p.empty())
    return usage_error(p);
  sweep_result result;
  result.program = s.o.program;
  result.options_text = options_text(s.o);
  result.jobs = s.o.jobs;
  result.shard_index = s.o.shard_index;
  result.shard_count = s.o.shard_count;
  if (const std::optional<int> stop = fault_free_run(s, plan, result)) return *stop;
  result.timeout = common::sweep_run_timeout(s.o.timeout, result.fault_free_seconds);
  if (s.o.timeout && result.fault_free_seconds > *s.o.timeout) {
    std::fprintf(stderr,
                 "clpool sweep: note: the fault-free run took %.3g s, more than --timeout %.3g s: "
                 "runs as slow are stopped and counted as hung\n",
                 result.fault_free_seconds, *s.o.timeout);
  }
  run_context ctx;
  ctx.timeout = result.timeout;
  ctx.jobs = s.o.jobs;
  ctx.baseline_live = result.fault_free_live_at_exit;
  if (!s.check.empty()) ctx.check = check_function(s.check, s.o, result.timeout);
  const std::vector<failure_point> selected =
      select_points(result.points, s.o.points, s.o, result.left_out, result.left_out_why);
  if (s.o.only && std::none_of(result.points.begin(), result.points.end(),
                               [&](const failure_point& p) { return p.id == *s.o.only; })) {
    discard_out(s.o, s.made_out);
    return usage_error(no_such_point(*s.o.only, result.points));  // not another shard's: none
  }
  for (const failure_point& p : selected) {
    run_outcome run;
    run.point = p;
    run.ran_as = p.id.n;
    run.what = verdict::interrupted;  // until it runs
    run.detail = "not run: the sweep was interrupted";
    run.dir = absolute(s.o.out) + "/runs/" + (p.id.first_use ? "first-use-" : "alloc-") +
              std::to_string(p.id.n);
    run.replay = plan.replay_command(result.options_text, p.id);
    result.runs.push_back(std::move(run));
  }
  run_points(s, plan, ctx, result.runs);
  seek_moved(s, plan, ctx, result.runs);
  for (run_outcome& run : result.runs) {
    if (run.what == verdict::interrupted) ++result.remaining;
    if (run.what == verdict::crashed && run.result.started && !interrupted) {
      run.crash_stack = crash_stack(plan, run, result.timeout, interrupted);
    }
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return finish(s, result);
}

}  // namespace clpool::record
