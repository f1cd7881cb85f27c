// Native capture and interning in a program without Python; the Python half is tested by
// python_capture_test.py, which loads capture_for_python.so into a real interpreter.
#include "stacks/capture.h"

#include <gtest/gtest.h>

namespace clpool::stacks {

// Outside the anonymous namespace: dladdr names only exported symbols (-rdynamic).
__attribute__((noinline)) std::uint64_t grow_cache_for_test(capturer& c, definitions& d) {
  const std::uint64_t id = c.capture(d);
  asm volatile("" ::: "memory");  // not a tail call: this frame stays on the stack
  return id;
}

namespace {

std::vector<std::string> names(const definitions& all, std::uint64_t stack) {
  std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> stacks;
  for (const auto& s : all.stacks) stacks[s.id] = {s.parent, s.frame};
  std::map<std::uint64_t, std::string> frames;
  for (const auto& [id, f] : all.frames) frames[id] = f.function + " @ " + f.file;
  std::vector<std::string> out;
  while (stack != 0) {
    out.push_back(frames.count(stacks[stack].second) ? frames[stacks[stack].second] : "?");
    stack = stacks[stack].first;
  }
  return out;
}

TEST(Capture, NativeStackNamesTheCallerOnceSymbolized) {
  capturer c(mode::all, {}, /*drop_self=*/false);
  definitions d;
  const std::uint64_t a = grow_cache_for_test(c, d);
  ASSERT_NE(a, 0u);
  EXPECT_TRUE(d.frames.empty());  // native frames wait for symbolization
  EXPECT_GT(c.pending(), 0u);
  c.symbolize_pending(d);
  EXPECT_EQ(c.pending(), 0u);
  const std::vector<std::string> n = names(d, a);
  bool found = false;
  for (const std::string& s : n) found |= s.find("grow_cache_for_test") != std::string::npos;
  EXPECT_TRUE(found) << ::testing::PrintToString(n);
  for (const auto& [id, f] : d.frames) EXPECT_EQ(f.lang, trace::frame_lang::native);
}

TEST(Capture, TheSameSiteIsInternedOnce) {
  capturer c(mode::native, {}, false);
  definitions d1, d2;
  std::uint64_t ids[2];
  volatile int rounds = 2;  // a loop the compiler cannot unroll: one call site, one return address
  for (int i = 0; i < rounds; ++i) ids[i] = grow_cache_for_test(c, i == 0 ? d1 : d2);
  EXPECT_EQ(ids[0], ids[1]);
  EXPECT_FALSE(d1.stacks.empty());
  EXPECT_TRUE(d2.stacks.empty());  // nothing new to define
}

TEST(Capture, DroppedModulesAndModesNoneAndPythonWithoutPython) {
  // Dropping this test's own module leaves only the C library's frames (or none).
  capturer self_dropped(mode::native, {reinterpret_cast<const void*>(&grow_cache_for_test)}, false);
  definitions d;
  const std::uint64_t id = grow_cache_for_test(self_dropped, d);
  self_dropped.symbolize_pending(d);
  for (const std::string& s : names(d, id))
    EXPECT_EQ(s.find("grow_cache_for_test"), std::string::npos) << s;
  capturer none(mode::none, {}, false);
  EXPECT_EQ(grow_cache_for_test(none, d), 0u);
  capturer python(mode::python, {}, false);  // no interpreter in this process: nothing
  definitions p;
  EXPECT_EQ(grow_cache_for_test(python, p), 0u);
  EXPECT_TRUE(p.stacks.empty());
}

TEST(Capture, Modes) {
  EXPECT_EQ(parse_mode("all"), mode::all);
  EXPECT_EQ(parse_mode("python"), mode::python);
  EXPECT_EQ(parse_mode("Native"), std::nullopt);
  EXPECT_EQ(to_string(mode::native), "native");
}

}  // namespace
}  // namespace clpool::stacks
