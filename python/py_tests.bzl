"""The clpool Python test battery, once per PyOpenCL: Debian's 2022.3.1 (//python) and 2026.1.2
built from source archives (//python/compat, when python/compat/pyopencl_repository.bzl found
them). Each test runs with Debian's /usr/bin/python3 through python/tests/run_py_test.sh."""

# (test, devices it runs on)
PY_TESTS = [
    ("pool_test", ["mockcl", "pocl"]),
    ("dropin_test", ["pocl"]),
    ("pagelocked_test", ["mockcl", "pocl"]),
    ("threaded_test", ["mockcl", "pocl"]),
    ("svm_test", ["mockcl", "pocl"]),
    ("record_test", ["pocl"]),
    ("stress_test", ["mockcl", "pocl"]),
    ("gc_safety_test", ["mockcl", "pocl"]),
    ("record_trace_test", ["mockcl"]),
    ("seed_pyopencl_test", ["mockcl", "pocl"]),
    ("seed_cupy_test", ["mockcl", "pocl"]),
    ("seed_pycuda_test", ["mockcl", "pocl"]),
    ("binding_test", ["mockcl", "pocl"]),
    ("replay_test", ["mockcl"]),
    ("out_of_order_test", ["mockcl", "pocl"]),
]

# The tests that exercise what the binding path decides (how PooledBuffer objects are made, reused
# and freed): the generic path runs these only.
GENERIC_PATH_TESTS = [
    "binding_test",
    "dropin_test",
    "gc_safety_test",
    "pool_test",
    "record_test",
    "seed_pycuda_test",
    "seed_pyopencl_test",
    "stress_test",
]

def clpool_py_tests(suffix = "", pyopencl_site = None, generic = False):
    """One sh_test per PY_TESTS entry and device, named TEST_DEVICE + suffix (with `generic`,
    GENERIC_PATH_TESTS only).

    pyopencl_site: a label of a file directly in a site directory holding another PyOpenCL (put
    first on PYTHONPATH). generic: force the binding-independent path
    (CLPOOL_PYTHON_BINDING=generic, python/foreign_binding.h)."""
    for test, modes in PY_TESTS:
        if generic and test not in GENERIC_PATH_TESTS:
            continue
        for mode in modes:
            args = [
                "$(rootpath //python:_core.so)",
                "$(rootpath //python:clpool/__init__.py)",
                mode,
                "$(rootpath //mockcl:libmockcl_for_tests)",
                "$(rootpath //python:tests/%s.py)" % test,
                "$(rootpath //tools/replay:clpool_replay_for_tests)",
            ]
            data = [
                "//python:_core.so",
                "//python:package_sources",
                "//python:tests/python_env.sh",
                "//tools/dev/testing:test_lib",
                "//python:clpool/__init__.py",
                "//python:tests/%s.py" % test,
                "//python:tests/cltest.py",
                "//python:tests/seed_support.py",
                "//python:README.md",
                "//mockcl:libmockcl_for_tests",
                "//tools/replay:clpool_replay_for_tests",
            ]
            if pyopencl_site:
                args.append("$(rootpath %s)" % pyopencl_site)
                data.append(pyopencl_site)
                data.append(pyopencl_site.split(":")[0] + ":site")
            native.sh_test(
                name = "%s_%s%s" % (test, mode, suffix),
                size = "medium",
                srcs = ["//python:tests/run_py_test.sh"],
                args = args,
                data = data,
                env = {"CLPOOL_PYTHON_BINDING": "generic"} if generic else {},
                # The generic path is the same C++ on any PyOpenCL: under ASan it runs on Debian's
                # (//python's *_generic), not again on another's (CONTRIBUTING.md, CI's time).
                tags = ["no_tsan"] + (["no_asan"] if generic and pyopencl_site else []),
            )
