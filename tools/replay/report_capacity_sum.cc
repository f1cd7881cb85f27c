// The capacity at an out-of-memory as a sum whose lines add up (replay/result.h capacity_sum),
// in the words the text report and the page share: its rows, what the failing request needed,
// and what the sum leaves out.
#include <string>
#include <vector>

#include "common/text_escape.h"
#include "tools/replay/report_format.h"

namespace clpool::replay_cli {

using replay::capacity_sum;
using replay::format_bytes;
using replay::oom_point;
using replay::oom_site;
using replay::replay_report;

namespace {
const auto both = bytes_both;
}  // namespace

std::string capacity_request_text(const capacity_sum& s, const replay_report& r) {
  const oom_point& p = *r.oom;
  const bool pool = r.config.use_pool;
  if (p.site == oom_site::limit) {
    return "the failing request's pool bin, " + both(s.request_rounded) +
           ", would take the pool's " + both(p.managed_bytes) + " past its limit of " +
           both(p.limit);
  }
  if (p.site == oom_site::host) {
    return "the failing request is host-pinned memory, refused by its own budget, not this "
           "capacity";
  }
  std::string how;
  if (s.request_takes_new_shared_page) {
    how = "a new " + format_bytes(s.request_device) + " page: no shared page had room for its " +
          format_bytes(s.request_rounded);
  } else if (s.request_device != s.request_rounded) {
    how = format_bytes(s.request_rounded) + (pool ? " in its pool bin" : " requested") +
          ", in the " + common::escape_text(r.device.profile.name) + " profile's " +
          format_bytes(r.device.profile.page) + " pages";
  } else if (pool && s.request_rounded != p.requested_bytes) {
    how = "its pool bin";
  }
  std::string line = "the failing request needs " + both(s.request_device) + " on the device" +
                     (how.empty() ? "" : " (" + how + ")");
  if (s.request_device > s.free) {
    return line + ": " + both(s.request_device - s.free) + " more than is " + free_to_program_name;
  }
  return line + ", with " + both(s.free) + " " + free_to_program_name;
}

std::vector<capacity_sum_row> capacity_sum_rows(const capacity_sum& s, const replay_report& r) {
  const std::string where = r.device.measured
                                ? std::string("as the device reports it")
                                : common::escape_text(r.device.profile.name) + " profile";
  std::vector<capacity_sum_row> rows;
  const auto add = [&rows](const char* op, std::uint64_t bytes, const std::string& what) {
    rows.push_back({op, bytes, what, op[0] == '='});
  };
  add("", s.live_requested, "live blocks, as requested");
  if (r.config.use_pool) {
    add("+", s.bin_rounding, "their rounding to the pool's bins");
    add("+", s.held, "freed blocks the pool held");
  }
  add("+", s.page_rounding, "the device's page rounding (" + where + ")");
  if (s.other != 0) add("+", s.other, "other device memory (not the pool's blocks)");
  add("=", s.device_used, "device used");
  if (s.headroom_known) {
    add("+", s.headroom, std::string(driver_headroom_name) + ", never handed out (" + where + ")");
    add("+", s.free, free_to_program_name);
  } else {
    add("+", s.free, std::string(free_to_program_name) + " (the device's own headroom included)");
  }
  add("=", s.capacity, "capacity");
  return rows;
}

std::string capacity_unused_text(const capacity_sum& s) {
  if (s.unused == 0 && s.held_unused == 0) return "";
  std::string text = "not in the sum: ";
  if (s.unused != 0) {
    text += both(s.unused) + " in live blocks no command has used yet";
    // Their share of the report's "lost to bin rounding", which the sum's row does not hold.
    if (s.unused_bin_rounding != 0)
      text += " + " + both(s.unused_bin_rounding) + ", their rounding to the pool's bins";
  }
  if (s.unused != 0 && s.held_unused != 0) text += ", and ";
  if (s.held_unused != 0)
    text += both(s.held_unused) + " in freed blocks the pool holds that no command used";
  return text + " (the device holds nothing for them)";
}

}  // namespace clpool::replay_cli
