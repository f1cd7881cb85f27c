#include "tools/replay/site_report.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "common/text_escape.h"
#include "tools/replay/config.h"

namespace clpool::replay {
namespace {

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool ends_with(const std::string& s, const char* suffix) {
  const std::string_view x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

std::string both(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  return format_bytes(bytes) + " (" + std::to_string(bytes) + " bytes)";
}

// The device rounds what it commits (a profile with pages or pack granules): each site's committed
// bytes say something the rounded bytes do not.
bool rounds_pages(const replay_report& r) {
  return !r.device.measured && !r.device.profile.exact_bytes();
}

void site_list(std::ostringstream& out, const char* title, const std::vector<site_usage>& raw,
               const replay_report& r, bool full_stacks, std::size_t top) {
  const std::vector<site_usage> list = merge_by_site(raw, r.sites.get());
  if (list.empty()) return;
  const trace::site_table* sites = r.sites.get();
  out << title << "\n";
  for (std::size_t i = 0; i < list.size() && i < top; ++i) {
    const site_usage& u = list[i];
    out << "  " << (i + 1) << ". " << site_name(sites, u.stack) << "\n"
        << "     " << both(u.requested_bytes) << " requested";
    if (r.config.use_pool) out << ", " << both(u.rounded_bytes) << " rounded";
    if (rounds_pages(r)) out << ", " << both(u.committed_bytes) << " committed";
    out << ", " << u.blocks << (u.blocks == 1 ? " block" : " blocks") << "\n";
    if (full_stacks) {
      for (const std::string& line : stack_lines(sites, u.stack)) out << "       at " << line << "\n";
    }
  }
  if (list.size() > top) {
    std::uint64_t rest = 0;
    for (std::size_t i = top; i < list.size(); ++i) rest += list[i].rounded_bytes;
    out << "  ... " << (list.size() - top) << " more sites, " << both(rest) << "\n";
  }
}

nlohmann::json site_list_json(const std::vector<site_usage>& raw, const replay_report& r,
                              std::size_t top) {
  const std::vector<site_usage> list = merge_by_site(raw, r.sites.get());
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t i = 0; i < list.size() && i < top; ++i) {
    const site_usage& u = list[i];
    a.push_back({{"stack", u.stack},
                 {"site", site_name(r.sites.get(), u.stack)},
                 {"frames", stack_lines(r.sites.get(), u.stack)},
                 {"requested_bytes", u.requested_bytes},
                 {"rounded_bytes", u.rounded_bytes},
                 {"committed_bytes", u.committed_bytes},
                 {"blocks", u.blocks}});
  }
  return a;
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
  // A frame's names come from the trace: in their printable form (common/text_escape.h) in every
  // output, so a name cannot write to a terminal or break a JSON document.
  return frame == 0 ? "(stack " + std::to_string(stack) + " not defined)"
                    : common::escape_text(sites->describe_frame(frame));
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
  for (const std::uint64_t id : sites->frames_of(stack)) out.push_back(common::escape_text(sites->describe_frame(id)));
  return out;
}

void sites_text(std::ostringstream& out, const replay_report& r, bool full_stacks, std::size_t top) {
  if (!r.oom || !r.sites) return;
  const oom_point& p = *r.oom;
  out << "  failing request's site    " << site_name(r.sites.get(), p.stack) << "\n";
  if (full_stacks) {
    for (const std::string& line : stack_lines(r.sites.get(), p.stack)) out << "       at " << line << "\n";
  }
  site_list(out, "sites holding the most device memory at the failure (live blocks):", p.live_sites, r,
            full_stacks, top);
  if (r.config.use_pool) {
    site_list(out, "sites whose freed blocks the pool still held:", p.held_sites, r, full_stacks, top);
  }
  if (!full_stacks) out << "  (--full-stacks prints every frame of each site)\n";
}

void sites_json(nlohmann::json& oom, const replay_report& r, std::size_t top) {
  if (!r.oom || !r.sites) return;
  const oom_point& p = *r.oom;
  oom["stack"] = p.stack;
  oom["site"] = site_name(r.sites.get(), p.stack);
  oom["frames"] = stack_lines(r.sites.get(), p.stack);
  oom["live_sites"] = site_list_json(p.live_sites, r, top);
  oom["held_sites"] = site_list_json(p.held_sites, r, top);
}

}  // namespace clpool::replay
