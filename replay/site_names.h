// Allocation sites by name: which frame of a stack (FORMAT.md "Sites") names the code that holds
// the memory, for every output of a replay (the text report, the JSON, the HTML page).
#ifndef CLPOOL_REPLAY_SITE_NAMES_H_
#define CLPOOL_REPLAY_SITE_NAMES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "replay/result.h"
#include "trace/library_frames.h"
#include "trace/sites.h"

namespace clpool::replay {

// True for a frame of the program itself: not a library frame by trace/library_frames.h's rule
// (clpool's own package, installed packages wherever they live, the standard library, system and
// runtime libraries, extension modules) nor one matching the user's `patterns`. A site is named
// by its innermost user frame; every frame stays in the stack.
bool is_user_frame(const trace::frame_info& frame, const std::vector<std::string>& patterns = {});
using trace::in_clpool_package;

// The frame that names `stack`: its innermost user frame, else its innermost frame; 0 for no stack.
std::uint64_t naming_frame(const trace::site_table& sites, std::uint64_t stack);

// "Cache.grow (app.py:17)", or "(no stack recorded)" for stack 0 / a trace without sites.
std::string site_name(const trace::site_table* sites, std::uint64_t stack);

// `list` with the stacks that share a site name (the same innermost program frame, reached
// through different library frames) summed into one entry, which keeps the largest stack's id;
// largest rounded bytes first.
std::vector<site_usage> merge_by_site(const std::vector<site_usage>& list, const trace::site_table* sites);

// Every frame of `stack`, innermost first, one string each.
std::vector<std::string> stack_lines(const trace::site_table* sites, std::uint64_t stack);

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_SITE_NAMES_H_
