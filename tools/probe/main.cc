// clpool_probe: measures an OpenCL device, through OpenCL alone, into a device-model profile
// that clpool_replay --profile, mockcl's profile= and CLPOOL_LAYER_PROFILE read. README.md.
#include <sys/stat.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "cl_device/cl_device.h"
#include "cl_device/free_memory.h"
#include "common/byte_size.h"
#include "common/cli.h"
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

std::uint64_t parse_max_bytes(const std::string& text) {
  std::string why;
  const std::optional<std::uint64_t> v = clpool::common::parse_byte_size(text, why);
  if (!v) throw usage_error("--max-bytes: '" + text + "' " + why);
  if (*v == 0) throw usage_error("--max-bytes: must be positive, got '" + text + "'");
  return *v;
}

unsigned parse_index(const std::string& text, const char* flag) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) {
    throw usage_error(std::string(flag) + ": '" + text + "' is not an index (0, 1, ...)");
  }
  return static_cast<unsigned>(std::stoul(text));
}

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
    throw usage_error("--output: '" + path + "' exists and is not a profile clpool_probe wrote (its first line " +
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

int run(int argc, char** argv) {
  CLI::App app{
      "clpool_probe: measures an OpenCL device through OpenCL alone (buffers created, used and released) "
      "and writes a device profile for clpool_replay --profile, mockcl (MOCKCL_DEVICES=gpu-16g:profile=FILE) "
      "and the layer (CLPOOL_LAYER_PROFILE=FILE): where out-of-memory appears and with which status, whether "
      "CL_DEVICE_MAX_MEM_ALLOC_SIZE is enforced, the headroom, the page, and the packing of small requests.\n"
      "It fills the device until it refuses: run it on an idle device.\n"
      "Sizes accept plain bytes or a B, KiB, MiB, GiB, TiB (or K, M, G, T) suffix."};
  app.footer(
      "Exit codes:\n"
      "  0  everything was measured (and the profile written with --output)\n"
      "  1  measured but incomplete: the device never refused within --max-bytes (its capacity is not\n"
      "     enforced, e.g. POCL, or larger than the cap) or its answers fit no profile; no profile is\n"
      "     written unless --force\n"
      "  2  bad input: a bad option, no such platform or device, an output that cannot be written, or\n"
      "     an OpenCL error the probe cannot interpret\n\n"
      "What is measured and how: tools/probe/README.md.");
  app.get_formatter()->column_width(30);

  std::string platform_text, device_text, max_bytes_text = "1GiB", output_path, name;
  bool force = false, list = false;
  app.add_option("--platform", platform_text,
                 "platform: an index (0, 1, ...) or part of its name that only one platform has "
                 "(case-insensitive); default: the platform of the first GPU, else the first");
  app.add_option("--device", device_text,
                 "device index on that platform (platform 0 without --platform); default: its first GPU, else "
                 "its first device");
  app.add_option("--max-bytes", max_bytes_text,
                 "never hold more than this in total (default 1GiB); a device that has not refused by "
                 "then cannot be measured (exit 1): raise it to probe a larger device");
  app.add_option("--output", output_path,
                 "write the profile here (atomically; an existing file is replaced only if clpool_probe wrote it, "
                 "or with --force)");
  app.add_option("--name", name, "the profile's name (default: the device's name, as [A-Za-z0-9_.-])");
  app.add_flag("--force", force, "with --output, write the profile even when the measurement is incomplete "
                                 "(fields not measured keep the exact profile's values, and the file says which), "
                                 "and replace a file clpool_probe did not write");
  app.add_flag("--list", list, "list the platforms and devices with their indices, and exit");

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    // A mistyped flag: "did you mean", as every tool says it.
    for (const std::string& extra : app.remaining()) {
      if (extra.size() < 2 || extra[0] != '-') continue;
      std::vector<std::string> names;
      for (const CLI::Option* o : app.get_options()) {
        for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
      }
      throw usage_error(clpool::common::unknown_option(extra, names, "--help"));
    }
    throw usage_error(std::string(e.what()) + " (see --help)");
  } catch (const CLI::ParseError& e) {
    // One line, like every other input error (CLI11's own message spans two).
    throw usage_error(std::string(e.what()) + " (see --help)");
  }

  // Everything the user typed is checked before the device is touched.
  probe_limits limits;
  limits.max_bytes = parse_max_bytes(max_bytes_text);
  std::optional<std::string> platform;
  if (app.count("--platform") > 0) platform = platform_text;
  std::optional<unsigned> device;
  if (app.count("--device") > 0) device = parse_index(device_text, "--device");
  if (!name.empty()) {
    clpool::device_model::device_profile p;
    p.name = name;
    try {
      clpool::device_model::validate_profile(p, "--name");
    } catch (const clpool::device_model::profile_error& e) {
      throw usage_error(e.what());
    }
  }
  if (force && output_path.empty()) throw usage_error("--force needs --output");
  std::optional<clpool::common::atomic_output_file> out;
  if (!output_path.empty()) {
    refuse_foreign_output(output_path, force);
    out.emplace(output_path, "--output");  // fails now on a directory or an unwritable place
  }
  if (list) {
    std::cout << list_devices();
    return exit_measured;
  }

  const device_info d = select_device(platform, device);
  probe_context c;
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
  const free_memory_query query = find_free_memory_query(d);
  c.free_at_start = d.global_mem;
  if (!query.name.empty()) {
    if (const auto f = query.read()) {
      c.free_at_start = *f;
      c.free_source = query.name;
      limits.at_full = [&] { c.free_at_full = query.read(); };
    }
  }
  limits.free_at_start = c.free_at_start;
  limits.max_alloc = d.max_alloc;

  const auto start = std::chrono::steady_clock::now();
  measurement m;
  {
    cl_port port(d.device);
    m = measure(port, limits);
    for (const first_use_call& f : port.first_use_calls()) {
      c.first_use_calls.push_back(f.call + ": " + std::to_string(f.enqueue_status) +
                                  (f.enqueue_status == 0 ? ", event " + std::to_string(f.event_status) : ""));
    }
  }  // every buffer, the queue and the context released
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const clpool::device_model::device_profile profile = m.profile(name.empty() ? profile_name_for(d.device_name) : name);
  std::cout << format_report(c, m);
  if (m.complete) std::cout << "profile:\n" << clpool::device_model::format_profile(profile);
  if (out) {
    if (m.complete || force) {
      out->stream() << format_profile_file(c, m, profile);
      out->commit();
      std::cout << "wrote " << output_path << "\n";
    } else {
      std::cout << "no profile written to " << output_path << " (incomplete; --force writes it anyway)\n";
    }
  }
  return m.complete ? exit_measured : exit_incomplete;
}

}  // namespace

int main(int argc, char** argv) {
  clpool::common::guard_standard_streams();
  try {
    const int rc = run(argc, argv);
    clpool::common::check_standard_output();  // the report, and what --help and --list print
    return rc;
  } catch (const std::exception& e) {
    std::cerr << "clpool_probe: error: " << e.what() << "\n";
  }
  return exit_bad_input;
}
