#include "replay/site_names.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <string_view>
#include <utility>

#include "common/text_escape.h"

namespace clpool::replay {
bool is_user_frame(const trace::frame_info& f, const std::vector<std::string>& patterns) {
  return !trace::is_library_frame(f, patterns);
}

namespace {

// A comprehension's own frame: Python 3.11 and older run `[f(x) for x in y]` in a frame of its own
// (`g.<locals>.<listcomp>`), at the line of the frame that runs it, which says the same and more.
bool is_comprehension_of(const trace::frame_info& f, const trace::frame_info* caller) {
  if (caller == nullptr || f.lang != trace::frame_lang::python || f.file != caller->file ||
      f.line != caller->line) {
    return false;
  }
  for (const std::string_view name : {"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"}) {
    if (f.function.size() >= name.size() &&
        f.function.compare(f.function.size() - name.size(), name.size(), name) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::uint64_t naming_frame(const trace::site_table& sites, std::uint64_t stack) {
  const std::vector<std::uint64_t> frames = program_frames(sites, stack);
  return frames.empty() ? 0 : frames.front();
}

std::vector<std::uint64_t> program_frames(const trace::site_table& sites, std::uint64_t stack) {
  const std::vector<std::uint64_t> frames = sites.frames_of(stack);
  std::vector<std::uint64_t> out;
  for (const std::uint64_t id : frames) {
    const trace::frame_info* f = sites.find_frame(id);
    if (f != nullptr && is_user_frame(*f, sites.library_patterns())) out.push_back(id);
  }
  if (out.empty() && !frames.empty()) out.push_back(frames.front());
  std::vector<std::uint64_t> folded;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const trace::frame_info* f = sites.find_frame(out[i]);
    if (f != nullptr && i + 1 < out.size() && is_comprehension_of(*f, sites.find_frame(out[i + 1])))
      continue;
    folded.push_back(out[i]);
  }
  return folded;
}

namespace {

// A frame's names come from the trace: in their printable form (common/text_escape.h) in every
// output, so a name cannot write to a terminal or break a JSON document.
std::string printable_frame(const trace::site_table& sites, std::uint64_t frame) {
  return common::escape_text(sites.describe_frame(frame));
}

}  // namespace

bool is_unnamed_site(const trace::site_table* sites, std::uint64_t stack) {
  if (sites == nullptr || stack == 0) return false;
  const trace::frame_info* f = sites->find_frame(naming_frame(*sites, stack));
  return f != nullptr && f->lang == trace::frame_lang::native && f->function.rfind("0x", 0) == 0;
}

std::string site_name(const trace::site_table* sites, std::uint64_t stack) {
  if (sites == nullptr || stack == 0) return "(no stack recorded)";
  if (sites->site_frames() <= 1) {
    const std::uint64_t frame = naming_frame(*sites, stack);
    return frame == 0 ? "(stack " + std::to_string(stack) + " not defined)"
                      : printable_frame(*sites, frame);
  }
  const std::vector<std::uint64_t> frames = program_frames(*sites, stack);
  if (frames.empty()) return "(stack " + std::to_string(stack) + " not defined)";
  std::string name;
  for (std::size_t i = 0; i < frames.size() && i < sites->site_frames(); ++i) {
    if (i != 0) name += " from ";
    name += printable_frame(*sites, frames[i]);
  }
  return name;
}

namespace {

void add_usage(caller_usage& to, const site_usage& u) {
  to.requested_bytes += u.requested_bytes;
  to.rounded_bytes += u.rounded_bytes;
  to.committed_bytes += u.committed_bytes;
  to.blocks += u.blocks;
}

// Largest rounded bytes first (then by name, so the order is the same every time), `top` kept at
// every level.
void order(std::vector<caller_usage>& nodes, std::size_t top) {
  std::sort(nodes.begin(), nodes.end(), [](const caller_usage& a, const caller_usage& b) {
    return a.rounded_bytes != b.rounded_bytes ? a.rounded_bytes > b.rounded_bytes : a.name < b.name;
  });
  if (nodes.size() > top) nodes.resize(top);
  for (caller_usage& n : nodes) order(n.callers, top);
}

}  // namespace

std::vector<caller_usage> callers_of(const std::vector<site_usage>& list,
                                     const trace::site_table* sites, const std::string& site,
                                     std::size_t levels, std::size_t top) {
  std::vector<caller_usage> roots;
  if (sites == nullptr) return roots;
  for (const site_usage& u : list) {
    if (u.stack == 0 || site_name(sites, u.stack) != site) continue;
    const std::vector<std::uint64_t> frames = program_frames(*sites, u.stack);
    std::vector<caller_usage>* level = &roots;
    for (std::size_t i = sites->site_frames();
         i < frames.size() && i < sites->site_frames() + levels; ++i) {
      const std::string name = printable_frame(*sites, frames[i]);
      auto it = std::find_if(level->begin(), level->end(),
                             [&name](const caller_usage& c) { return c.name == name; });
      if (it == level->end()) {
        caller_usage c;
        c.name = name;
        level->push_back(std::move(c));
        it = level->end() - 1;
      }
      add_usage(*it, u);
      level = &it->callers;
    }
  }
  order(roots, top);
  return roots;
}

std::vector<site_usage> merge_by_site(const std::vector<site_usage>& list,
                                      const trace::site_table* sites) {
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

namespace {

// An absolute file as a path without "." or ".." steps (lexically, as Python's os.path.normpath
// and pytest name it): a module imported through a sys.path entry such as "tests/.." is named
// from its real folder. Other files (relative, "<string>") as they are.
std::string normal_file(const std::string& file) {
  if (file.empty() || file[0] != '/' ||
      (file.find("/./") == std::string::npos && file.find("/../") == std::string::npos))
    return file;
  return std::filesystem::path(file).lexically_normal().string();
}

// True when the frame's file lies under `root` (not empty).
bool under_root(const trace::frame_info* f, const std::string& root) {
  if (f == nullptr || root.empty()) return false;
  const std::string file = normal_file(f->file);
  return file.size() > root.size() && file.compare(0, root.size(), root) == 0 &&
         file[root.size()] == '/';
}

// "function (file:line)" with `root` taken off the front of the file (normal_file), printable.
std::string path_frame(const trace::site_table& sites, std::uint64_t id, const std::string& root) {
  const trace::frame_info* f = sites.find_frame(id);
  if (f == nullptr) return printable_frame(sites, id);
  trace::frame_info shown = *f;
  shown.file = normal_file(f->file);
  if (under_root(f, root)) shown.file.erase(0, root.size() + 1);
  trace::site_table one;
  one.add_frame(1, shown);
  return common::escape_text(one.describe_frame(1));
}

}  // namespace

std::string site_path_name(const trace::site_table* sites, std::uint64_t stack,
                           const site_path_rule& rule) {
  if (sites == nullptr || stack == 0) return "(no stack recorded)";
  const std::vector<std::uint64_t> frames = program_frames(*sites, stack);
  if (frames.empty()) return "(stack " + std::to_string(stack) + " not defined)";
  std::size_t shown = frames.size();
  bool until_found = false;
  if (rule.frames != 0) {
    shown = std::min(shown, rule.frames);
  } else if (!rule.until_function.empty()) {
    for (std::size_t i = 0; i < frames.size() && !until_found; ++i) {
      const trace::frame_info* f = sites->find_frame(frames[i]);
      until_found = f != nullptr && f->function == rule.until_function &&
                    normal_file(f->file) == rule.until_file;
      if (until_found) shown = i + 1;
    }
  }
  // site_path_rule::stop_at_root: pytest-xdist's worker ("<string>" frames) is not the suite's.
  if (rule.frames == 0 && rule.stop_at_root && !until_found && !rule.root.empty()) {
    std::size_t last = shown;
    while (last > 0 && !under_root(sites->find_frame(frames[last - 1]), rule.root)) --last;
    if (last > 0) shown = last;
  }
  std::string name;
  for (std::size_t i = 0; i < shown; ++i) {
    if (i != 0) name += " \u2190 ";  // ←
    // Native frames without lines in one module: the module once, after the last of them
    // ("upload_chunk \u2190 main (/bin/stage)"), not a long path repeated on every frame.
    const trace::frame_info* f = sites->find_frame(frames[i]);
    const trace::frame_info* next = i + 1 < shown ? sites->find_frame(frames[i + 1]) : nullptr;
    if (f != nullptr && next != nullptr && f->lang == trace::frame_lang::native &&
        next->lang == trace::frame_lang::native && f->line == 0 && next->line == 0 &&
        f->file == next->file) {
      name += common::escape_text(f->function);
      continue;
    }
    name += path_frame(*sites, frames[i], rule.root);
  }
  return name;
}

std::vector<std::string> stack_lines(const trace::site_table* sites, std::uint64_t stack) {
  std::vector<std::string> out;
  if (sites == nullptr) return out;
  for (const std::uint64_t id : sites->frames_of(stack)) out.push_back(printable_frame(*sites, id));
  return out;
}

}  // namespace clpool::replay
