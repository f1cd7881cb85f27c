// The rule that names a site (library_frames.h): the program's own frames against installed
// packages wherever they live, extension modules, system and runtime libraries, and the user's
// patterns.
#include "trace/library_frames.h"

#include <gtest/gtest.h>

namespace clpool::trace {
namespace {

frame_info py(const char* file) { return frame_info{frame_lang::python, 1, file, "f"}; }
frame_info native(const char* file) { return frame_info{frame_lang::native, 0, file, "0x10"}; }

TEST(LibraryFrames, ProgramFramesWhereverTheyAre) {
  for (const char* file : {"/home/me/app.py", "prog.py", "/tmp/x/prog.py", "/srv/lib/app.py",
                           "/home/me/clpool/data/train.py", "/home/me/numpy_tools/fit.py",
                           "/home/me/libs/python_helpers/a.py", "<string>"}) {
    EXPECT_FALSE(is_library_frame(py(file))) << file;
  }
  for (const char* file : {"/home/me/a.out", "/opt/app/bin/solver", "/home/me/build/libmine.so",
                           "/usr/local/lib/libmine.so"}) {
    EXPECT_FALSE(is_library_frame(native(file))) << file;
  }
}

TEST(LibraryFrames, InstalledPythonPackagesAnywhere) {
  for (const char* file :
       {"/usr/lib/python3/dist-packages/pyopencl/array.py",
        "/home/me/venv/lib/python3.11/site-packages/foo/bar.py",
        "/opt/conda/envs/gpu/lib/python3.11/site-packages/pyopencl/array.py",
        "/usr/lib/python3.11/threading.py", "/home/me/venv/lib/python3.11/abc.py",
        "/root/.pyenv/versions/3.11.7/lib/python3.11/runpy.py", "<frozen runpy>",
        // PyOpenCL built into a directory on PYTHONPATH, as python/compat does.
        "/tmp/site/pyopencl/array.py", "/tmp/site/pytools/__init__.py",
        "/data/pkgs/numpy/core/fromnumeric.py", "/x/clpool/record.py"}) {
    EXPECT_TRUE(is_library_frame(py(file))) << file;
  }
}

TEST(LibraryFrames, NativeLibrariesAndExtensions) {
  for (const char* file :
       {"/tmp/site/pyopencl/_cl.cpython-311-x86_64-linux-gnu.so",
        "/home/me/elsewhere/_ext.cpython-312-x86_64-linux-gnu.so", "/somewhere/mod.abi3.so",
        "/home/me/venv/lib/python3.11/site-packages/numpy.libs/libopenblas64_p-r0.so",
        "/opt/wheels/numpy.libs/libgfortran.so.5", "/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/libpocl.so.2", "/opt/conda/lib/libOpenCL.so.1",
        "/usr/local/nvidia/lib64/libnvidia-opencl.so.1", "/opt/py/bin/python3.11",
        "/opt/py/lib/libpython3.11.so.1.0", "linux-vdso.so.1",
        "/work/bazel-bin/mockcl/libmockcl.so", "/x/tools/layer/libclpool_layer.so",
        "/x/clpool/_core.cpython-311-x86_64-linux-gnu.so"}) {
    EXPECT_TRUE(is_library_frame(native(file))) << file;
  }
}

TEST(LibraryFrames, UserPatterns) {
  const std::vector<std::string> patterns = {"/home/me/vendor/*", "*/third_party/*.py"};
  EXPECT_TRUE(is_library_frame(py("/home/me/vendor/lib/x.py"), patterns));
  EXPECT_TRUE(is_library_frame(native("/home/me/vendor/libz.so"), patterns));
  EXPECT_TRUE(is_library_frame(py("/src/a/third_party/b/c.py"), patterns));
  EXPECT_FALSE(is_library_frame(py("/src/a/third_party/b/c.pyx"), patterns));
  EXPECT_FALSE(is_library_frame(py("/home/me/app.py"), patterns));
}

TEST(LibraryFrames, Glob) {
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*", "/a/b"));
  EXPECT_TRUE(glob_match("/a/*/c", "/a/b/x/c"));
  EXPECT_TRUE(glob_match("a?c", "abc"));
  EXPECT_FALSE(glob_match("a?c", "ac"));
  EXPECT_FALSE(glob_match("/a/*", "/b/a/c"));
  EXPECT_TRUE(glob_match("*.py", "x.py"));
  EXPECT_FALSE(glob_match("*.py", "x.pyc"));
  EXPECT_TRUE(glob_match("**", "abc"));
  // Linear in practice on adversarial input (no exponential backtracking).
  const std::string text(5000, 'a');
  EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*a*b", text));
}

TEST(LibraryFrames, PatternErrors) {
  EXPECT_EQ(library_pattern_error("/x/*"), "");
  EXPECT_NE(library_pattern_error(""), "");
  EXPECT_NE(library_pattern_error(std::string(601, 'a')), "");
  EXPECT_NE(library_pattern_error("a\nb"), "");
}

}  // namespace
}  // namespace clpool::trace
