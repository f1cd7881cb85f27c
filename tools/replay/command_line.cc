#include "tools/replay/command_line.h"

#include <CLI/CLI.hpp>

#include "common/cli.h"
#include "common/cli11.h"
#include "common/text_escape.h"
#include "device_model/profile.h"
#include "replay/result.h"
#include "tools/replay/output_writer.h"

namespace clpool::replay_cli {

using replay::free_moment_names;

namespace {

std::string format_help() {
  std::string s =
      "write the results in this format (repeatable): NAME on standard output, or "
      "NAME=FILE (written atomically, never onto an input). Without one on standard "
      "output, the text report goes there. Formats:";
  for (const output_writer* w : all_writers()) {
    s += " " + std::string(w->name()) + ": " + std::string(w->description()) + ";";
  }
  s.back() = '.';
  return s;
}

// The options whose presence matters beyond their value (a default that was not typed).
struct given_options {
  CLI::Option* profile = nullptr;
  CLI::Option* write_format = nullptr;
  CLI::Option* leading_bits = nullptr;
  CLI::Option* limit = nullptr;
  CLI::Option* trim_max_held = nullptr;
  CLI::Option* trim_ratio = nullptr;
  CLI::Option* granule = nullptr;
};

// The aliases of --format, as typed; folded into command_line::formats after parsing.
struct format_aliases {
  std::vector<std::string> formats;  // --format's values
  bool json = false;
  std::string svg_path, html_path;
};

void describe_tool(CLI::App& app) {
  app.description(
      "clpool_replay: replays an allocation trace through the clpool memory pool (or no pool) on a "
      "device of a given capacity (the built-in simulated device, or a mockcl OpenCL device "
      "through "
      "the ICD loader), and reports whether and why it runs out of memory.\n"
      "Sizes accept plain bytes or a B, KiB, MiB, GiB, TiB, PiB or EiB suffix, or k, m, g, t, p, "
      "e, any case "
      "(4GiB, "
      "512MiB, 256m, 1073741824); decimal KB, MB, GB, TB are refused as ambiguous. A device is at "
      "most 2^62 bytes.");
  app.footer(
      "Configurations (--compare): 'nopool', 'pool', or 'pool:' followed by comma-separated "
      "options "
      "lb=N, limit=SIZE, trim-max-held=SIZE, trim-ratio=R, alloc=device|immediate (immediate: "
      "the pool's allocator commits each buffer as it makes it, as PyOpenCL's ImmediateAllocator "
      "does), e.g. pool:lb=2,trim-ratio=0.5\n\n"
      "Exit codes:\n"
      "  0  every replay ran cleanly (and --min-capacity found a capacity for every "
      "configuration)\n"
      "  1  a replay reproduced an out-of-memory (or no capacity suffices for some configuration)\n"
      "  2  bad input: a bad option value, an unreadable or malformed trace or CSV; or a device "
      "that cannot answer truthfully (--device opencl)\n\n"
      "Trace format: trace/FORMAT.md. Report fields: tools/replay/README.md.");
  app.get_formatter()->column_width(34);
}

void add_input_options(CLI::App& app, command_line& cl) {
  auto* trace_opt = app.add_option(
      "trace", cl.trace_path,
      "clpool trace file to replay, text or binary (trace/FORMAT.md); '-' reads stdin");
  app.add_option(
         "--rmm-csv", cl.rmm_path,
         "read an RMM logging_resource_adaptor CSV log (Thread,Time,Action,Pointer,Size,Stream) "
         "instead of a clpool trace")
      ->excludes(trace_opt);
  app.add_option("--capacity", cl.capacity_text,
                 "device capacity, e.g. 4GiB; required unless --min-capacity");
  auto* diff_opt =
      app.add_option("--diff", cl.diff_paths,
                     "compare two traces of a program, OLD NEW (before and after a change): each "
                     "configuration's peak device memory and minimum capacity in both, and the "
                     "allocation sites whose memory grew most; with the device and configuration "
                     "options as for one trace; --format text or json")
          ->expected(2)
          ->excludes(trace_opt);
  app.add_option(
         "--max-growth", cl.max_growth_text,
         "with --diff: exit 1 when a configuration's peak device memory or minimum capacity "
         "grew by more than this, e.g. 5%")
      ->needs(diff_opt);
}

void add_device_options(CLI::App& app, command_line& cl, given_options& given) {
  given.profile = app.add_option(
      "--profile", cl.profile_text,
      "how the device commits memory and reports running out: a built-in profile (nvidia, "
      "the default: 2 MiB pages, small requests packed at 512 B, 2.625 MiB headroom, "
      "out-of-memory at first use; pocl; exact: every byte counts once, no headroom) or "
      "a profile file (device_model/profile.h has the grammar). With nvidia, --capacity "
      "is the free memory the program starts with, as nvidia-smi shows it");
  app.add_option("--semantics", cl.semantics_text,
                 "immediate: allocation fails at once when the device is full (the pool can free "
                 "held blocks and retry); deferred: allocation succeeds and fails at first use "
                 "(the pool cannot help); host_oom: like immediate, reported as "
                 "CL_OUT_OF_HOST_MEMORY (mockcl's host_oom). Default: where the profile's device "
                 "fails (nvidia: deferred)")
      ->check(
          CLI::IsMember(std::vector<std::string>(std::begin(device_model::alloc_semantics_names),
                                                 std::end(device_model::alloc_semantics_names))));
  app.add_option(
      "--device", cl.device_text,
      "sim (default): the built-in simulated device, pure bookkeeping, fastest (use it for "
      "--min-capacity on long traces and for benchmarks); mockcl: every block is a real "
      "cl_mem in the mock OpenCL ICD (//mockcl:libmockcl.so) through the system ICD loader, "
      "on a mock device with this capacity and semantics (pool/opencl's immediate or "
      "deferred buffer allocator; deferred blocks are migrated once to charge them); "
      "opencl[:PLATFORM[:INDEX]]: a real OpenCL device (PLATFORM an index or part of its "
      "name), with a ballast of real buffers so that the replay starts with exactly "
      "--capacity free (free memory is measured where the device can say, else taken "
      "to be its reported size); --min-capacity searches up to what it has free. Used only if it "
      "enforces its memory: it must refuse a fill one byte over what it has free, and "
      "the same fill before and after each replay must stop at the same byte (else "
      "exit 2; POCL never refuses). The report names the device, not a profile; "
      "--profile is refused with it");
  app.add_option(
      "--mockcl-so", cl.mockcl_so,
      "--device mockcl: path of libmockcl.so (default: $LIBMOCKCL_SO, else the copy in the "
      "binary's runfiles)");
  app.add_option("--host-capacity", cl.host_capacity_text,
                 "budget for `host` (ALLOC_HOST_PTR, pinned) blocks, which never count against "
                 "--capacity or go through the pool, as on mockcl and under the layer's budget "
                 "(default unlimited)");
  app.add_option("--max-alloc", cl.max_alloc_text,
                 "the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE (--device sim or mockcl; default: "
                 "not modelled). The pool makes no block above it (the one bin that would round "
                 "a smaller request above it serves that request at its own size), and where the "
                 "profile enforces it (max_alloc_enforced: pocl, exact; not nvidia) a request "
                 "above it fails with CL_INVALID_BUFFER_SIZE, which no capacity changes");
}

void add_pool_options(CLI::App& app, command_line& cl, given_options& given) {
  auto* no_pool_opt = app.add_flag("--no-pool", cl.no_pool,
                                   "replay without a pool: every request goes to the device");
  given.leading_bits =
      app.add_option("--leading-bits", cl.leading_bits,
                     "pool bin precision: 0-12 leading bits after the top bit (default 4, "
                     "PyOpenCL's); more bits, less rounding, fewer hits")
          ->check(CLI::Range(0u, clpool::max_leading_bits));
  given.limit =
      app.add_option("--limit", cl.limit_text, "pool limit: managed bytes never exceed this");
  given.trim_max_held = app.add_option(
      "--trim-max-held", cl.trim_max_held_text,
      "trim policy: hold at most this many bytes of freed blocks (0 = hold nothing)");
  given.trim_ratio = app.add_option("--trim-ratio", cl.trim_ratio_text,
                                    "trim policy: hold at most R x active bytes (R >= 0)");
  app.add_flag(
      "--min-capacity", cl.min_capacity,
      "find by bisection the smallest capacity (a multiple of --granule) that replays with "
      "no out-of-memory, for each configuration");
  given.granule = app.add_option("--granule", cl.granule_text,
                                 "resolution of --min-capacity and --diff (default 1MiB)");
  app.add_option(
      "--trials", cl.trials_text,
      "LO:HI:STEP: replay each configuration at every capacity from LO to HI in steps of STEP "
      "(e.g. 80MiB:96MiB:64KiB), and report each trial's result and first failing allocation: "
      "how the boundary looks near a minimum capacity, trial by trial, to compare devices "
      "(at most 10000 trials)");
  auto* cmp_opt = app.add_option("--compare", cl.compare,
                                 "replay several configurations side by side, e.g. --compare "
                                 "nopool pool:lb=4 pool:lb=2,trim-ratio=0.5")
                      ->expected(1, -1);
  for (CLI::Option* o :
       {no_pool_opt, given.leading_bits, given.limit, given.trim_max_held, given.trim_ratio}) {
    o->excludes(cmp_opt);
  }
}

void add_output_options(CLI::App& app, command_line& cl, format_aliases& aliases,
                        given_options& given) {
  app.add_option("--format", aliases.formats, format_help())->allow_extra_args(false);
  app.add_flag("--json", aliases.json,
               "print the report as JSON on stdout instead of text (--format json)");
  app.add_option(
      "--svg", aliases.svg_path,
      "write a self-contained SVG timeline of active, held and managed bytes against "
      "capacity, with the out-of-memory point marked (first configuration; --format svg=FILE)");
  app.add_option(
      "--html", aliases.html_path,
      "write a self-contained HTML page (works from file://) to explore the replay: live "
      "blocks over time or by allocation site, device used and capacity, pool held "
      "memory, the out-of-memory, each block's stack on hover (--format html=FILE)");
  app.add_flag("--full-stacks", cl.full_stacks,
               "a trace with allocation sites (FORMAT.md version 2): print every frame of each "
               "site in the out-of-memory report, not only its innermost frame in the program");
  app.add_option("--site-frames", cl.site_frames,
                 "a trace with allocation sites: group allocations by their N innermost frames in "
                 "the program (default 1: a site is the function that allocated; 2: that function "
                 "and its caller, ...); under each site the report and the page show the callers "
                 "that hold the most either way")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            const bool digits = !v.empty() && v.size() <= 2 &&
                                v.find_first_not_of("0123456789") == std::string::npos;
            if (digits && std::stoi(v) >= 1 && std::stoi(v) <= 64) return "";
            return "'" + v + "' is not a whole number of frames from 1 to 64";
          },
          "N"));
  app.add_flag(
      "--peak", cl.peak,
      "also say what was live at the peak of active memory and at the end of the replay, "
      "and, for a trace with allocation sites, which sites held it (one more pass over the "
      "trace)");
  app.add_option("--library-frames", cl.library_frames,
                 "frames whose file matches this glob ('*' matches across '/') are library code "
                 "and never name a site, beside the built-in rule (installed packages wherever "
                 "they live, extension modules, system libraries; README \"Which code holds the "
                 "memory\"); repeatable")
      ->allow_extra_args(false);
  app.add_option("--frees-at", cl.frees_at,
                 "a trace with both moments of a free (FORMAT.md version 3): when a block the "
                 "program released is free in the replay. release: at the program's release "
                 "(clReleaseMemObject dropping its last reference, clEnqueueSVMFree); wait: at its "
                 "next wait (clFinish, clWaitForEvents, a blocking call) or the driver's free if "
                 "earlier; driver: when the recording driver gave the memory back. Default: the "
                 "device's profile (commands_finish: promptly is release, at_wait is wait; nvidia: "
                 "release)")
      ->check(CLI::IsMember(
          std::vector<std::string>(std::begin(free_moment_names), std::end(free_moment_names))));
  app.add_option("--write-trace", cl.write_trace_path,
                 "also write the input's events as a clpool trace (converts an RMM CSV); with no "
                 "--capacity or --min-capacity, only converts");
  given.write_format =
      app.add_option(
             "--write-format", cl.write_format,
             "encoding of --write-trace: text (default) or binary (compact, faster to replay; "
             "FORMAT.md)")
          ->check(CLI::IsMember({"text", "binary"}));
  auto* no_progress_opt = app.add_flag(
      "--no-progress", cl.no_progress,
      "no progress on stderr (it is shown only when stderr is a terminal: a bar for the "
      "replay under way and, when there are several, the replays done of those expected "
      "and an ETA)");
  app.add_flag("--progress", cl.force_progress,
               "show progress even when stderr is not a terminal, one line per update (at most "
               "one every 2 s within a replay)")
      ->excludes(no_progress_opt);
}

// After parsing: what was typed, paths as the user meant them, and one list of outputs in the one
// grammar (--html, --json and --svg after --format's values, in that order, as the labels say).
void finish(command_line& cl, const format_aliases& aliases, const given_options& given) {
  cl.profile_given = given.profile->count() > 0;
  cl.write_format_given = given.write_format->count() > 0;
  cl.leading_bits_given = given.leading_bits->count() > 0;
  cl.limit_given = given.limit->count() > 0;
  cl.trim_max_held_given = given.trim_max_held->count() > 0;
  cl.trim_ratio_given = given.trim_ratio->count() > 0;
  cl.granule_given = given.granule->count() > 0;
  // Under `bazel run` the working directory is the runfiles tree: take paths from the user's.
  for (std::string* path : {&cl.trace_path, &cl.rmm_path, &cl.write_trace_path, &cl.mockcl_so}) {
    *path = common::under_working_directory(*path);
  }
  for (std::string& path : cl.diff_paths) path = common::under_working_directory(path);
  const auto file = [](const std::string& path) { return common::under_working_directory(path); };
  for (const std::string& f : aliases.formats) {
    const std::size_t eq = f.find('=');
    cl.formats.push_back(
        {eq == std::string::npos ? f : f.substr(0, eq + 1) + file(f.substr(eq + 1)), ""});
  }
  if (!aliases.html_path.empty())
    cl.formats.push_back({"html=" + file(aliases.html_path), "--format html"});
  if (aliases.json) cl.formats.push_back({"json", "--json"});
  if (!aliases.svg_path.empty()) cl.formats.push_back({"svg=" + file(aliases.svg_path), "--svg"});
  if (cl.profile_text.find('/') != std::string::npos) {
    cl.profile_text = common::under_working_directory(cl.profile_text);
  }
}

}  // namespace

std::optional<int> parse_command_line(int argc, char** argv, command_line& cl) {
  CLI::App app;
  describe_tool(app);
  given_options given;
  format_aliases aliases;
  add_input_options(app, cl);
  add_device_options(app, cl, given);
  add_pool_options(app, cl, given);
  add_output_options(app, cl, aliases, given);
  if (const std::optional<int> rc = common::parse_cli(app, argc, argv, "clpool_replay")) return rc;
  finish(cl, aliases, given);
  return std::nullopt;
}

std::vector<std::uint64_t> parse_trials(const std::string& text) {
  const std::size_t a = text.find(':');
  const std::size_t b = a == std::string::npos ? a : text.find(':', a + 1);
  if (b == std::string::npos || text.find(':', b + 1) != std::string::npos) {
    throw common::usage_error("--trials: '" + common::escape_text(text) +
                              "' is not LO:HI:STEP (e.g. 80MiB:96MiB:64KiB)");
  }
  const std::uint64_t lo =
      common::size_option(text.substr(0, a), "--trials LO", {.device = true, .positive = true});
  const std::uint64_t hi = common::size_option(text.substr(a + 1, b - a - 1), "--trials HI",
                                               {.device = true, .positive = true});
  const std::uint64_t step =
      common::size_option(text.substr(b + 1), "--trials STEP", {.positive = true});
  if (hi < lo)
    throw common::usage_error("--trials: HI (" + std::to_string(hi) + ") is below LO (" +
                              std::to_string(lo) + ")");
  const std::uint64_t count = (hi - lo) / step + 1;
  if (count > max_trials) {
    throw common::usage_error("--trials: " + std::to_string(count) + " trials; at most " +
                              std::to_string(max_trials) + " (a larger STEP or a narrower range)");
  }
  std::vector<std::uint64_t> caps;
  for (std::uint64_t i = 0; i < count; ++i) caps.push_back(lo + i * step);
  return caps;
}

}  // namespace clpool::replay_cli
