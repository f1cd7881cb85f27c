// A shared library that Python loads with ctypes (python_capture_test.py): captures the calling
// thread's stack with stacks::capturer and returns it as text, one frame per line, innermost
// first ("py FILE:LINE FUNCTION" or "native MODULE FUNCTION").
#include <map>
#include <mutex>
#include <string>

#include "stacks/capture.h"

namespace {
clpool::stacks::capturer* g_capturer = nullptr;
std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> g_stacks;
std::map<std::uint64_t, clpool::trace::frame_info> g_frames;
std::mutex g_mutex;               // capturer is not thread-safe: its callers serialize (capture.h)
thread_local std::string g_text;  // each thread reads back its own stack after the lock is gone
}  // namespace

extern "C" const char* clpool_test_capture(const char* which) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_capturer == nullptr) {
    g_capturer = new clpool::stacks::capturer(*clpool::stacks::parse_mode(which), {});
  }
  clpool::stacks::definitions d;
  std::uint64_t stack = g_capturer->capture(d);
  g_capturer->symbolize_pending(d);
  for (const auto& s : d.stacks) g_stacks[s.id] = {s.parent, s.frame};
  for (auto& [id, f] : d.frames) g_frames[id] = f;
  g_text.clear();
  for (; stack != 0; stack = g_stacks[stack].first) {
    const clpool::trace::frame_info& f = g_frames[g_stacks[stack].second];
    g_text += std::string(clpool::trace::to_string(f.lang)) + " " + f.file + ":" +
              std::to_string(f.line) + " " + f.function + "\n";
  }
  return g_text.c_str();
}
