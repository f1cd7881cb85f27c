#include "tools/replay/site_report.h"

#include "replay/config.h"
#include "replay/site_names.h"

namespace clpool::replay_cli {

using replay::caller_usage;
using replay::callers_of;
using replay::is_unnamed_site;
using replay::merge_by_site;
using replay::oom_point;
using replay::replay_report;
using replay::site_name;
using replay::site_usage;
using replay::stack_lines;
using replay::unnamed_site_note;

namespace {

std::string both(std::uint64_t bytes) { return common::format_bytes_both(bytes); }

// The device rounds what it commits (a profile with pages or pack granules): each site's committed
// bytes say something the rounded bytes do not.
bool rounds_pages(const replay_report& r) {
  return !r.device.measured && !r.device.profile.exact_bytes();
}

void caller_tree(std::ostringstream& out, const std::vector<caller_usage>& callers,
                 std::size_t indent) {
  for (const caller_usage& c : callers) {
    out << std::string(indent, ' ') << c.name << ": " << both(c.rounded_bytes) << " in " << c.blocks
        << (c.blocks == 1 ? " block" : " blocks") << "\n";
    caller_tree(out, c.callers, indent + 2);
  }
}

// Lists the `top` sites of `raw`; true when one of them is unnamed (is_unnamed_site).
bool site_list(std::ostringstream& out, const char* title, const std::vector<site_usage>& raw,
               const replay_report& r, bool full_stacks, std::size_t top) {
  const std::vector<site_usage> list = merge_by_site(raw, r.sites.get());
  if (list.empty()) return false;
  bool unnamed = false;
  const trace::site_table* sites = r.sites.get();
  out << title << "\n";
  for (std::size_t i = 0; i < list.size() && i < top; ++i) {
    const site_usage& u = list[i];
    unnamed = unnamed || is_unnamed_site(sites, u.stack);
    out << "  " << (i + 1) << ". " << site_name(sites, u.stack) << "\n"
        << "     " << both(u.requested_bytes) << " requested";
    if (r.config.use_pool) out << ", " << both(u.rounded_bytes) << " rounded";
    if (rounds_pages(r)) out << ", " << both(u.committed_bytes) << " committed";
    out << ", " << u.blocks << (u.blocks == 1 ? " block" : " blocks") << "\n";
    callers_text(out, callers_of(raw, sites, site_name(sites, u.stack)),
                 r.config.use_pool ? " (bytes in pool bins)" : "");
    if (full_stacks) {
      for (const std::string& line : stack_lines(sites, u.stack))
        out << "       at " << line << "\n";
    }
  }
  if (list.size() > top) {
    std::uint64_t rest = 0;
    for (std::size_t i = top; i < list.size(); ++i) rest += list[i].rounded_bytes;
    out << "  ... " << (list.size() - top) << " more sites, " << both(rest) << "\n";
  }
  return unnamed;
}

// Under a site list: the live blocks in none of its sites, because no command had used them yet
// on a device that commits at first use (a version-4 trace).
void unused_note(std::ostringstream& out, std::uint64_t bytes, std::uint64_t blocks,
                 const char* whose) {
  if (bytes == 0) return;
  out << "  not among the sites: " << both(bytes);
  if (blocks != 0) out << " in " << blocks << (blocks == 1 ? " block" : " blocks");
  out << " " << whose << " (the device holds nothing for " << (blocks == 1 ? "it" : "them")
      << ")\n";
}

}  // namespace

void callers_text(std::ostringstream& out, const std::vector<caller_usage>& callers,
                  const std::string& what, std::size_t indent) {
  if (callers.empty()) return;
  out << std::string(indent - 2, ' ') << "called from" << what << ":\n";
  caller_tree(out, callers, indent);
}

void sites_text(std::ostringstream& out, const replay_report& r, bool full_stacks,
                std::size_t top) {
  if (!r.oom || !r.sites) return;
  const oom_point& p = *r.oom;
  out << "  failing request's site    " << site_name(r.sites.get(), p.stack) << "\n";
  if (full_stacks) {
    for (const std::string& line : stack_lines(r.sites.get(), p.stack))
      out << "       at " << line << "\n";
  }
  bool unnamed = is_unnamed_site(r.sites.get(), p.stack);
  unnamed |= site_list(out, "sites holding the most device memory at the failure (live blocks):",
                       p.live_sites, r, full_stacks, top);
  unused_note(out, p.unused_bytes, 0, "in live blocks no command has used yet");
  if (r.config.use_pool) {
    unnamed |= site_list(out, "sites whose freed blocks the pool still held:", p.held_sites, r,
                         full_stacks, top);
    unused_note(out, p.held_unused_bytes, 0, "in freed blocks the pool holds that no command used");
  }
  if (!full_stacks) out << "  (--full-stacks prints every frame of each site)\n";
  if (unnamed) out << "  " << unnamed_site_note << "\n";
}

void peak_and_end_text(std::ostringstream& out, const replay_report& r, bool full_stacks,
                       std::size_t top) {
  if (!r.peak_asked) return;
  out << "at the peak (event " << r.peak_active_event << "): " << both(r.peak_active_bytes)
      << " live\n";
  bool unnamed = false;
  if (r.sites) {
    unnamed = site_list(out, "sites holding the most device memory at the peak (live blocks):",
                        r.peak_live_sites, r, full_stacks, top);
    unused_note(out, r.peak_unused_bytes, r.peak_unused_blocks, "no command had used yet");
  }
  out << "live at the end (event " << (r.events == 0 ? 0 : r.events - 1)
      << "): " << both(r.end_active_bytes) << " in " << r.end_active_blocks
      << (r.end_active_blocks == 1 ? " block" : " blocks") << "\n";
  if (r.sites) {
    unnamed |= site_list(out, "sites still holding device memory at the end (live blocks):",
                         r.end_live_sites, r, full_stacks, top);
    unused_note(out, r.end_unused_bytes, r.end_unused_blocks, "no command had used");
  }
  if (unnamed) out << "  " << unnamed_site_note << "\n";
}

}  // namespace clpool::replay_cli
