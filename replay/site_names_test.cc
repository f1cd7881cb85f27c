// How sites are named: by the innermost program frame (clpool_replay), by the path out to a given
// frame (the pytest plugin), and a Python 3.11 comprehension's own frame folded into its caller's.
#include "replay/site_names.h"

#include <string>

#include <gtest/gtest.h>

namespace clpool::replay {
namespace {

// Adds Python frame `id`.
void py_frame(trace::site_table& t, std::uint64_t id, const char* file, std::uint64_t line,
              const char* fn) {
  EXPECT_EQ(t.add_frame(id, {trace::frame_lang::python, line, file, fn}), "");
}

trace::site_table table() {
  trace::site_table t;
  const auto py = [&](std::uint64_t id, const char* file, std::uint64_t line, const char* fn) {
    py_frame(t, id, file, line, fn);
  };
  py(1, "/usr/lib/python3/dist-packages/pyopencl/__init__.py", 100, "Buffer.__init__");
  py(2, "/src/tests/t.py", 10, "_buf");
  py(3, "/src/tests/t.py", 16, "big_scratch.<locals>.<listcomp>");
  py(4, "/src/tests/t.py", 16, "big_scratch");
  py(5, "/src/tests/t.py", 25, "test_scratch");
  py(6, "/usr/lib/python3/dist-packages/_pytest/python.py", 195, "pytest_pyfunc_call");
  py(7, "/src/tests/t.py", 30, "scratch.<locals>.<listcomp>");  // a comprehension that allocates
  py(8, "/src/tests/t.py", 31, "scratch");                      // ... run from another line
  // pytest -> test_scratch -> big_scratch -> <listcomp> -> _buf -> Buffer.__init__
  EXPECT_EQ(t.add_stack(1, 0, 6), "");
  EXPECT_EQ(t.add_stack(2, 1, 5), "");
  EXPECT_EQ(t.add_stack(3, 2, 4), "");
  EXPECT_EQ(t.add_stack(4, 3, 3), "");
  EXPECT_EQ(t.add_stack(5, 4, 2), "");
  EXPECT_EQ(t.add_stack(6, 5, 1), "");
  // pytest -> scratch (line 31) -> <listcomp> (line 30) -> Buffer.__init__
  EXPECT_EQ(t.add_stack(7, 1, 8), "");
  EXPECT_EQ(t.add_stack(8, 7, 7), "");
  EXPECT_EQ(t.add_stack(9, 8, 1), "");
  return t;
}

TEST(SiteNames, AComprehensionsFrameIsFoldedIntoItsCallersAtTheSameLine) {
  const trace::site_table t = table();
  EXPECT_EQ(site_name(&t, 6), "_buf (/src/tests/t.py:10)");
  site_path_rule to_test;
  to_test.until_file = "/src/tests/t.py";
  to_test.until_function = "test_scratch";
  to_test.root = "/src";
  EXPECT_EQ(site_path_name(&t, 6, to_test),
            "_buf (tests/t.py:10) \u2190 big_scratch (tests/t.py:16) \u2190 test_scratch "
            "(tests/t.py:25)");
  // A comprehension at another line than its caller's is a line of its own: kept.
  EXPECT_EQ(site_name(&t, 9), "scratch.<locals>.<listcomp> (/src/tests/t.py:30)");
}

TEST(SiteNames, PathRules) {
  const trace::site_table t = table();
  site_path_rule rule;
  EXPECT_EQ(site_path_name(&t, 6, rule),  // no test named: every program frame
            "_buf (/src/tests/t.py:10) \u2190 big_scratch (/src/tests/t.py:16) \u2190 test_scratch "
            "(/src/tests/t.py:25)");
  rule.frames = 2;
  EXPECT_EQ(site_path_name(&t, 6, rule),
            "_buf (/src/tests/t.py:10) \u2190 big_scratch (/src/tests/t.py:16)");
  rule.frames = 1;
  rule.root = "/src/tests/t.py";  // a root that is a file's own path is no directory of it
  EXPECT_EQ(site_path_name(&t, 6, rule), "_buf (/src/tests/t.py:10)");
  EXPECT_EQ(site_path_name(&t, 0, rule), "(no stack recorded)");
  EXPECT_EQ(site_path_name(nullptr, 6, rule), "(no stack recorded)");
  EXPECT_EQ(site_path_name(&t, 99, rule), "(stack 99 not defined)");
}

// A session fixture's allocation has no test frame: its path stops at the outermost frame under
// the suite's root, not at what runs the suite beyond it (pytest-xdist's worker, exec'd from
// strings), so one suite names its sites alike with and without xdist.
TEST(SiteNames, WithoutTheTestFrameAPathEndsAtTheRoot) {
  trace::site_table t;
  py_frame(t, 1, "/usr/lib/python3/dist-packages/pyopencl/__init__.py", 100, "Buffer.__init__");
  py_frame(t, 2, "/src/tests/conftest.py", 13, "buf");
  py_frame(t, 3, "/src/tests/conftest.py", 26, "session_buf");
  py_frame(t, 4, "/usr/lib/python3/dist-packages/_pytest/fixtures.py", 900, "call_fixture_func");
  py_frame(t, 5, "<string>", 8, "<module>");
  py_frame(t, 6, "<string>", 1, "<module>");
  // <string>:1 -> <string>:8 -> pytest -> session_buf -> buf -> Buffer.__init__: stack k is
  // frame 7 - k called by stack k - 1.
  for (std::uint64_t k = 1; k <= 6; ++k) EXPECT_EQ(t.add_stack(k, k - 1, 7 - k), "");
  site_path_rule rule;
  rule.until_file = "/src/tests/t.py";
  rule.until_function = "test_scratch";
  rule.root = "/src";
  rule.stop_at_root = true;
  EXPECT_EQ(site_path_name(&t, 6, rule),
            "buf (tests/conftest.py:13) \u2190 session_buf (tests/conftest.py:26)");
  rule.until_file = rule.until_function = "";  // a test that is no Python function: the same
  EXPECT_EQ(site_path_name(&t, 6, rule),
            "buf (tests/conftest.py:13) \u2190 session_buf (tests/conftest.py:26)");
  rule.stop_at_root = false;  // clpool sweep's paths: every program frame
  EXPECT_EQ(site_path_name(&t, 6, rule),
            "buf (tests/conftest.py:13) \u2190 session_buf (tests/conftest.py:26) \u2190 "
            "<module> (<string>:8) \u2190 <module> (<string>:1)");
  rule.stop_at_root = true;
  rule.root = "/elsewhere";  // no frame under it: every program frame, as before
  EXPECT_EQ(site_path_name(&t, 6, rule),
            "buf (/src/tests/conftest.py:13) \u2190 session_buf (/src/tests/conftest.py:26) "
            "\u2190 <module> (<string>:8) \u2190 <module> (<string>:1)");
}

// A module imported through a sys.path entry with ".." in it (a conftest's
// sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))) is named from its real
// folder, as pytest names it; a file that only seems to be under the root is not taken for one.
TEST(SiteNames, PathsAreNamedWithoutDotSteps) {
  trace::site_table t;
  py_frame(t, 1, "/usr/lib/python3/dist-packages/pyopencl/__init__.py", 100, "Buffer.__init__");
  py_frame(t, 2, "/src/tests/../helpers/./devmem.py", 3, "make_buf");
  py_frame(t, 3, "/src/tests/../../elsewhere/lib.py", 7, "wrap");
  py_frame(t, 4, "/src/tests/./test_a.py", 11, "test_peak");
  // test_peak -> wrap -> make_buf -> Buffer.__init__
  EXPECT_EQ(t.add_stack(1, 0, 4), "");
  EXPECT_EQ(t.add_stack(2, 1, 3), "");
  EXPECT_EQ(t.add_stack(3, 2, 2), "");
  EXPECT_EQ(t.add_stack(4, 3, 1), "");
  site_path_rule rule;
  rule.root = "/src";
  rule.until_file = "/src/tests/test_a.py";
  rule.until_function = "test_peak";
  EXPECT_EQ(site_path_name(&t, 4, rule),
            "make_buf (helpers/devmem.py:3) \u2190 wrap (/elsewhere/lib.py:7) \u2190 test_peak "
            "(tests/test_a.py:11)");
}

TEST(SiteNames, NativeFramesOfOneModuleNameItOnce) {
  trace::site_table t;
  const auto native = [&](std::uint64_t id, const char* file, std::uint64_t line, const char* fn) {
    EXPECT_EQ(t.add_frame(id, {trace::frame_lang::native, line, file, fn}), "");
  };
  native(1, "/w/bin/stage", 0, "_start");
  native(2, "/w/bin/stage", 0, "main");
  native(3, "/w/bin/stage", 0, "upload_chunk");
  native(4, "/w/src/stage.c", 40, "copy_chunk");  // with debug information: a line of its own
  native(5, "/w/bin/stage", 0, "helper");
  EXPECT_EQ(t.add_stack(1, 0, 1), "");
  EXPECT_EQ(t.add_stack(2, 1, 2), "");
  EXPECT_EQ(t.add_stack(3, 2, 3), "");
  EXPECT_EQ(t.add_stack(4, 3, 4), "");
  EXPECT_EQ(t.add_stack(5, 4, 5), "");
  site_path_rule rule;
  EXPECT_EQ(site_path_name(&t, 3, rule), "upload_chunk \u2190 main \u2190 _start (/w/bin/stage)");
  rule.root = "/w";
  EXPECT_EQ(site_path_name(&t, 5, rule),
            "helper (bin/stage) \u2190 copy_chunk (src/stage.c:40) \u2190 upload_chunk \u2190 main "
            "\u2190 _start (bin/stage)");
  rule.frames = 2;
  EXPECT_EQ(site_path_name(&t, 3, rule), "upload_chunk \u2190 main (bin/stage)");
}

TEST(SiteNames, ANativeFunctionWithoutASymbolIsUnnamed) {
  trace::site_table t;
  EXPECT_EQ(t.add_frame(1, {trace::frame_lang::native, 0, "/w/bin/mesh", "main"}), "");
  EXPECT_EQ(t.add_frame(2, {trace::frame_lang::native, 0, "/w/bin/mesh", "0xe88"}), "");
  EXPECT_EQ(t.add_frame(3, {trace::frame_lang::python, 3, "/w/0x.py", "0xfeed"}), "");
  EXPECT_EQ(t.add_stack(1, 0, 1), "");
  EXPECT_EQ(t.add_stack(2, 1, 2), "");
  EXPECT_EQ(t.add_stack(3, 0, 3), "");
  EXPECT_FALSE(is_unnamed_site(&t, 1));
  EXPECT_TRUE(is_unnamed_site(&t, 2));
  EXPECT_FALSE(is_unnamed_site(&t, 3));  // a Python function may be called so
  EXPECT_FALSE(is_unnamed_site(&t, 0));
  EXPECT_FALSE(is_unnamed_site(nullptr, 2));
}

TEST(SiteNames, PathNamesArePrintable) {
  trace::site_table t;
  EXPECT_EQ(t.add_frame(1, {trace::frame_lang::python, 2, "/r/evil\x1b[2J.py", "red\x1b[31m"}), "");
  EXPECT_EQ(t.add_stack(1, 0, 1), "");
  site_path_rule rule;
  rule.root = "/r";
  EXPECT_EQ(site_path_name(&t, 1, rule), "red\\x1B[31m (evil\\x1B[2J.py:2)");
}

}  // namespace
}  // namespace clpool::replay
