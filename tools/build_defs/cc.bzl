"""cc_library, cc_binary and cc_test for clpool's BUILD files: Bazel's own rules with C++20 set on
the target, so that clpool builds with no flags in any workspace (one that uses it through
local_repository reads clpool's WORKSPACE and BUILD files, never its .bazelrc).

Every BUILD file that declares C++ targets loads them by the native names:

    load("//tools/build_defs:cc.bzl", "cc_binary", "cc_library", "cc_test")

`copts` given to a target come after these, so a target can add flags (a select() too).
"""

# g++ 12 (Debian 12's default) compiles C++17 unless told; clpool needs C++20. Configurations
# (--config=asan, fuzz, ...) still add their --copt flags on top.
CLPOOL_COPTS = ["-std=c++20"]

def _copts(srcs, copts):
    """C++20 for a target with C++ sources; none for one whose sources are all C (`.c`, `.h`),
    which gcc would warn about (copts reach every source of a target, C or C++)."""
    if type(srcs) == "list" and srcs and all([type(s) == "string" and s.endswith((".c", ".h")) for s in srcs]):
        return copts
    return CLPOOL_COPTS + copts

def cc_library(name, copts = [], srcs = [], **kwargs):
    native.cc_library(name = name, srcs = srcs, copts = _copts(srcs, copts), **kwargs)

def cc_binary(name, copts = [], srcs = [], **kwargs):
    native.cc_binary(name = name, srcs = srcs, copts = _copts(srcs, copts), **kwargs)

def cc_test(name, copts = [], srcs = [], **kwargs):
    native.cc_test(name = name, srcs = srcs, copts = _copts(srcs, copts), **kwargs)
