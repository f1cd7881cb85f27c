// clpool_replay: reproduce a program's out-of-memory from its allocation trace, without a GPU.
// Everything a user can type is documented in --help; README.md shows the output.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/cli.h"
#include "tools/replay/config.h"
#include "tools/replay/min_capacity.h"
#include "tools/replay/mockcl_device.h"
#include "tools/replay/opencl_device.h"
#include "tools/replay/outputs.h"
#include "tools/replay/progress.h"
#include "tools/replay/replay.h"
#include "tools/replay/report_format.h"
#include "tools/replay/svg.h"
#include "trace/rmm_import.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace {

using namespace clpool::replay;
namespace trace = clpool::trace;

// The shared conventions (common/cli.h): 1 is replay's finding, an out-of-memory reproduced.
constexpr int exit_clean = clpool::common::exit_ok;
constexpr int exit_oom = clpool::common::exit_finding;
constexpr int exit_bad_input = clpool::common::exit_usage;
using clpool::common::under_working_directory;
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

std::uint64_t positive_bytes(const std::string& text, const char* flag, bool device = false) {
  const std::uint64_t v = device ? parse_device_bytes(text, flag) : parse_bytes(text, flag);
  if (v == 0) throw config_error(std::string(flag) + ": must be positive, got '" + text + "'");
  return v;
}

int run(int argc, char** argv) {
  CLI::App app{
      "clpool_replay: replays an allocation trace through the clpool memory pool (or no pool) on a "
      "device of a given capacity (the built-in simulated device, or a mockcl OpenCL device through "
      "the ICD loader), and reports whether and why it runs out of memory.\n"
      "Sizes accept plain bytes or a B, KiB, MiB, GiB or TiB suffix, or k, m, g, t, any case (4GiB, "
      "512MiB, 256m, 1073741824); decimal KB, MB, GB, TB are refused as ambiguous. A device is at "
      "most 2^62 bytes."};
  app.footer(
      "Configurations (--compare): 'nopool', 'pool', or 'pool:' followed by comma-separated options "
      "lb=N, limit=SIZE, trim-max-held=SIZE, trim-ratio=R, e.g. pool:lb=2,trim-ratio=0.5\n\n"
      "Exit codes:\n"
      "  0  every replay ran cleanly (and --min-capacity found a capacity for every configuration)\n"
      "  1  a replay reproduced an out-of-memory (or no capacity suffices for some configuration)\n"
      "  2  bad input: a bad option value, an unreadable or malformed trace or CSV\n\n"
      "Trace format: trace/FORMAT.md. Report fields: tools/replay/README.md.");
  app.get_formatter()->column_width(34);

  input in;
  std::string capacity_text, limit_text, trim_max_held_text, granule_text = "1MiB", semantics_text;
  std::string profile_text = "nvidia";
  std::string svg_path, write_trace_path, device_text = "sim", mockcl_so, host_capacity_text;
  unsigned leading_bits = clpool::default_leading_bits;
  double trim_ratio = -1;
  bool no_pool = false, min_capacity = false, json = false, no_progress = false,
       force_progress = false;
  std::vector<std::string> compare;

  auto* trace_opt = app.add_option("trace", in.trace_path,
                                   "clpool trace file to replay, text or binary (trace/FORMAT.md); '-' reads stdin");
  app.add_option("--rmm-csv", in.rmm_path,
                 "read an RMM logging_resource_adaptor CSV log (Thread,Time,Action,Pointer,Size,Stream) "
                 "instead of a clpool trace")
      ->excludes(trace_opt);
  app.add_option("--capacity", capacity_text, "device capacity, e.g. 4GiB; required unless --min-capacity");
  app.add_option("--profile", profile_text,
                 "how the device commits memory and reports running out: a built-in profile (nvidia, "
                 "the default: 2 MiB pages, small requests packed at 512 B, 2.625 MiB headroom, "
                 "out-of-memory at first use; pocl; exact: every byte counts once, no headroom) or "
                 "a profile file (device_model/profile.h has the grammar). With nvidia, --capacity "
                 "is the free memory the program starts with, as nvidia-smi shows it");
  auto* semantics_opt = app.add_option("--semantics", semantics_text,
                 "immediate: allocation fails at once when the device is full (the pool can free "
                 "held blocks and retry); deferred: allocation succeeds and fails at first use "
                 "(the pool cannot help); host_oom: like immediate, reported as "
                 "CL_OUT_OF_HOST_MEMORY (mockcl's host_oom). Default: where the profile's device fails (nvidia: deferred)")
      ->check(CLI::IsMember({"immediate", "deferred", "host_oom"}));
  app.add_option("--device", device_text,
                 "sim (default): the built-in simulated device, pure bookkeeping, fastest (use it for "
                 "--min-capacity on long traces and for benchmarks); mockcl: every block is a real "
                 "cl_mem in the mock OpenCL ICD (//mockcl:libmockcl.so) through the system ICD loader, "
                 "on a mock device with this capacity and semantics (pool/opencl's immediate or "
                 "deferred buffer allocator; deferred blocks are migrated once to charge them); "
                 "opencl[:PLATFORM[:INDEX]]: a real OpenCL device (PLATFORM an index or part of its "
                 "name), with a ballast of real buffers so that the replay starts with exactly "
                 "--capacity free (free memory is measured where the device can say, else taken "
                 "to be its reported size); --min-capacity searches up to what it has free");
  app.add_option("--mockcl-so", mockcl_so,
                 "--device mockcl: path of libmockcl.so (default: $LIBMOCKCL_SO, else the copy in the "
                 "binary's runfiles)");
  app.add_option("--host-capacity", host_capacity_text,
                 "budget for `host` (ALLOC_HOST_PTR, pinned) blocks, which never count against "
                 "--capacity or go through the pool, as on mockcl and under the layer's budget "
                 "(default unlimited)");
  auto* no_pool_opt = app.add_flag("--no-pool", no_pool, "replay without a pool: every request goes to the device");
  auto* lb_opt = app.add_option("--leading-bits", leading_bits,
                                "pool bin precision: 0-12 leading bits after the top bit (default 4, "
                                "PyOpenCL's); more bits, less rounding, fewer hits")
                     ->check(CLI::Range(0u, clpool::max_leading_bits));
  auto* limit_opt = app.add_option("--limit", limit_text, "pool limit: managed bytes never exceed this");
  auto* tmh_opt = app.add_option("--trim-max-held", trim_max_held_text,
                                 "trim policy: hold at most this many bytes of freed blocks (0 = hold nothing)");
  auto* tr_opt = app.add_option("--trim-ratio", trim_ratio,
                                "trim policy: hold at most R x active bytes (R >= 0)");
  app.add_flag("--min-capacity", min_capacity,
               "find by bisection the smallest capacity (a multiple of --granule) that replays with "
               "no out-of-memory, for each configuration");
  app.add_option("--granule", granule_text, "resolution of --min-capacity (default 1MiB)");
  auto* cmp_opt = app.add_option("--compare", compare,
                                 "replay several configurations side by side, e.g. --compare "
                                 "nopool pool:lb=4 pool:lb=2,trim-ratio=0.5")
                      ->expected(1, -1);
  for (auto* o : {no_pool_opt, lb_opt, limit_opt, tmh_opt, tr_opt}) o->excludes(cmp_opt);
  app.add_flag("--json", json, "print the report as JSON on stdout instead of text");
  app.add_option("--svg", svg_path,
                 "write a self-contained SVG timeline of active, held and managed bytes against "
                 "capacity, with the out-of-memory point marked (first configuration)");
  app.add_option("--write-trace", write_trace_path,
                 "also write the input's events as a clpool trace (converts an RMM CSV); with no "
                 "--capacity or --min-capacity, only converts");
  std::string write_format = "text";
  auto* write_format_opt = app.add_option("--write-format", write_format,
                 "encoding of --write-trace: text (default) or binary (compact, faster to replay; "
                 "FORMAT.md)")
      ->check(CLI::IsMember({"text", "binary"}));
  auto* no_progress_opt = app.add_flag(
      "--no-progress", no_progress,
      "no progress on stderr (it is shown only when stderr is a terminal: a bar for the "
      "replay under way and, when there are several, the replays done of those expected "
      "and an ETA)");
  app.add_flag("--progress", force_progress,
               "show progress even when stderr is not a terminal, one line per update (at most "
               "one every 2 s within a replay)")
      ->excludes(no_progress_opt);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      for (const std::string& extra : app.remaining()) {
        if (extra.size() < 2 || extra[0] != '-') continue;
        std::vector<std::string> names;
        for (const CLI::Option* o : app.get_options()) {
          for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
        }
        std::cerr << "clpool_replay: error: " << clpool::common::unknown_option(extra, names, "--help") << "\n";
        return exit_bad_input;
      }
    }
    const int rc = app.exit(e);
    return rc == 0 ? exit_clean : exit_bad_input;
  }
  // Under `bazel run` the working directory is the runfiles tree: take paths from the user's.
  for (std::string* path : {&in.trace_path, &in.rmm_path, &svg_path, &write_trace_path, &mockcl_so}) {
    *path = under_working_directory(*path);
  }
  if (profile_text.find('/') != std::string::npos) profile_text = under_working_directory(profile_text);

  // Validate everything before the first replay: a typo should not cost a long run.
  if (in.trace_path.empty() && in.rmm_path.empty()) {
    throw usage_error("no input: give a trace file, or --rmm-csv FILE (see --help)");
  }
  std::optional<std::uint64_t> capacity;
  if (!capacity_text.empty()) capacity = positive_bytes(capacity_text, "--capacity", true);
  const std::uint64_t granule = positive_bytes(granule_text, "--granule");
  check_granule(granule, "--granule");
  if (write_format_opt->count() > 0 && write_trace_path.empty()) {
    throw usage_error("--write-format needs --write-trace");
  }
  // Every file clpool_replay reads, against every file it writes (common/output_file.h).
  refuse_clobbering({{"trace", in.trace_path},
                     {"--rmm-csv", in.rmm_path},
                     {"--profile", clpool::device_model::names_profile_file(profile_text) ? profile_text : ""},
                     {"--mockcl-so", mockcl_so}},
                    {.svg = svg_path, .write_trace = write_trace_path});
  if (!capacity && !min_capacity && write_trace_path.empty()) {
    throw usage_error("--capacity is required (or use --min-capacity to find one)");
  }
  if (!std::isfinite(trim_ratio) || (tr_opt->count() > 0 && trim_ratio < 0)) {
    throw usage_error("--trim-ratio: must be a finite number >= 0");
  }
  const clpool::device_model::device_profile profile = clpool::device_model::load_profile(profile_text);
  const alloc_semantics semantics = semantics_opt->count() > 0 ? *parse_semantics(semantics_text)
                                                              : semantics_of(profile);
  const bool real_device = device_text.rfind("opencl", 0) == 0;
  if (device_text != "sim" && device_text != "mockcl" && !real_device) {
    throw usage_error("--device: '" + device_text + "' is not sim, mockcl or opencl[:PLATFORM[:INDEX]]");
  }
  if (!mockcl_so.empty() && device_text != "mockcl") {
    throw usage_error("--mockcl-so needs --device mockcl");
  }
  mockcl_backend* mock = nullptr;
  if (device_text == "mockcl") mock = &mockcl_backend::open(find_mockcl_so(mockcl_so));
  opencl_backend* real = nullptr;
  if (real_device) {
    real = &opencl_backend::open(parse_opencl_target(device_text));
    std::cerr << "clpool_replay: device " << real->description() << "\n";
    if (capacity && *capacity > real->free_at_start()) {
      throw usage_error("--capacity " + format_bytes_exact(*capacity) + ": more than the device has free (" +
                        real->description() + ")");
    }
  }
  // After the device's own checks, so that a wrong --mockcl-so or device is named first.
  if (capacity) {
    if (std::string why = clpool::device_model::capacity_refusal(profile, *capacity, "--capacity"); !why.empty()) {
      throw usage_error(why);
    }
  }
  const std::uint64_t host_capacity =
      host_capacity_text.empty() ? clpool::unlimited : parse_bytes(host_capacity_text, "--host-capacity");
  const auto make_spec = [&](std::uint64_t cap) {
    device_spec d = mock != nullptr   ? mock->spec(cap, semantics, profile_text)
                    : real != nullptr ? real->spec(cap, semantics, profile)
                                      : device_spec{cap, semantics};
    d.host_capacity = host_capacity;
    d.profile = profile;
    return d;
  };

  std::vector<replay_config> configs;
  if (!compare.empty()) {
    for (const std::string& c : compare) configs.push_back(parse_config(c));
  } else {
    replay_config c;
    c.use_pool = !no_pool;
    if (no_pool && (lb_opt->count() || limit_opt->count() || tmh_opt->count() || tr_opt->count())) {
      throw usage_error("--no-pool cannot be combined with pool options (--leading-bits, --limit, --trim-*)");
    }
    c.leading_bits = leading_bits;
    if (!limit_text.empty()) c.limit = positive_bytes(limit_text, "--limit");
    if (tmh_opt->count()) c.trim.max_held_bytes = parse_bytes(trim_max_held_text, "--trim-max-held");
    if (tr_opt->count()) c.trim.max_held_to_active_ratio = trim_ratio;
    configs.push_back(c);
  }
  const std::size_t passes = configs.size() * ((capacity ? 1 : 0) + (min_capacity ? 1 : 0));
  if ((in.trace_path == "-" || in.rmm_path == "-") && (passes > 1 || min_capacity || !write_trace_path.empty())) {
    throw usage_error("standard input can be read only once; --min-capacity, --compare and "
                      "--write-trace need a file");
  }

  if (!write_trace_path.empty()) {
    in.with_source([&](auto& source) {
      trace::trace_writer writer(write_trace_path, write_format == "binary"
                                                       ? trace::trace_encoding::binary
                                                       : trace::trace_encoding::text,
                                  "--write-trace");
      writer.comment("source", in.rmm_path.empty() ? "clpool trace " + in.trace_path : "rmm csv " + in.rmm_path);
      trace::trace_event e;
      while (source.next(e)) writer.write(e);
      writer.commit();
      return 0;
    });
    if (!capacity && !min_capacity) return exit_clean;
  }

  progress_printer printer(
      choose_progress_style(force_progress, no_progress, ::isatty(STDERR_FILENO) == 1), stderr);
  run_progress overall(configs.size());
  const bool several_replays = passes > 1 || min_capacity;
  const auto replay_once = [&](const replay_config& c, std::uint64_t cap, bool timeline,
                               const std::string& label) {
    replay_options options;
    options.timeline = timeline;
    progress_fn progress;
    if (printer.enabled()) {
      const auto show = [&printer, &overall, several_replays, label](
                            std::uint64_t done, std::uint64_t total, bool first) {
        const double fraction =
            total == 0 ? 0.0 : static_cast<double>(done) / static_cast<double>(total);
        printer.show(progress_bar(done, total) + " " + label +
                         (several_replays ? "; " + overall.summary(fraction) : std::string()),
                     first);
      };
      show(0, 1, true);
      progress = [show](std::uint64_t done, std::uint64_t total) { show(done, total, false); };
    }
    replay_report r = in.with_source([&](auto& source) {
      return replay_stream(source, c, make_spec(cap), options, progress);
    });
    overall.end_replay();
    printer.clear();
    return r;
  };

  std::vector<config_result> results;
  bool any_oom = false;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    config_result res;
    res.config = configs[i];
    const bool picture = i == 0 && !svg_path.empty();
    if (capacity) {
      // Alone, it is this configuration's only replay; before a search, the search's are unknown.
      overall.start_replay(i, min_capacity ? 0 : 1);
      res.replay = replay_once(configs[i], *capacity, picture, to_string(configs[i]));
      any_oom |= !res.replay->ok();
    }
    if (min_capacity) {
      std::uint64_t n = 0;
      res.min_capacity = find_min_capacity(
          [&](std::uint64_t cap) {
            return replay_once(configs[i], cap, picture && !capacity,
                               to_string(configs[i]) + " min-capacity replay " + std::to_string(++n));
          },
          granule, real != nullptr ? real->free_at_start() : 0,
          [&](std::uint64_t left) { overall.start_replay(i, left); });
      any_oom |= !res.min_capacity->found;
    }
    results.push_back(std::move(res));
  }
  const int rc = any_oom ? exit_oom : exit_clean;

  if (!svg_path.empty()) {
    const config_result& first = results[0];
    const replay_report* r = first.replay ? &*first.replay : nullptr;
    std::string which = "the replay at --capacity";
    if (r == nullptr && first.min_capacity) {
      const auto& m = *first.min_capacity;
      r = m.one_granule_below ? &*m.one_granule_below : (m.at_result ? &*m.at_result : nullptr);
      which = m.one_granule_below ? "the failing replay one granule below the minimum capacity"
                                  : "the clean replay at the minimum capacity";
    }
    if (r != nullptr) {
      write_text_file("--svg", svg_path, render_svg(*r, "clpool_replay: " + in.name()));
      std::cerr << "clpool_replay: --svg: wrote " << svg_path << ": " << which << ", "
                << to_string(first.config) << " on " << format_bytes_exact(r->device.capacity)
                << "\n";
    } else {
      std::cerr << "clpool_replay: --svg: nothing written: no replay of " << to_string(first.config)
                << " to show\n";
    }
  }
  if (const std::string warning = pooled_trace_warning(results); !warning.empty()) {
    std::cerr << "clpool_replay: " << warning;
  }
  if (json) {
    std::cout << to_json(results, in.name(), rc).dump(2) << "\n";
  } else if (results.size() > 1) {
    std::cout << format_table(results, in.name());
  } else {
    std::cout << format_text(results[0], in.name());
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const clpool::trace::trace_error& e) {
    std::cerr << "clpool_replay: error: " << e.what() << "\n";
    if (e.line() > 1) {
      std::cerr << "clpool_replay: " << e.events_read() << " valid events came before it\n";
    }
  } catch (const config_error& e) {
    std::cerr << "clpool_replay: error: " << e.what() << "\n";
  } catch (const usage_error& e) {
    std::cerr << "clpool_replay: error: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "clpool_replay: error: " << e.what() << "\n";
  }
  return exit_bad_input;
}
