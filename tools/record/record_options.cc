#include "tools/record/record_options.h"

#include "common/byte_size.h"
#include "common/cli.h"
#include "device_model/profile.h"
#include "tools/record/program_flags.h"

namespace clpool::record {

const char* const record_usage =
    "usage: clpool record [--budget SIZE [--profile P]] [--out FILE] [--force] [--layer PATH]\n"
    "                     [--stacks none|native|python|all] [--] PROGRAM [ARGS...]\n"
    "Runs PROGRAM with the clpool OpenCL layer loaded, so that every buffer and SVM allocation\n"
    "it makes is recorded to a clpool trace, prints the trace's summary on stderr, and exits\n"
    "with the program's status (128+N if a signal N killed it).\n"
    "\n"
    "  --budget SIZE  simulate a device with SIZE bytes of memory (2GiB, 512MiB, 4096; not 2GB)\n"
    "  --profile P    how that device commits memory: exact, nvidia, pocl or a profile file\n"
    "  --out FILE     the trace (default clpool.trace); an existing FILE needs --force, and a\n"
    "                 file that is not a trace the layer wrote is never replaced\n"
    "  --force        replace the trace of an earlier recording at FILE\n"
    "  --layer PATH   the layer to load (default: libclpool_layer.so of this installation)\n"
    "  --stacks MODE  the allocation sites recorded with each allocation: all (the default: the\n"
    "                 native stack and, in a Python program, the Python stack), native, python,\n"
    "                 or none (a version-1 trace, as without sites)\n"
    "\n"
    "OPENCL_LAYERS keeps the layers already set; the clpool layer is added last, i.e. outermost,\n"
    "so it records what the program asks before any other layer sees it. Other CLPOOL_LAYER_*\n"
    "variables (FAIL_NTH, FAIL_PROB, SEED) are passed on and checked first.\n"
    "Exit status: the program's; 2 bad usage (nothing run); 127 the program cannot be run.\n";

namespace {

const std::vector<std::string> value_flags = {"--budget", "--profile", "--out", "--layer",
                                              "--stacks"};
// Applies one flag's value; returns an error naming the flag, or "".
std::string apply(record_options& o, const std::string& flag, const std::string& value) {
  if (value.empty()) return common::needs_value(flag);
  if (flag == "--budget") {
    std::string why;
    const std::optional<std::uint64_t> bytes =
        common::parse_size(value, {.device = true, .positive = true}, why);
    if (!bytes) return flag + ": '" + value + "' " + why;
    o.budget_bytes = bytes;
  } else if (flag == "--profile") {
    try {
      device_model::load_profile(value);
    } catch (const device_model::profile_error& e) {
      return std::string("--profile: ") + e.what();
    }
    o.profile = value;
  } else if (flag == "--out") {
    o.out = value;
  } else if (flag == "--stacks") {
    if (value != "none" && value != "native" && value != "python" && value != "all") {
      return "--stacks: '" + value + "' is not none, native, python or all";
    }
    o.stacks = value;
  } else {
    o.layer = value;
  }
  return "";
}

}  // namespace

parse_outcome parse_record_options(const std::vector<std::string>& args) {
  record_options o;
  const std::string error = scan_program_flags(
      args, {value_flags, {"--force"}, "clpool record --help"}, o.help, o.program,
      [&o](const std::string& flag, const std::string& value) { return apply(o, flag, value); },
      [&o](const std::string&) { o.force = true; });
  if (!error.empty()) return {std::nullopt, error};
  if (o.help) return {o, ""};
  if (o.program.empty())
    return {std::nullopt, "no program to run (clpool record [FLAGS] -- PROGRAM ARGS...)"};
  if (o.profile && !o.budget_bytes) {
    return {std::nullopt, "--profile: needs --budget (a profile says how the budget is committed)"};
  }
  if (o.profile) {
    const std::string why = device_model::capacity_refusal(device_model::load_profile(*o.profile),
                                                           *o.budget_bytes, "--budget");
    if (!why.empty()) return {std::nullopt, why};
  }
  return {o, ""};
}

}  // namespace clpool::record
