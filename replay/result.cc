#include "replay/result.h"

#include <iterator>

#include "device_model/device_memory.h"
#include "pool/bins.h"

namespace clpool::replay {

std::string_view to_string(oom_site site) {
  switch (site) {
    case oom_site::allocator:
      return "device allocation failed";
    case oom_site::limit:
      return "pool limit reached";
    case oom_site::first_use:
      return "deferred allocation failed at first use";
    case oom_site::host:
      return "host-pinned budget exceeded";
    case oom_site::max_alloc:
      return "above the device's maximum allocation";
  }
  return "?";
}

std::string_view to_string(free_moment moment) {
  return free_moment_names[static_cast<std::size_t>(moment)];
}

std::optional<free_moment> parse_free_moment(std::string_view word) {
  for (std::size_t i = 0; i < std::size(free_moment_names); ++i) {
    if (word == free_moment_names[i]) return static_cast<free_moment>(i);
  }
  return std::nullopt;
}

std::optional<capacity_sum> capacity_sum_at(const oom_point& p, const device_spec& device,
                                            bool pool) {
  if (p.capacity >= (std::uint64_t{1} << 62)) return std::nullopt;  // unbounded: nothing to sum to
  if (p.refused_for_size()) return std::nullopt;  // no memory was short: nothing to sum
  capacity_sum s;
  s.capacity = p.capacity;
  s.live_requested = p.active_bytes - p.unused_bytes;
  s.unused = p.unused_bytes;
  if (pool) {
    s.bin_rounding = (p.active_rounded_bytes - p.unused_rounded_bytes) - s.live_requested;
    s.unused_bin_rounding = p.unused_rounded_bytes - p.unused_bytes;
    s.held = p.held_bytes - p.held_unused_bytes;
    s.held_unused = p.held_unused_bytes;
  }
  s.page_rounding = p.page_loss_bytes;
  s.device_used = p.device_used_bytes;
  const std::uint64_t accounted = s.live_requested + s.bin_rounding + s.held + s.page_rounding;
  s.other = s.device_used > accounted ? s.device_used - accounted : 0;
  s.headroom_known = !device.measured.has_value();
  s.headroom = s.headroom_known ? device.profile.headroom : 0;
  const std::uint64_t taken = s.device_used + s.headroom;
  s.free = s.capacity > taken ? s.capacity - taken : 0;
  s.request_rounded = p.rounded_bytes;
  const device_model::device_profile& prof = device.profile;
  s.request_takes_new_shared_page =
      !device.measured && prof.pack_limit != 0 && p.rounded_bytes <= prof.pack_limit;
  s.request_device = device.measured ? p.rounded_bytes
                     : s.request_takes_new_shared_page
                         ? prof.page
                         : device_model::profile_rounded(prof, p.rounded_bytes);
  return s;
}

bool is_sizeable_alloc(std::uint64_t size) { return size >= 4096; }

bool has_pool_bin_size(std::uint64_t size) {
  return rounded_size(size, default_leading_bits) == size;
}

void trace_counts::count(const trace::trace_event& e) {
  switch (e.action) {
    case trace::trace_action::alloc:
      ++allocs;
      if (is_sizeable_alloc(e.size)) {
        ++sized_allocs;
        bin_sized_allocs += has_pool_bin_size(e.size) ? 1 : 0;
      }
      break;
    case trace::trace_action::free:
      ++frees;
      break;
    case trace::trace_action::release:
      ++releases;
      break;
    case trace::trace_action::wait:
      ++waits;
      break;
    case trace::trace_action::use:
      ++uses;
      break;
    default:
      break;
  }
}

free_moment free_moment_of(const device_model::device_profile& profile) {
  return profile.commands_finish == device_model::command_completion::at_wait
             ? free_moment::wait
             : free_moment::release;
}

}  // namespace clpool::replay
