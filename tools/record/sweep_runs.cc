// clpool sweep's runs: one per point with that point failing, side by side (-j), each classified
// from what the program did and what the layer saw (its report), a point that moved (a program
// whose allocations come in another order from run to run) sought again at its site, and a
// crash's stacks.
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>

#include "common/text_escape.h"
#include "tools/record/sweep_runs.h"

namespace clpool::record {
namespace {

// What the layer's report of a run says: whether the fault landed, on which block, and what the
// program held at its exit.
struct run_report {
  bool injected = false;
  std::uint64_t injected_block = 0;
  std::optional<std::uint64_t> live_at_exit;
  std::uint64_t points_met = 0;  // allocations and first uses the layer saw
};

run_report read_run_report(const std::string& path, bool first_use) {
  run_report r;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string w, kind;
    words >> w;
    if (w == "injected") {
      std::uint64_t n = 0, block = 0;
      words >> kind >> n >> block;
      if ((kind == "first_use") == first_use) {
        r.injected = true;
        r.injected_block = block;
      }
    } else if (w == "alloc" || w == "first_use") {
      ++r.points_met;
    } else if (w == "exit") {
      std::string b, x;
      std::uint64_t blocks = 0, bytes = 0;
      if (words >> b >> blocks >> x >> bytes) r.live_at_exit = bytes;
    }
  }
  return r;
}

}  // namespace

std::string shell_quoted(const std::string& s) {
  if (!s.empty() &&
      s.find_first_not_of(
          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./=:,+@%") ==
          std::string::npos) {
    return s;
  }
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
  if (plain) {
    std::string out = "'";
    for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  }
  // Bytes a report would print as escapes (controls, anything not ASCII): bash's $'...', whose
  // \xNN the shell turns back into the byte, so the command stays ASCII and exact.
  std::string body;
  for (const char c : s) {
    if (c == '\'' || c == '\\') body += '\\';
    body += c;
  }
  return "$'" + common::ascii_text(body) + "'";
}

namespace {

// The frames of a Python stack faulthandler printed ("  File \"x.py\", line 3 in f").
std::vector<std::string> python_stack(const std::string& stderr_path) {
  std::vector<std::string> out;
  std::ifstream in(stderr_path);
  bool in_stack = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("most recent call first") != std::string::npos) {
      in_stack = true;
      continue;
    }
    if (in_stack && line.rfind("  File \"", 0) == 0) {
      out.push_back("python: " + line.substr(2));
      if (out.size() >= 12) break;
    } else if (in_stack && !line.empty()) {
      in_stack = false;
    }
  }
  return out;
}

// A sanitizer's error report in the run's stderr (a program built with ASan or UBSan ends with
// exit 1, not a signal, when it meets a wild pointer): its SUMMARY line, or UBSan's "file:line:
// col: runtime error: ..." (which has no summary unless asked); "" when none.
// UBSan's own form: the location "FILE:LINE:COLUMN" right before ": runtime error: ", so that a
// program's message that merely says "runtime error" is not taken for a sanitizer's report.
bool is_ubsan_line(const std::string& line) {
  const std::size_t at = line.find(": runtime error: ");
  if (at == std::string::npos) return false;
  std::size_t end = at;
  for (int field = 0; field < 2; ++field) {  // COLUMN, then LINE: digits after a colon
    std::size_t begin = end;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
    if (begin == end || begin < 2 || line[begin - 1] != ':') return false;
    end = begin - 1;
  }
  return end > 0;  // a FILE before them
}

std::string sanitizer_summary(const std::string& stderr_path) {
  std::ifstream in(stderr_path);
  std::string ubsan;
  std::size_t read = 0;
  for (std::string line; read < (1u << 20) && std::getline(in, line);) {
    read += line.size() + 1;
    if (line.rfind("SUMMARY: ", 0) == 0 && line.find("Sanitizer: ", 9) != std::string::npos)
      return line.substr(9);
    if (ubsan.empty() && is_ubsan_line(line)) {
      ubsan = "UndefinedBehaviorSanitizer: " + line;
    }
  }
  return ubsan;
}

// The sanitizer report's own stack ("    #0 0x... in make_filled file.c:30"), innermost first.
std::vector<std::string> sanitizer_stack(const std::string& stderr_path) {
  std::vector<std::string> out;
  std::ifstream in(stderr_path);
  for (std::string line; std::getline(in, line) && out.size() < 8;) {
    const std::size_t at = line.find_first_not_of(' ');
    if (at != std::string::npos && at >= 2 && line.compare(at, 1, "#") == 0 &&
        at + 1 < line.size() && line[at + 1] >= '0' && line[at + 1] <= '9') {
      out.push_back("sanitizer: " + line.substr(at));
    } else if (!out.empty()) {
      break;  // the first stack only: the error's
    }
  }
  return out;
}

}  // namespace

extern const char sweep_sitecustomize[];  // sweep_sitecustomize.py, embedded

run_plan::run_plan(const sweep_options& o, std::string program, std::vector<std::string> base_env)
    : options_(o), program_(std::move(program)), base_env_(std::move(base_env)) {}

std::string run_plan::prepare_python(const std::string& dir, const std::string& layer) {
  ::mkdir(dir.c_str(), 0777);
  std::ofstream out(dir + "/sitecustomize.py");
  out << sweep_sitecustomize;
  out.close();
  if (!out) return "cannot write " + dir + "/sitecustomize.py";
  std::string path = dir;
  for (std::string& e : base_env_) {
    if (e.rfind("PYTHONPATH=", 0) == 0) {
      path += ":" + e.substr(11);
      e.clear();
    }
  }
  base_env_.erase(std::remove(base_env_.begin(), base_env_.end(), std::string()), base_env_.end());
  python_env_ = {"PYTHONPATH=" + path, "CLPOOL_SWEEP_LAYER=" + layer};
  return "";
}

child_spec run_plan::spec(const point_id& point, const std::string& dir, double timeout) const {
  child_spec s;
  s.dir = dir;
  s.program = program_;
  s.args = options_.program;
  s.env = base_env_;
  s.env.insert(s.env.end(), python_env_.begin(), python_env_.end());
  s.env.push_back("CLPOOL_LAYER_TRACE=" + dir + "/trace");
  s.env.push_back("CLPOOL_LAYER_REPORT=" + dir + "/report");
  s.env.push_back("CLPOOL_LAYER_ERRORS=" + dir + "/errors");
  s.env.push_back("CLPOOL_SWEEP_RUN=" + dir);
  if (point.n != 0) {
    s.env.push_back(std::string(point.first_use ? "CLPOOL_LAYER_FAIL_FIRST_USE_NTH="
                                                : "CLPOOL_LAYER_FAIL_NTH=") +
                    std::to_string(point.n));
    if (options_.until_free) s.env.push_back("CLPOOL_LAYER_FAIL_UNTIL_FREE=1");
  }
  s.stdout_path = dir + "/stdout.txt";
  s.stderr_path = dir + "/stderr.txt";
  s.timeout_seconds = timeout;
  return s;
}

std::string run_plan::replay_command(const std::string& options_text, const point_id& point) const {
  // A folder of its own inside --out, replaced when run again: never the sweep's own runs. A
  // sweep that is already that one run (--only) names itself, so running it again does not nest.
  const std::string out = options_.only == point ? options_.out
                                                 : options_.out + "/replay-" +
                                                       (point.first_use ? "first-use-" : "alloc-") +
                                                       std::to_string(point.n);
  std::string cmd = "clpool sweep " + options_text + " --out " + shell_quoted(out) +
                    " --force --only " + to_string(point) + " --";
  for (const std::string& a : options_.program) cmd += " " + shell_quoted(a);
  return cmd;
}

void classify(run_outcome& run, const run_context& ctx) {
  const child_result& r = run.result;
  const run_report rep = read_run_report(run.dir + "/report", run.point.id.first_use);
  run.live_at_exit = rep.live_at_exit;
  // No exit line: the program ended without its exit handlers (_exit), which a crash or a hang
  // explains, but an exit does not. Its trace says what it held.
  const bool exited = r.started && !r.interrupted && !r.timed_out && !r.signaled;
  const bool no_exit_handlers = exited && !rep.live_at_exit;
  if (no_exit_handlers) run.live_at_exit = held_at_trace_end(run.dir + "/trace");
  if (r.interrupted) {
    run.what = verdict::interrupted;
    run.detail = "stopped: the sweep was interrupted";
  } else if (!r.started) {
    run.what = verdict::crashed;
    run.detail = std::string("could not start: ") + strerror(r.exec_error);
  } else if (!rep.injected && !r.timed_out && !r.signaled) {
    run.what = verdict::unreached;
    run.detail = "the program ended before its " +
                 to_string(point_id{run.point.id.first_use, run.ran_as}) + " (exit " +
                 std::to_string(r.exit_code) + ")";
    // Not even the fault-free run's first allocation: it failed for a reason of its own, which
    // runs at once (-j) may share: one working directory, HOME, the program's lock files.
    if (rep.points_met == 0 && r.exit_code != 0) {
      run.detail +=
          "; this run made no device allocation at all, so it failed for a reason of "
          "its own: see its stderr" +
          std::string(ctx.jobs > 1 ? " (runs at once, -j, share the working "
                                     "directory, HOME and the program's files)"
                                   : "");
    }
  } else if (r.timed_out) {
    run.what = verdict::hung;
    char t[32];
    std::snprintf(t, sizeof t, "%g", ctx.timeout);
    run.detail = std::string("no end after ") + t + " s (--timeout)";
  } else if (const std::string summary = sanitizer_summary(run.dir + "/stderr.txt");
             r.signaled || !summary.empty()) {
    // A sanitizer's report ends the program with exit 1, or with an abort (abort_on_error).
    run.what = verdict::crashed;
    const char* when = rep.injected ? " after the failure" : " before the failure";
    run.detail = !r.signaled       ? summary + " (exit " + std::to_string(r.exit_code) + ")" + when
                 : summary.empty() ? common::signal_text(r.signal) + when
                                   : common::signal_text(r.signal) + when + ": " + summary;
  } else if (ctx.baseline_live && run.live_at_exit && *run.live_at_exit > *ctx.baseline_live) {
    run.what = verdict::leaked;
    run.detail = "exit " + std::to_string(r.exit_code) +
                 (no_exit_handlers ? " (no exit handlers ran: its trace's count)" : "") +
                 " holding " + std::to_string(*run.live_at_exit) + " bytes of device memory, " +
                 std::to_string(*ctx.baseline_live) + " without the failure";
  } else if (r.exit_code == 0 && ctx.check && !ctx.check(run.dir)) {
    run.what = verdict::silent;
    run.detail = "exit 0, and --check says its output differs from the fault-free run's";
  } else {
    run.what = verdict::handled;
    run.detail = r.exit_code == 0 ? "exit 0: recovered"
                                  : "exit " + std::to_string(r.exit_code) + ": reported";
  }
}

std::vector<std::string> crash_stack(const run_plan& plan, const run_outcome& run, double timeout,
                                     const std::atomic<bool>& interrupted) {
  // The Python stack first (faulthandler's, in the run's own output: under gdb below the program
  // stops at the signal before faulthandler prints), then gdb's innermost native frames.
  std::vector<std::string> out = python_stack(run.dir + "/stderr.txt");
  // A sanitizer's report has the error's own stack, where gdb would stop at the abort after it.
  const std::vector<std::string> frames = sanitizer_stack(run.dir + "/stderr.txt");
  if (!frames.empty() || !run.result.signaled) {
    out.insert(out.end(), frames.begin(), frames.end());
    return out;
  }
  if (plan.gdb().empty()) return out;
  const std::string dir = run.dir + "/gdb";
  child_spec s = plan.spec(point_id{run.point.id.first_use, run.ran_as}, dir, timeout);
  std::vector<std::string> args = {plan.gdb(),        "-q",     "-batch", "-nx", "-ex",
                                   "set confirm off", "-ex",    "run",    "-ex", "bt 24",
                                   "--args",          s.program};
  for (std::size_t i = 1; i < s.args.size(); ++i) args.push_back(s.args[i]);
  s.program = plan.gdb();
  s.args = args;
  run_child(s, interrupted);
  std::ifstream in(dir + "/stdout.txt");
  std::size_t native = 0;
  for (std::string line; std::getline(in, line) && native < 8;) {
    if (line.size() > 1 && line[0] == '#' && line[1] >= '0' && line[1] <= '9') {
      out.push_back("native: " + line);
      ++native;
    }
  }
  return out;
}

std::string find_gdb() {
  for (const char* p : {"/usr/bin/gdb", "/usr/local/bin/gdb"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

std::optional<std::uint64_t> moved_point(const run_outcome& run, const std::string& report_path,
                                         const std::string& trace_path) {
  std::optional<std::uint64_t> live;
  std::string problem;
  const std::vector<failure_point> seen =
      read_points(report_path, trace_path, run.point.id.first_use, live, problem);
  for (const failure_point& p : seen) {
    if (p.id.first_use == run.point.id.first_use && p.site == run.point.site &&
        p.ordinal == run.point.ordinal) {
      return p.id.n;
    }
  }
  return std::nullopt;
}

}  // namespace clpool::record
