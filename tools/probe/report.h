// What clpool_probe prints and writes: the report with its evidence, and the profile file (the
// profile as format_profile writes it, under a comment header that load_profile skips).
#ifndef CLPOOL_TOOLS_PROBE_REPORT_H_
#define CLPOOL_TOOLS_PROBE_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/probe/measure.h"

namespace clpool::probe {

// Everything the report says besides the measurement itself.
struct probe_context {
  std::string device_name, platform_name, vendor, driver_version, device_version;
  unsigned platform_index = 0, device_index = 0;
  std::uint64_t global_mem = 0, max_alloc = 0, max_bytes = 0;
  std::uint64_t free_at_start = 0;
  std::string free_source;  // the query's name, or "" for CL_DEVICE_GLOBAL_MEM_SIZE assumed free
  std::optional<std::uint64_t>
      free_before_context;                    // the query's answer before the probe's context
  std::optional<std::uint64_t> free_at_full;  // the query's answer when the fill was fullest
  std::vector<std::string> first_use_calls;   // "clEnqueueWriteBuffer: -4", ...
  std::string date;                           // UTC, ISO 8601
  double seconds = 0;
  bool head_printed = false;  // the report's head went out before the fill (format_report_head)
};

// The first line of every profile file clpool_probe writes ("# Measured by clpool_probe on DATE
// ..."): --output replaces only a file that begins with it.
inline constexpr std::string_view profile_marker = "# Measured by clpool_probe";

// Whether `first_line` is the first line of a profile clpool_probe wrote.
bool written_by_probe(std::string_view first_line);

// The device's name as a profile name: [A-Za-z0-9_.-], at most 64 characters, never a built-in
// profile's name (a device called "nvidia" gives "nvidia-probed").
std::string profile_name_for(const std::string& device_name);

// The report's lines (each ends in '\n'): what was measured, with the evidence, and why the
// measurement is incomplete where it is. The head (the device, its free memory, max alloc) is
// known before the fill, and printed then; the tail is the rest.
std::string format_report(const probe_context& c, const measurement& m);
std::string format_report_head(const probe_context& c, const measurement& m);
std::string format_report_tail(const probe_context& c, const measurement& m);

// Why `m` is incomplete (what stopped it, or the keys it did not measure); "" when not.
std::string incomplete_text(const measurement& m);

// The profile file: a comment header (device, driver, date, evidence) and the profile.
std::string format_profile_file(const probe_context& c, const measurement& m,
                                const device_profile& p);

// Two profiles side by side, a row per key (profile_fields: sizes in bytes, statuses as
// numbers) saying "same" or "DIFFERENT" (`name` is shown, not compared), under a header naming
// them `label_a` and `label_b`: what clpool_probe --compare prints. Each line ends in '\n'.
std::string format_comparison(std::string_view label_a, const device_profile& a,
                              std::string_view label_b, const device_profile& b);

}  // namespace clpool::probe

#endif  // CLPOOL_TOOLS_PROBE_REPORT_H_
