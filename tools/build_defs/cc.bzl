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

def cc_library(name, copts = [], **kwargs):
    native.cc_library(name = name, copts = CLPOOL_COPTS + copts, **kwargs)

def cc_binary(name, copts = [], **kwargs):
    native.cc_binary(name = name, copts = CLPOOL_COPTS + copts, **kwargs)

def cc_test(name, copts = [], **kwargs):
    native.cc_test(name = name, copts = CLPOOL_COPTS + copts, **kwargs)
