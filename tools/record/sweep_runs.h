// clpool sweep's runs (sweep.h): each run's command and environment, its verdict, the stacks of a
// crash, and where a point went in a run that met the program's points in another order.
#ifndef CLPOOL_TOOLS_RECORD_SWEEP_RUNS_H_
#define CLPOOL_TOOLS_RECORD_SWEEP_RUNS_H_

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tools/record/sweep.h"

namespace clpool::record {

// `s` as one word for a POSIX shell (bash's $'...' when it holds a control or non-ASCII byte), so
// a printed replay command gives the program the very bytes it had.
std::string shell_quoted(const std::string& s);

// How every run of one sweep starts: the program, the environment that loads the layer with the
// sweep's profile (sweep_main.cc), and the run's own files in its directory.
class run_plan {
 public:
  run_plan(const sweep_options& o, std::string program, std::vector<std::string> base_env);
  // A run failing `point` (n 0: none, the fault-free run), its files in `dir` (made as it starts).
  child_spec spec(const point_id& point, const std::string& dir, double timeout) const;
  // The one-line command that runs `point` again.
  std::string replay_command(const std::string& options_text, const point_id& point) const;
  const std::string& gdb() const { return gdb_; }
  // Writes the sitecustomize.py every run's Python finds first (sweep_sitecustomize.py) under
  // `dir`, for a Python program's exit to be reported at Python's own exit. Returns an error.
  std::string prepare_python(const std::string& dir, const std::string& layer);
  void set_gdb(std::string gdb) { gdb_ = std::move(gdb); }

 private:
  const sweep_options& options_;
  std::string program_;
  std::vector<std::string> base_env_;
  std::string gdb_;                      // "" when crashes get no native stack
  std::vector<std::string> python_env_;  // PYTHONPATH, CLPOOL_SWEEP_LAYER (prepare_python)
};

// What every run is judged against.
struct run_context {
  double timeout = 0;
  std::uint64_t jobs = 1;                      // -j: runs at once
  std::optional<std::uint64_t> baseline_live;  // the fault-free run's bytes held at exit
  // --check: true when the run's output is the fault-free run's; empty without --check.
  std::function<bool(const std::string& run_dir)> check;
};

// Sets `run.what`, `run.detail` and `run.live_at_exit` from its result and its report.
void classify(run_outcome& run, const run_context& ctx);

// The stacks of a crashed run: gdb's backtrace of the same run again (when gdb is there), and the
// Python stack faulthandler printed.
std::vector<std::string> crash_stack(const run_plan& plan, const run_outcome& run, double timeout,
                                     const std::atomic<bool>& interrupted);
std::string find_gdb();

// In a run whose report and trace are at these paths, the N of the point at `run.point`'s site
// and ordinal there; nothing when that run never reached it.
std::optional<std::uint64_t> moved_point(const run_outcome& run, const std::string& report_path,
                                         const std::string& trace_path);

}  // namespace clpool::record

#endif  // CLPOOL_TOOLS_RECORD_SWEEP_RUNS_H_
