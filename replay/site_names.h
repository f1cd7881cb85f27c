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

// The frame that names `stack`: its innermost program frame (program_frames), else its innermost
// frame; 0 for no stack.
std::uint64_t naming_frame(const trace::site_table& sites, std::uint64_t stack);

// The program's frames of `stack`, innermost first (library frames left out, and a comprehension's
// own frame folded into the frame that runs it at the same line: Python 3.11's `<listcomp>`,
// `<dictcomp>`, `<setcomp>`, `<genexpr>`); its innermost frame alone when none is the program's;
// empty for no stack.
std::vector<std::uint64_t> program_frames(const trace::site_table& sites, std::uint64_t stack);

// Whether `stack`'s site is a native function without a symbol, named by the offset of its call
// ("0xe88 (/bin/app)"): a static function, or a binary linked without -rdynamic or stripped.
bool is_unnamed_site(const trace::site_table* sites, std::uint64_t stack);

// What a report says once under its sites when one of them is unnamed (is_unnamed_site).
// The layer names native frames with dladdr (stacks/capture.cc), which reads the dynamic symbol
// table only: debug info (-g) names nothing, and a native frame never has a file and line.
inline constexpr const char* unnamed_site_note =
    "(a site named 0x... is a call made in a native function without a symbol (the offset of the "
    "call in its module, so each call of such a function is a site of its own): a static "
    "function, or a binary linked without -rdynamic or stripped; to name it, make the function "
    "non-static and link with -rdynamic. Native frames have no file and line: for a "
    "position-independent binary built with -g, addr2line -f -e MODULE 0x... gives them)";

// "Cache.grow (app.py:17)", or "(no stack recorded)" for stack 0 / a trace without sites. A site
// is the stack's innermost program frame, or its sites->site_frames() innermost program frames
// (--site-frames N), named "Cache.grow (app.py:17) from serve (app.py:40)". Every name here
// (sites, callers, stack lines) is a frame's in its printable form (common/text_escape.h).
std::string site_name(const trace::site_table* sites, std::uint64_t stack);

// Within one site, the callers that hold the most: the program frames beyond the site's own, as a
// tree `levels` deep (its callers, their callers, ...), each node the sum of the stacks through it.
struct caller_usage {
  std::string name;  // "serve (app.py:40)"
  std::uint64_t requested_bytes = 0, rounded_bytes = 0, committed_bytes = 0, blocks = 0;
  std::vector<caller_usage> callers;  // largest rounded bytes first
};

// The callers of site `site` (a site_name) among the per-stack usages `list` (a site_ledger's
// live_sites() or held_sites(), not merged), largest first; empty for a site whose stacks end at
// it. Each level keeps its `top` largest.
std::vector<caller_usage> callers_of(const std::vector<site_usage>& list,
                                     const trace::site_table* sites, const std::string& site,
                                     std::size_t levels = 2, std::size_t top = 3);

// `list` with the stacks that share a site name (the same innermost program frame, reached
// through different library frames) summed into one entry, which keeps the largest stack's id;
// largest rounded bytes first.
std::vector<site_usage> merge_by_site(const std::vector<site_usage>& list,
                                      const trace::site_table* sites);

// A site as the path through the program's own frames, from the allocation out to the code that
// asked for it: "_buf (t.py:10) ← remember_forever (t.py:14) ← test_leaks (t.py:30)". The pytest
// plugin names a test's sites so: allocations that all pass through one helper of the user's are
// told apart by their callers, down to the test.
struct site_path_rule {
  // The innermost program frames to show; 0: out to the `until` frame, or all of them when the
  // stack does not pass through it (with `stop_at_root`, out to the outermost one under `root`).
  std::size_t frames = 0;
  // The outermost frame to show (the test function): its file and function, as the trace holds
  // them. Empty: no such frame.
  std::string until_file, until_function;
  // Files under this directory are shown relative to it (the test suite's root); empty: as is.
  std::string root;
  // A path that does not reach the `until` frame (a session fixture's, a test that is no Python
  // function) stops at its outermost frame under `root`, when it has one: what runs the suite
  // beyond it (pytest-xdist's worker, exec'd from strings) is not the suite's. The pytest plugin's.
  bool stop_at_root = false;
};

// The path of `stack` under `rule`, every frame in its printable form (common/text_escape.h), a
// run of native frames without lines in one module naming the module once, after its last frame;
// "(no stack recorded)" for stack 0 or no sites.
std::string site_path_name(const trace::site_table* sites, std::uint64_t stack,
                           const site_path_rule& rule);

// Every frame of `stack`, innermost first, one string each.
std::vector<std::string> stack_lines(const trace::site_table* sites, std::uint64_t stack);

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_SITE_NAMES_H_
