#include "replay/site_names.h"

#include <algorithm>
#include <map>

namespace clpool::replay {
bool is_user_frame(const trace::frame_info& f, const std::vector<std::string>& patterns) {
  return !trace::is_library_frame(f, patterns);
}

std::uint64_t naming_frame(const trace::site_table& sites, std::uint64_t stack) {
  const std::vector<std::uint64_t> frames = sites.frames_of(stack);
  for (const std::uint64_t id : frames) {
    const trace::frame_info* f = sites.find_frame(id);
    if (f != nullptr && is_user_frame(*f, sites.library_patterns())) return id;
  }
  return frames.empty() ? 0 : frames.front();
}

std::string site_name(const trace::site_table* sites, std::uint64_t stack) {
  if (sites == nullptr || stack == 0) return "(no stack recorded)";
  const std::uint64_t frame = naming_frame(*sites, stack);
  return frame == 0 ? "(stack " + std::to_string(stack) + " not defined)" : sites->describe_frame(frame);
}

std::vector<site_usage> merge_by_site(const std::vector<site_usage>& list, const trace::site_table* sites) {
  std::map<std::string, site_usage> by_name;
  for (const site_usage& u : list) {  // largest first, so the first stack seen is the largest
    auto [it, added] = by_name.emplace(site_name(sites, u.stack), u);
    if (added) continue;
    it->second.requested_bytes += u.requested_bytes;
    it->second.rounded_bytes += u.rounded_bytes;
    it->second.committed_bytes += u.committed_bytes;
    it->second.blocks += u.blocks;
  }
  std::vector<site_usage> out;
  for (const auto& [name, u] : by_name) out.push_back(u);
  std::stable_sort(out.begin(), out.end(), [](const site_usage& a, const site_usage& b) {
    return a.rounded_bytes > b.rounded_bytes;
  });
  return out;
}

std::vector<std::string> stack_lines(const trace::site_table* sites, std::uint64_t stack) {
  std::vector<std::string> out;
  if (sites == nullptr) return out;
  for (const std::uint64_t id : sites->frames_of(stack)) out.push_back(sites->describe_frame(id));
  return out;
}

}  // namespace clpool::replay
