"""The pytest plugin's tests (python/tests/pytest_plugin_test.py, with pytester), once per PyOpenCL:
Debian's 2022.3.1 (//python) and 2026.1.2 (//python/compat, when its archives were found)."""

def _plugin_sh_test(name, script, test_py, extra_data, pyopencl_site, size = "medium", tags = []):
    """An sh_test of SCRIPT CORE_SO PACKAGE_INIT_PY LAYER_SO LIBMOCKCL_SO CLPOOL_REPLAY TEST_PY
    [PYOPENCL], the arguments run_plugin_test.sh and examples/ci's example_test.sh both take."""
    args = [
        "$(rootpath //python:_core.so)",
        "$(rootpath //python:clpool/__init__.py)",
        "$(rootpath //tools/layer:libclpool_layer.so)",
        "$(rootpath //mockcl:libmockcl_for_tests)",
        "$(rootpath //tools/replay:clpool_replay_for_tests)",
        "$(rootpath %s)" % test_py,
    ]
    data = [
        "//python:_core.so",
        "//python:package_sources",
        "//python:tests/python_env.sh",
        "//tools/dev/testing:test_lib",
        "//python:clpool/__init__.py",
        test_py,
        "//tools/layer:libclpool_layer.so",
        "//mockcl:libmockcl_for_tests",
        "//tools/replay:clpool_replay_for_tests",
    ] + extra_data
    if pyopencl_site:
        args.append("$(rootpath %s)" % pyopencl_site)
        data.append(pyopencl_site)
        data.append(pyopencl_site.split(":")[0] + ":site")
    native.sh_test(
        name = name,
        size = size,
        srcs = [script],
        args = args,
        data = data,
        tags = ["no_tsan"] + tags,
    )

def clpool_plugin_test(name, test = "pytest_plugin_test", pyopencl_site = None, size = "medium", tags = []):
    """An sh_test running python/tests/TEST.py through python/tests/run_plugin_test.sh.

    pyopencl_site: a label of a file directly in a site directory holding another PyOpenCL.
    size: the sh_test's (the long batteries are "large": a sanitized run is several times slower).
    tags: added to the sh_test's."""
    _plugin_sh_test(name, "//python:tests/run_plugin_test.sh", "//python:tests/%s.py" % test, [],
                    pyopencl_site, size, tags)

def clpool_plugin_example_test(name, pyopencl_site = None, tags = []):
    """examples/ci/python/example_test.sh: the example library's suite under the plugin, buggy
    and fixed, and clpool_replay --diff of the two sessions. tags: added to the sh_test's."""
    _plugin_sh_test(name, "//examples/ci:python/example_test.sh",
                    "//examples/ci:python/tests/test_imagelib.py", ["//examples/ci:python_example"],
                    pyopencl_site, tags = tags)
