#include "tools/record/sweep_options.h"

#include <cmath>

#include "common/cli.h"
#include "device_model/profile.h"
#include "tools/record/program_flags.h"

namespace clpool::record {

const char* const sweep_usage =
    "usage: clpool sweep [--profile P] [--points alloc|first-use|all] [--timeout SECONDS]\n"
    "                    [--check PROGRAM] [-j N] [--shard K/N] [--max-runs N] [--seed S]\n"
    "                    [--out DIR] [--force] [--json FILE] [--html FILE] [--only POINT]\n"
    "                    [--until-free] [--no-gdb] [--layer PATH] [--] PROGRAM [ARGS...]\n"
    "Runs PROGRAM once under the clpool OpenCL layer to find its failure points (each device\n"
    "allocation and, with a profile whose device fails at first use, each first use of a\n"
    "buffer), then once per point with exactly that point failing, as the profile's device\n"
    "fails there, and says what each run did: handled, crashed, hung, leaked or silent.\n"
    "\n"
    "  --profile P       the device: exact, nvidia (the default), pocl or a profile file\n"
    "  --points KINDS    alloc, first-use or all (the default) of the points\n"
    "  --timeout S       a run is hung after S seconds, at most 604800 (default: ten times\n"
    "                    the fault-free run's time, at least 10 s)\n"
    "  --check PROGRAM   a run that exits 0 is silent when PROGRAM BASELINE_DIR RUN_DIR exits\n"
    "                    non-zero (each DIR holds the run's stdout.txt and stderr.txt)\n"
    "  -j N              N runs at once (default 1)\n"
    "  --shard K/N       only the points K, K+N, K+2N, ... (1 <= K <= N): a sweep spread over N\n"
    "                    machines or jobs; their reports together are the whole sweep\n"
    "  --max-runs N      at most N runs, the points sampled evenly (the report names the rest)\n"
    "  --seed S          with --max-runs: where the even sample starts (default 1)\n"
    "  --out DIR         every run's trace, report and output (default clpool-sweep; an earlier\n"
    "                    sweep's DIR needs --force)\n"
    "  --json FILE       the report as JSON too (- for standard output, instead of the text)\n"
    "  --html FILE       the report as a page too\n"
    "  --only POINT      one run, failing POINT (alloc:7, first-use:3): a report's replay command\n"
    "  --until-free      the device stays full after the failing point, as a real full device:\n"
    "                    every request as large fails too until the program frees device memory\n"
    "                    (a retry without freeing, such as PyOpenCL's, fails again); by default\n"
    "                    exactly the point fails and nothing else\n"
    "  --no-gdb          no native stack of a crash (by default a crashed run is run again under\n"
    "                    gdb for it, when gdb is installed)\n"
    "  --layer PATH      the layer to load (default: libclpool_layer.so of this installation)\n"
    "\n"
    "Exit status: 0 no run crashed, hung or leaked; 1 one did; 2 bad usage, or the program\n"
    "fails without any fault injected (nothing swept); 128 + the signal when interrupted\n"
    "(130 for Ctrl-C; the report covers the runs done and says how many remain).\n";

namespace {

const std::vector<std::string> value_flags = {
    "--profile", "--points", "--timeout", "--check", "-j",     "--shard", "--max-runs",
    "--seed",    "--out",    "--json",    "--html",  "--only", "--layer"};
const std::vector<std::string> bare_flags = {"--force", "--no-gdb", "--until-free"};

std::optional<std::uint64_t> whole(const std::string& text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    return {};
  return std::stoull(text);
}

std::string apply_number(sweep_options& o, const std::string& flag, const std::string& value) {
  const std::optional<std::uint64_t> n = whole(value);
  if (!n) return flag + ": '" + value + "' is not a whole number";
  if (flag == "-j") {
    if (*n == 0 || *n > 1024)
      return "-j: " + value + " is not a number of runs at once from 1 to 1024";
    o.jobs = *n;
  } else if (flag == "--max-runs") {
    if (*n == 0) return "--max-runs: must be at least 1";
    o.max_runs = *n;
  } else {
    o.seed = *n;
    o.seed_given = true;
  }
  return "";
}

std::string apply_shard(sweep_options& o, const std::string& value) {
  const std::size_t slash = value.find('/');
  const std::optional<std::uint64_t> k = whole(value.substr(0, slash));
  const std::optional<std::uint64_t> n =
      slash == std::string::npos ? std::nullopt : whole(value.substr(slash + 1));
  if (!k || !n) return "--shard: '" + value + "' is not K/N (e.g. 2/4)";
  if (*k < 1 || *k > *n) return "--shard: " + value + ": K must be from 1 to N";
  o.shard_index = *k - 1;
  o.shard_count = *n;
  return "";
}

std::string apply(sweep_options& o, const std::string& flag, const std::string& value) {
  if (value.empty()) return common::needs_value(flag);
  if (flag == "--profile") {
    try {
      device_model::load_profile(value);
    } catch (const device_model::profile_error& e) {
      return std::string("--profile: ") + e.what();
    }
    o.profile = value;
  } else if (flag == "--points") {
    o.points_given = true;
    if (value == "all")
      o.points = point_kinds::all;
    else if (value == "alloc")
      o.points = point_kinds::alloc;
    else if (value == "first-use")
      o.points = point_kinds::first_use;
    else
      return "--points: '" + value + "' is not alloc, first-use or all";
  } else if (flag == "--timeout") {
    char* end = nullptr;
    double t = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || *end != '\0') t = 0;  // not a number at all
    if (const std::string p = common::sweep_timeout_problem(t); !p.empty())
      return "--timeout: '" + value + "' " + p;
    o.timeout = t;
  } else if (flag == "--shard") {
    return apply_shard(o, value);
  } else if (flag == "-j" || flag == "--max-runs" || flag == "--seed") {
    return apply_number(o, flag, value);
  } else if (flag == "--only") {
    o.only = common::parse_sweep_point(value);
    if (!o.only) return "--only: '" + value + "' is not a point (alloc:N or first-use:N, N from 1)";
  } else if (flag == "--check") {
    o.check = value;
  } else if (flag == "--out") {
    o.out = value;
  } else if (flag == "--json") {
    o.json = value;
  } else if (flag == "--html") {
    o.html = value;
  } else {
    o.layer = value;
  }
  return "";
}

// Flags that would change nothing beside the others given: refused rather than ignored.
std::string ignored_combination(const sweep_options& o) {
  if (o.only) {
    if (o.points_given) return "--only runs the one point it names; it takes no --points";
    if (o.max_runs) return "--only runs the one point it names; it takes no --max-runs";
    if (o.seed_given) return "--only runs the one point it names; it takes no --seed";
  }
  if (o.seed_given && !o.max_runs) {
    return "--seed picks where --max-runs starts its even sample; without --max-runs every point "
           "runs (give --max-runs N, or drop --seed)";
  }
  return "";
}

}  // namespace

sweep_parse_outcome parse_sweep_options(const std::vector<std::string>& args) {
  sweep_options o;
  const std::string error = scan_program_flags(
      args, {value_flags, bare_flags, "clpool sweep --help"}, o.help, o.program,
      [&o](const std::string& flag, const std::string& value) { return apply(o, flag, value); },
      [&o](const std::string& flag) {
        if (flag == "--force") o.force = true;
        if (flag == "--no-gdb") o.gdb = false;
        if (flag == "--until-free") o.until_free = true;
      });
  if (!error.empty()) return {std::nullopt, error};
  if (o.help) return {o, ""};
  if (o.program.empty())
    return {std::nullopt, "no program to run (clpool sweep [FLAGS] -- PROGRAM ARGS...)"};
  if (const std::string e = ignored_combination(o); !e.empty()) return {std::nullopt, e};
  const device_model::device_profile profile = device_model::load_profile(o.profile);
  if (o.points == point_kinds::first_use &&
      profile.oom_at == device_model::refusal_point::creation) {
    return {std::nullopt,
            "--points first-use: the " + profile.name +
                " profile's device fails at creation, so a first use never fails there"};
  }
  if (o.only && o.only->first_use && profile.oom_at == device_model::refusal_point::creation) {
    return {std::nullopt, "--only " + to_string(*o.only) + ": the " + profile.name +
                              " profile's device fails at creation, not at first use"};
  }
  return {o, ""};
}

}  // namespace clpool::record
