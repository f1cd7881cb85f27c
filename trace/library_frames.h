// Which frames of an allocation's stack are the program's own, and which belong to code it merely
// uses: a site (FORMAT.md "Sites") is named by its innermost program frame, wherever the program's
// libraries are installed. The rule, in full (for users: tools/replay/README.md, "Which code holds
// the memory"):
//
// A Python frame is a library frame when its file
//   - is in clpool's own package (a .py file directly in a directory named `clpool`);
//   - has a directory `site-packages` or `dist-packages` in its path (pip, Debian, virtualenvs,
//     conda environments);
//   - is in a Python installation's standard library: a directory `pythonX.Y` or `python3`
//     directly under `lib` or `lib64` (/usr/lib/python3.11/, VENV/lib/python3.11/,
//     CONDA/lib/python3.11/), or a frozen module (`<frozen ...>`);
//   - is in a package directory of a library clpool knows wherever it lives (kLibraryPackages:
//     PyOpenCL and what it builds on, numpy, PyCUDA, CuPy), such as DIR/pyopencl/array.py.
// A native frame is a library frame when its module
//   - is clpool's own (clpool/_core*.so, libclpool_layer.so, libmockcl.so);
//   - lies in a system library directory (/lib/, /lib64/, /usr/lib/, /usr/lib64/);
//   - is a Python extension module anywhere (NAME.cpython-*.so, NAME.abi3.so), or lies in a
//     site-packages or dist-packages directory, or in a known package's directory or its wheel's
//     `PACKAGE.libs` directory;
//   - is the Python interpreter or libpython, an OpenCL ICD loader or driver (libOpenCL,
//     libpocl, libnvidia-opencl, libcuda, libamdocl, libigdrcl), or the vDSO.
// And any frame whose file matches one of the user's patterns (clpool_replay --library-frames):
// a glob where `*` matches any run of characters, `/` included, and `?` one character.
#ifndef CLPOOL_TRACE_LIBRARY_FRAMES_H_
#define CLPOOL_TRACE_LIBRARY_FRAMES_H_

#include <string>
#include <string_view>
#include <vector>

#include "trace/sites.h"

namespace clpool::trace {

// The package directories named by the rule above.
inline constexpr std::string_view kLibraryPackages[] = {
    "pyopencl", "pytools", "mako", "numpy", "pycuda", "cupy", "cupyx", "cupy_backends",
};

// True for a frame in clpool's own Python package or one of clpool's own shared objects.
bool in_clpool_package(const frame_info& frame);

// The rule above; `patterns` are the user's globs.
bool is_library_frame(const frame_info& frame, const std::vector<std::string>& patterns = {});

// `text` matches the glob `pattern` as a whole (`*`: any run of characters including none and
// `/`; `?`: one character; anything else itself).
bool glob_match(std::string_view pattern, std::string_view text);

// Why `pattern` cannot be a --library-frames pattern (empty, over 600 bytes, or holding a control
// character), or empty when it can.
std::string library_pattern_error(std::string_view pattern);

}  // namespace clpool::trace

#endif  // CLPOOL_TRACE_LIBRARY_FRAMES_H_
