// clpool_probe: measures an OpenCL device, through OpenCL alone, into a device-model profile
// that clpool_replay --profile, mockcl's profile= and CLPOOL_LAYER_PROFILE read. README.md.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cl_device/cl_device.h"
#include "cl_device/free_memory.h"
#include "common/byte_size.h"
#include "common/cli.h"
#include "common/cli11.h"
#include "common/input_file.h"
#include "common/output_file.h"
#include "device_model/profile.h"
#include "tools/probe/cl_port.h"
#include "tools/probe/measure.h"
#include "tools/probe/report.h"

namespace {

using namespace clpool::probe;
using namespace clpool::cl_device;
using clpool::common::usage_error;

// The shared conventions (common/cli.h): 1 is the probe's finding, an incomplete measurement.
constexpr int exit_measured = clpool::common::exit_ok;
constexpr int exit_incomplete = clpool::common::exit_finding;
constexpr int exit_bad_input = clpool::common::exit_usage;

// --output replaces only a profile clpool_probe wrote (its first line is profile_marker), so a
// hand-written profile's comments, or any other file, survive unless --force says otherwise.
// An empty file holds nothing to lose.
void refuse_foreign_output(const std::string& path, bool force) {
  struct stat st;
  if (force || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return;
  // The first line only, with a bound: a huge file with no newline is not read whole.
  std::string why;
  const std::string first_line = clpool::common::read_first_line(path, 4096, why).value_or("");
  if (!written_by_probe(first_line)) {
    throw usage_error("--output: '" + path +
                      "' exists and is not a profile clpool_probe wrote (its first line " +
                      "does not start with '" + std::string(profile_marker) +
                      "'); refusing to overwrite it (--force replaces it)");
  }
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// What the user typed.
struct probe_args {
  std::string platform_text, device_text, max_bytes_text = "1GiB", output_path, name;
  bool force = false, list = false;
  std::vector<std::string> compare;  // --compare A B: two profiles, no device
};

void add_options(CLI::App& app, probe_args& a) {
  app.description(
      "clpool_probe: measures an OpenCL device through OpenCL alone (buffers created, used and "
      "released) "
      "and writes a device profile for clpool_replay --profile, mockcl "
      "(MOCKCL_DEVICES=gpu-16g:profile=FILE) "
      "and the layer (CLPOOL_LAYER_PROFILE=FILE): where out-of-memory appears and with which "
      "status, whether "
      "CL_DEVICE_MAX_MEM_ALLOC_SIZE is enforced, the headroom, the page, and the packing of small "
      "requests.\n"
      "It fills the device until it refuses: run it on an idle device.\n"
      "Sizes accept plain bytes or a B, KiB, MiB, GiB, TiB, PiB, EiB (or K, M, G, T, P, E) "
      "suffix.");
  app.footer(
      "Exit codes:\n"
      "  0  everything was measured (and the profile written with --output); but\n"
      "     commands_finish, which no probe can see: promptly is written (NVIDIA's)\n"
      "  1  measured but incomplete: a key that could be measured was not, the device never\n"
      "     refused within --max-bytes (its capacity is not enforced, e.g. POCL, or larger\n"
      "     than the cap), or its answers fit no profile; no profile is written unless --force\n"
      "  2  bad input: a bad option, no such platform or device, an output that cannot be written, "
      "or\n"
      "     an OpenCL error the probe cannot interpret\n"
      "With --compare: 0 the two profiles describe the same device, 1 a key differs, 2 bad "
      "input.\n\n"
      "What is measured and how: tools/probe/README.md.");
  app.get_formatter()->column_width(30);

  app.add_option("--platform", a.platform_text,
                 "platform: an index (0, 1, ...) or part of its name that only one platform has "
                 "(case-insensitive); default: the platform of the first GPU, else the first");
  app.add_option(
      "--device", a.device_text,
      "device index on that platform (platform 0 without --platform); default: its first GPU, else "
      "its first device");
  app.add_option(
      "--max-bytes", a.max_bytes_text,
      "never hold more than this in total (default 1GiB); a device that has not refused by "
      "then cannot be measured (exit 1): raise it to probe a larger device");
  app.add_option("--output", a.output_path,
                 "write the profile here (atomically; an existing file is replaced only if "
                 "clpool_probe wrote it, "
                 "or with --force)");
  app.add_option("--name", a.name,
                 "the profile's name (default: the device's name, as [A-Za-z0-9_.-])");
  app.add_flag("--force", a.force,
               "with --output, write the profile even when the measurement is incomplete "
               "(keys not measured keep the exact profile's values, and the file says which), "
               "and replace a file clpool_probe did not write");
  app.add_flag("--list", a.list, "list the platforms and devices with their indices, and exit");
  app.add_option("--compare", a.compare,
                 "compare two profiles (built-in names or files, e.g. a shipped one and one this "
                 "tool wrote) key by key, sizes in bytes, and exit; touches no device")
      ->expected(2)
      ->type_name("A B");
}

// --compare and --list measure nothing: a measuring option beside them would be silently ignored.
void refuse_measuring_options(const CLI::App& app, const std::string& why) {
  for (const char* other :
       {"--platform", "--device", "--max-bytes", "--output", "--name", "--force", "--list"}) {
    if (app.count(other) > 0 && why.rfind(other, 0) != 0) {
      throw usage_error(why + ": it takes no " + other);
    }
  }
}

// --compare A B: a row per key, and whether the two describe the same device (the name aside).
int compare_profiles(const CLI::App& app, const probe_args& a) {
  refuse_measuring_options(app, "--compare measures no device");
  const auto load = [](const std::string& name_or_path) {
    try {
      return clpool::device_model::load_profile(name_or_path);
    } catch (const clpool::device_model::profile_error& e) {
      throw usage_error(std::string("--compare: ") + e.what());
    }
  };
  const device_profile x = load(a.compare[0]), y = load(a.compare[1]);
  const auto label = [](const std::string& s) { return s.substr(s.find_last_of('/') + 1); };
  std::cout << format_comparison(label(a.compare[0]), x, label(a.compare[1]), y);
  const std::vector<std::string_view> keys = clpool::device_model::differing_fields(x, y);
  if (keys.empty()) {
    std::cout << "the same device\n";
    return clpool::common::exit_ok;
  }
  std::cout << keys.size() << (keys.size() == 1 ? " key differs:" : " keys differ:");
  for (std::string_view k : keys) std::cout << " " << k;
  std::cout << "\n";
  return clpool::common::exit_finding;
}

// Everything the user typed, checked before the device is touched.
struct probe_plan {
  probe_limits limits;
  std::optional<std::string> platform;
  std::optional<unsigned> device;
  std::optional<clpool::common::atomic_output_file> out;
};

void plan_probe(const CLI::App& app, const probe_args& a, probe_plan& p) {
  p.limits.max_bytes =
      clpool::common::size_option(a.max_bytes_text, "--max-bytes", {.positive = true});
  if (app.count("--platform") > 0) p.platform = a.platform_text;
  if (app.count("--device") > 0) p.device = parse_device_index(a.device_text, "--device");
  if (!a.name.empty()) {
    clpool::device_model::device_profile profile;
    profile.name = a.name;
    try {
      clpool::device_model::validate_profile(profile, "--name");
    } catch (const clpool::device_model::profile_error& e) {
      std::string what = e.what();  // "--name: name: 'x' ...": the flag names it once
      if (what.rfind("--name: name: ", 0) == 0) what.erase(7, 6);
      throw usage_error(what);
    }
    // A profile file may not take a built-in's name (load_profile): reports would call it that.
    const std::vector<std::string> builtins = clpool::device_model::builtin_profile_names();
    if (std::find(builtins.begin(), builtins.end(), a.name) != builtins.end()) {
      std::string names;
      for (const std::string& n : builtins) names += (names.empty() ? "" : ", ") + n;
      throw usage_error("--name: '" + a.name + "' is a built-in profile's name (" + names +
                        "): a measured profile needs a name of its own");
    }
  }
  if (a.force && a.output_path.empty()) throw usage_error("--force needs --output");
  if (!a.output_path.empty()) {
    refuse_foreign_output(a.output_path, a.force);
    p.out.emplace(a.output_path, "--output");  // fails now on a directory or an unwritable place
  }
}

// What the report says of the device, and the limits it is measured within (free memory is read
// by measure_device, with the context open).
void describe(const device_info& d, probe_limits& limits, probe_context& c) {
  c.device_name = d.device_name;
  c.platform_name = d.platform_name;
  c.vendor = d.vendor;
  c.driver_version = d.driver_version;
  c.device_version = d.device_version;
  c.platform_index = d.platform_index;
  c.device_index = d.device_index;
  c.global_mem = d.global_mem;
  c.max_alloc = d.max_alloc;
  c.max_bytes = limits.max_bytes;
  c.date = utc_now();
  c.free_at_start = d.global_mem;
  limits.max_alloc = d.max_alloc;
  limits.gpu = d.gpu;
}

// Each line of the report as it is known, flushed: what was measured survives a driver that
// aborts the process (POCL asserts when the host runs out during the fill).
void print_lines(const std::string& text) {
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string::npos ? text.size() : nl + 1;
    std::cout << text.substr(start, end - start) << std::flush;
    start = end;
  }
}

// Measures the device, every buffer, the queue and the context released before it returns.
// Free memory comes from `query` where the device has one.
measurement measure_device(const device_info& d, const free_memory_query& query,
                           probe_limits& limits, probe_context& c) {
  const std::optional<std::uint64_t> before_context =
      query.name.empty() ? std::nullopt : query.read();
  const auto start = std::chrono::steady_clock::now();
  measurement m;
  {
    cl_port port(d.device);
    // Free memory at start is read with the probe's context and queue open: a driver's context
    // takes device memory of its own (NVIDIA's does), which is not the device's headroom.
    if (before_context) {
      c.free_at_start = query.read().value_or(*before_context);
      c.free_before_context = before_context;
      c.free_source = query.name;
      limits.at_full = [&c, &query] { c.free_at_full = query.read(); };
    }
    limits.free_at_start = c.free_at_start;
    limits.after_max_alloc = [&c](const measurement& so_far) {
      print_lines(format_report_head(c, so_far));
      c.head_printed = true;
    };
    m = measure(port, limits);
    for (const first_use_call& f : port.first_use_calls()) {
      c.first_use_calls.push_back(
          f.call + ": " + std::to_string(f.enqueue_status) +
          (f.enqueue_status == 0 ? ", event " + std::to_string(f.event_status) : ""));
    }
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return m;
}

int run(int argc, char** argv) {
  CLI::App app;
  probe_args a;
  add_options(app, a);
  if (const std::optional<int> rc = clpool::common::parse_cli(app, argc, argv, "clpool_probe"))
    return *rc;
  if (!a.compare.empty()) return compare_profiles(app, a);
  if (a.list) {
    refuse_measuring_options(app, "--list measures no device");
    std::cout << list_devices();
    return exit_measured;
  }
  probe_plan p;
  plan_probe(app, a, p);

  const device_info d = select_device(p.platform, p.device);
  const free_memory_query query = find_free_memory_query(d);
  probe_context c;
  describe(d, p.limits, c);
  const measurement m = measure_device(d, query, p.limits, c);

  const clpool::device_model::device_profile profile =
      m.profile(a.name.empty() ? profile_name_for(d.device_name) : a.name);
  if (!c.head_printed) print_lines(format_report_head(c, m));
  print_lines(format_report_tail(c, m));
  if (m.complete) print_lines("profile:\n" + clpool::device_model::format_profile(profile));
  if (p.out) {
    if (m.measured_all() || a.force) {
      p.out->stream() << format_profile_file(c, m, profile);
      p.out->commit();
      std::cout << "wrote " << a.output_path << "\n";
    } else {
      std::cout << "no profile written to " << a.output_path
                << " (incomplete; --force writes it anyway)\n";
    }
  }
  return m.measured_all() ? exit_measured : exit_incomplete;
}

}  // namespace

int main(int argc, char** argv) {
  clpool::common::guard_standard_streams();
  try {
    const int rc = run(argc, argv);
    clpool::common::check_standard_output();  // the report, and what --help and --list print
    return rc;
  } catch (const std::exception& e) {
    std::cerr << clpool::common::error_line("clpool_probe", e.what()) << "\n";
  }
  return exit_bad_input;
}
