// Allocation sites by name: which frame of a stack (FORMAT.md "Sites") names the code that holds
// the memory, for every output of a replay (the text report, the JSON, the HTML page).
#ifndef CLPOOL_REPLAY_SITE_NAMES_H_
#define CLPOOL_REPLAY_SITE_NAMES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "replay/result.h"
#include "trace/sites.h"

namespace clpool::replay {

// True for a frame in clpool's own Python package, wherever it is installed or run from: a
// Python file directly in a directory named `clpool` (python/clpool/pyopencl.py, .../site-packages/
// clpool/record.py), or its extension module clpool/_core*.so. A pool's allocator is not the code
// that holds the memory; its caller is.
bool in_clpool_package(const trace::frame_info& frame);

// True for a frame of the program itself, false for one in clpool's package (in_clpool_package)
// or an installed library (site-packages, dist-packages, the Python standard library, frozen
// modules; native frames in /lib, /usr/lib or the Python interpreter). A site is named by its
// innermost user frame; every frame stays in the stack.
bool is_user_frame(const trace::frame_info& frame);

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
