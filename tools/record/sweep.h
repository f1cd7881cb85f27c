// clpool sweep: every out-of-memory a program can meet, tried one by one. A fault-free run under
// the layer finds the program's failure points (each device allocation and, with a profile whose
// device fails at first use, each first use of a buffer: the layer's report, CLPOOL_LAYER_REPORT);
// then one run per point fails exactly that point (CLPOOL_LAYER_FAIL_NTH or
// CLPOOL_LAYER_FAIL_FIRST_USE_NTH), with the status the profile's device returns there, and each
// run is classified: crashed, hung, leaked, silent or handled. See tools/record/README.md.
#ifndef CLPOOL_TOOLS_RECORD_SWEEP_H_
#define CLPOOL_TOOLS_RECORD_SWEEP_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tools/record/child_process.h"
#include "tools/record/sweep_options.h"

namespace clpool::record {

// One failure point of the program, as the fault-free run met it.
struct failure_point {
  point_id id;                // alloc:N / first-use:N
  std::uint64_t block = 0;    // the layer's id of the block
  std::uint64_t bytes = 0;    // its size
  std::string what;           // "buffer", "svm", "host"; for a first use, the call
  std::string site;           // the innermost frame of the program that asked (replay/site_names.h)
  std::string path;           // its whole path through the program, "f (a.c:3) ← main (a.c:9)"
  std::uint64_t ordinal = 0;  // its place among the points of its kind at its site, from 1
  bool unnamed = false;  // the site is a native function without a symbol (replay/site_names.h)
};

// What one run did, worst first.
enum class verdict { crashed, hung, leaked, silent, handled, unreached, interrupted };
const char* to_string(verdict v);

struct run_outcome {
  failure_point point;
  std::uint64_t ran_as = 0;  // the N the run failed (the point's own, or where the point moved)
  verdict what = verdict::handled;
  std::string detail;  // "exit 1", "signal 11 (SIGSEGV)", "no end after 30 s", ...
  child_result result;
  std::string dir;                            // the run's trace, report and output
  std::optional<std::uint64_t> live_at_exit;  // bytes the program held when it exited
  std::vector<std::string> crash_stack;       // gdb's frames, then the Python stack (faulthandler)
  std::string replay;                         // the one-line command that runs it again
};

struct sweep_result {
  std::vector<std::string> program;
  std::string profile;       // its name
  std::string options_text;  // the flags a replay command repeats (--profile ..., --timeout ...)
  std::vector<failure_point> points;    // every point of the fault-free run
  std::vector<failure_point> left_out;  // not run: another shard's, or outside --max-runs
  std::string left_out_why;
  double fault_free_seconds = 0;
  std::optional<std::uint64_t> fault_free_live_at_exit;
  bool fault_free_live_from_trace = false;  // it ended without exit handlers: its trace's count
  double timeout = 0;
  std::uint64_t jobs = 1, shard_index = 0, shard_count = 1;
  std::vector<run_outcome> runs;  // worst first
  std::size_t remaining = 0;      // not run: interrupted
  double seconds = 0;             // the whole sweep
};

// `clpool sweep ARGS`: returns the exit status (sweep_options.h's usage says which).
int run_sweep(const std::vector<std::string>& args);

// --- the parts, for their tests ---

// The points a layer report lists (report_file.h's lines), named through the trace the same run
// wrote (its stacks), `first_uses` only when the profile's device fails at first use.
std::vector<failure_point> read_points(const std::string& report, const std::string& trace,
                                       bool first_uses, std::optional<std::uint64_t>& live_at_exit,
                                       std::string& problem);

// What a run's trace leaves held at its end: the buffers and SVM blocks (the kinds the layer's
// exit line counts) it allocated and neither released nor freed; nothing when the trace cannot be
// read. For a run whose exit line never came: it ended without running its exit handlers
// (_exit, os._exit), and is judged as if it had exited.
std::optional<std::uint64_t> held_at_trace_end(const std::string& trace);

// The points a sweep runs: of `kinds`, this shard's (every shard_count-th from shard_index), then
// at most `max_runs` of them sampled evenly from a start `seed` picks; the others in `left_out`.
std::vector<failure_point> select_points(const std::vector<failure_point>& all, point_kinds kinds,
                                         const sweep_options& o,
                                         std::vector<failure_point>& left_out, std::string& why);

}  // namespace clpool::record

#endif  // CLPOOL_TOOLS_RECORD_SWEEP_H_
