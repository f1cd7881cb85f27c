// clpool_first_use: which call reports out-of-memory on an OpenCL device, case by case
// (first_use_matrix.h). Prints a header of '#' lines and a tab-separated table.
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cl_device/cl_device.h"
#include "cl_device/free_memory.h"
#include "common/byte_size.h"
#include "common/cli.h"
#include "common/cli11.h"
#include "common/output_file.h"
#include "common/text_escape.h"
#include "tools/probe/first_use_matrix.h"

namespace {

using namespace clpool::cl_device;
using clpool::common::usage_error;

struct first_use_args {
  std::string platform_text, device_text, free_text, over_text = "64MiB", small_text = "1MiB";
  bool list = false;
};

void add_options(CLI::App& app, first_use_args& a) {
  app.description(
      "clpool_first_use: on an OpenCL device, creates a buffer (and an SVM block) larger than "
      "the device has free and uses it once with each call that can commit memory (read, write, "
      "fill, copies, rect forms, map, migrate, kernel launches, SVM fill, copy, map, migrate and "
      "kernel), and prints which call reports the failure and with which status; each case also "
      "runs on a buffer that fits (the control) and checks that the context is still usable.\n"
      "Sizes accept plain bytes or a B, KiB, MiB, GiB, TiB, PiB, EiB (or K, M, G, T, P, E) "
      "suffix.");
  app.footer(
      "Output: '#' lines (the device, free memory and its source, the sizes), then a table, tab-\n"
      "separated: case, call, create, enqueue, finish, event (statuses; '-' where the step did "
      "not\n"
      "happen, NULL where clSVMAlloc returned NULL), fails_at (create, enqueue, event, finish or\n"
      "none), control (ok or FAILED), usable_after (yes or NO), note.\n\n"
      "Exit codes:\n"
      "  0  every case ran\n"
      "  2  bad input: a bad option, no such platform or device, a device whose free memory is\n"
      "     unknown without --free, or an OpenCL error before the cases (no context, no queue)\n\n"
      "tools/probe/README.md, \"Which call fails\".");
  app.get_formatter()->column_width(30);
  app.add_option("--platform", a.platform_text,
                 "platform: an index or part of its name (case-insensitive); default: the "
                 "platform of the first GPU, else the first");
  app.add_option("--device", a.device_text, "device index on that platform");
  app.add_option("--free", a.free_text,
                 "the device's free memory (default: read from the device before the tool opens "
                 "its context: NVML on NVIDIA, CL_DEVICE_GLOBAL_FREE_MEMORY_AMD where answered)");
  app.add_option("--over", a.over_text,
                 "the buffer under test is this much larger than the free memory (default 64MiB)");
  app.add_option("--small", a.small_text,
                 "the control's size, and the partner buffer of copies (default 1MiB, at least "
                 "4KiB: maps take 4 KiB)");
  app.add_flag("--list", a.list, "list the platforms and devices with their indices, and exit");
}

int run(int argc, char** argv) {
  CLI::App app;
  first_use_args a;
  add_options(app, a);
  if (const std::optional<int> rc = clpool::common::parse_cli(app, argc, argv, "clpool_first_use"))
    return *rc;
  std::optional<std::uint64_t> free_given;
  if (app.count("--free") > 0)
    free_given = clpool::common::size_option(a.free_text, "--free", {.positive = true});
  const std::uint64_t over = clpool::common::size_option(a.over_text, "--over", {.positive = true});
  const std::uint64_t small =
      clpool::common::size_option(a.small_text, "--small", {.positive = true});
  if (small < 4096) throw usage_error("--small: must be at least 4KiB (maps take 4 KiB)");
  std::optional<std::string> platform;
  std::optional<unsigned> device;
  if (app.count("--platform") > 0) platform = a.platform_text;
  if (app.count("--device") > 0) device = parse_device_index(a.device_text, "--device");
  if (a.list) {
    std::cout << list_devices();
    return clpool::common::exit_ok;
  }

  const device_info d = select_device(platform, device);
  std::uint64_t free_bytes = 0;
  std::string free_source = "--free";
  if (free_given) {
    free_bytes = *free_given;
  } else {
    const free_memory_query query = find_free_memory_query(d);
    const std::optional<std::uint64_t> read = query.name.empty() ? std::nullopt : query.read();
    if (!read) {
      throw usage_error("the device '" + d.device_name +
                        "' cannot say how much memory it has free" +
                        (query.note.empty() ? "" : " (" + query.note + ")") + "; give --free");
    }
    // Read without the cases' context open: the buffer under test is `over` larger than this,
    // so a context's own use of device memory (NVIDIA's, ~0.5 GiB) only widens the margin.
    free_bytes = *read;
    free_source = query.name;
  }
  if (free_bytes > (std::uint64_t{1} << 62) - over)
    throw usage_error("--free plus --over is more than 2^62 bytes");
  if (small >= free_bytes + over)
    throw usage_error("--small must be smaller than the buffer under test (--free plus --over, " +
                      std::to_string(free_bytes + over) + " B)");
  const clpool::probe::first_use_sizes sizes{.big = free_bytes + over, .small = small};
  using clpool::common::escape_text;  // a driver's names: no control character in a comment line
  std::cout << "# device: " << escape_text(d.device_name) << " (platform " << d.platform_index
            << ": " << escape_text(d.platform_name) << "; " << escape_text(d.driver_version)
            << ")\n"
            << "# free: " << free_bytes << " B (" << free_source << ")\n"
            << "# buffer under test: " << sizes.big << " B (free + " << over
            << " B); control: " << sizes.small << " B\n";
  if (sizes.big > d.max_alloc) {
    std::cout << "# note: the buffer under test is above CL_DEVICE_MAX_MEM_ALLOC_SIZE ("
              << d.max_alloc
              << " B): a device that enforces that limit refuses it at creation (-61, "
                 "CL_INVALID_BUFFER_SIZE; clSVMAlloc: NULL) whatever its free memory\n";
  }
  const std::vector<clpool::probe::first_use_case> cases =
      clpool::probe::run_first_use_matrix(d.device, sizes);
  std::cout << clpool::probe::format_first_use_tsv(cases);
  const bool any_failed = std::any_of(cases.begin(), cases.end(), [](const auto& c) {
    return clpool::probe::failing_step(c) != "none";
  });
  if (!any_failed) {
    std::cout << "# no case ran out of memory: the device took a buffer " << over
              << " B larger than " << free_bytes
              << " B at every call. It does not enforce its memory (POCL), or it had more free "
                 "than that.\n";
  }
  return clpool::common::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  clpool::common::guard_standard_streams();
  try {
    const int rc = run(argc, argv);
    clpool::common::check_standard_output();
    return rc;
  } catch (const std::exception& e) {
    std::cerr << clpool::common::error_line("clpool_first_use", e.what()) << "\n";
  }
  return clpool::common::exit_usage;
}
