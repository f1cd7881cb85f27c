#include "replay/result.h"

#include <iterator>

namespace clpool::replay {

std::string_view to_string(oom_site site) {
  switch (site) {
    case oom_site::allocator: return "device allocation failed";
    case oom_site::limit: return "pool limit reached";
    case oom_site::first_use: return "deferred allocation failed at first use";
    case oom_site::host: return "host-pinned budget exceeded";
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

free_moment free_moment_of(const device_model::device_profile& profile) {
  return profile.commands_finish == device_model::command_completion::at_wait ? free_moment::wait
                                                                               : free_moment::release;
}

}  // namespace clpool::replay
