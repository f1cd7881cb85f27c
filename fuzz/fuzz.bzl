"""clpool_fuzzer(): one libFuzzer source file, two targets.

    clpool_fuzzer(
        name = "pool_ops_fuzzer",
        srcs = ["pool_ops_fuzzer.cc"],
        deps = ["//pool:memory_pool"],
        corpus = "corpus/pool_ops",
        regressions = "regressions/pool_ops",
    )

makes
  :pool_ops_fuzzer              the fuzzer. Under --config=fuzz (clang 14, ASan + UBSan) it links
                                libFuzzer; in any other configuration it links replay_main.cc, so
                                `bazel-bin/fuzz/pool_ops_fuzzer FILE...` replays inputs with g++.
                                Tagged "manual": `bazel build //...` does not build it.
  :pool_ops_fuzzer_replay_test  a cc_test, built with whatever toolchain the command uses (g++ by
                                default), that runs LLVMFuzzerTestOneInput on every file of the
                                seed corpus and of the regressions directory. Part of
                                `bazel test //...`; needs no clang.
"""

load("//tools/build_defs:cc.bzl", "cc_binary", "cc_library", "cc_test")

def clpool_fuzzer(name, srcs, deps = [], corpus = None, regressions = None, size = "small", tags = [], coverage_ignorelist = None, **kwargs):
    """Declares a libFuzzer target and its corpus-replay test.

    Args:
      name: the fuzzer binary's name; the test is name + "_replay_test".
      srcs: the source defining LLVMFuzzerTestOneInput (and nothing with main()).
      deps: libraries the fuzzer uses. FuzzedDataProvider is added.
      corpus: the checked-in seed corpus directory, relative to this package. Must hold at least
        one file.
      regressions: the directory of crash inputs kept as regressions, relative to this package.
        May be empty or missing.
      size: the replay test's size.
      tags: extra tags for both targets.
      coverage_ignorelist: optional SanitizerCoverage ignorelist (a .inc file in this package, so
        Bazel accepts it in srcs and a change to it recompiles). Under --config=fuzz it is passed
        as -fsanitize-coverage-ignorelist=, so the listed functions get no coverage
        instrumentation. Other configurations ignore it.
      **kwargs: passed to the library holding the fuzzer's code (copts, local_defines, ...).
    """
    if corpus == None:
        fail("clpool_fuzzer(%s): corpus is required" % name)
    lib = name + "_lib"
    copts = kwargs.pop("copts", [])
    if coverage_ignorelist:
        srcs = srcs + [coverage_ignorelist]
        path = native.package_name() + "/" + coverage_ignorelist
        copts = copts + select({
            # -fdepfile-entry lists the file in the .d file: Bazel drops declared headers that
            # the .d file does not name from the action's inputs, and then an edit to the list
            # would not recompile (clang does not list coverage ignorelists itself).
            "//fuzz:fuzzing": [
                "-fsanitize-coverage-ignorelist=" + path,
                "-Xclang",
                "-fdepfile-entry=" + path,
            ],
            "//conditions:default": [],
        })
    cc_library(
        name = lib,
        testonly = True,
        srcs = srcs,
        copts = copts,
        deps = deps + ["@system_libs//:fuzzed_data_provider"],
        alwayslink = True,
        tags = tags,
        **kwargs
    )

    cc_binary(
        name = name,
        testonly = True,
        deps = [":" + lib] + select({
            "//fuzz:fuzzing": [],
            "//conditions:default": ["//fuzz:replay_main"],
        }),
        linkopts = select({
            "//fuzz:fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        tags = ["manual", "fuzzer"] + tags,
    )

    dirs = [corpus] + ([regressions] if regressions else [])
    prefix = native.package_name()
    cc_test(
        name = name + "_replay_test",
        size = size,
        deps = [":" + lib, "//fuzz:replay_main"],
        data = native.glob([d + "/**" for d in dirs]),
        args = ["--corpus=%s/%s" % (prefix, corpus)] +
               (["--regressions=%s/%s" % (prefix, regressions)] if regressions else []),
        tags = ["fuzz_replay"] + tags,
    )
