#include "replay/site_names.h"

#include <algorithm>
#include <map>
#include <string_view>

namespace clpool::replay {
namespace {

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool ends_with(const std::string& s, const char* suffix) {
  const std::string_view x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

}  // namespace

bool in_clpool_package(const trace::frame_info& f) {
  const std::string& file = f.file;
  const std::size_t slash = file.rfind('/');
  if (slash == std::string::npos) return false;  // a bare file name: no package
  const std::string dir = file.substr(0, slash);
  if (dir != "clpool" && !ends_with(dir, "/clpool")) return false;
  const std::string base = file.substr(slash + 1);
  if (f.lang == trace::frame_lang::python) return ends_with(base, ".py");
  return starts_with(base, "_core.") && (ends_with(base, ".so") || contains(base, ".so."));
}

bool is_user_frame(const trace::frame_info& f) {
  const std::string& file = f.file;
  if (in_clpool_package(f)) return false;
  if (f.lang == trace::frame_lang::python) {
    return !(contains(file, "/site-packages/") || contains(file, "/dist-packages/") ||
             contains(file, "/lib/python3") || starts_with(file, "<frozen"));
  }
  return !(starts_with(file, "/lib/") || starts_with(file, "/lib64/") ||
           starts_with(file, "/usr/lib/") || starts_with(file, "/usr/lib64/") ||
           contains(file, "/bin/python") || starts_with(file, "linux-vdso"));
}

std::uint64_t naming_frame(const trace::site_table& sites, std::uint64_t stack) {
  const std::vector<std::uint64_t> frames = sites.frames_of(stack);
  for (const std::uint64_t id : frames) {
    const trace::frame_info* f = sites.find_frame(id);
    if (f != nullptr && is_user_frame(*f)) return id;
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
