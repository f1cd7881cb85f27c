"""@pyopencl_2026: PyOpenCL 2026.1.2 (nanobind) built from source archives, for clpool's own
tests on the PyOpenCL that pip installs today (python/README.md, "PyOpenCL versions").

The archives come from $CLPOOL_PYOPENCL_SOURCES, else ../shared/sources beside the workspace.
python/compat/build_pyopencl.sh builds them (cached under ~/.cache/clpool, so a second fetch
copies in seconds). The repository always exists: its defs.bzl says whether the site is there and,
if not, why; //python/compat defines the 2026 tests only when it is, and says "skipped" with the
reason otherwise. Archives that are present but fail to build are an error, never a skip."""

def _pyopencl_2026_impl(ctx):
    workspace = ctx.path(ctx.attr.workspace_marker).dirname
    sources = ctx.os.environ.get("CLPOOL_PYOPENCL_SOURCES", "")
    origin = "CLPOOL_PYOPENCL_SOURCES"
    if not sources:
        sources = str(workspace.dirname) + "/shared/sources"
        origin = "../shared/sources beside the workspace"
    available = False
    reason = ""
    if not ctx.path(sources).exists:
        reason = ("no PyOpenCL 2026.1.2 source archives: %s (%s) does not exist; set " +
                  "CLPOOL_PYOPENCL_SOURCES to a directory holding them " +
                  "(python/compat/build_pyopencl.sh lists what and where)") % (sources, origin)
    else:
        result = ctx.execute(
            ["bash", str(ctx.path(ctx.attr.script)), sources, str(ctx.path("site"))],
            timeout = 3600,
            environment = {"HOME": ctx.os.environ.get("HOME", "/tmp")},
        )
        if result.return_code == 3:
            reason = result.stderr.strip().replace("\n", " ")
        elif result.return_code != 0:
            fail("@pyopencl_2026: python/compat/build_pyopencl.sh %s failed (exit %d):\n%s" %
                 (sources, result.return_code, result.stderr))
        else:
            available = True
    if not available:
        print("clpool: PyOpenCL 2026.1.2 tests skipped: " + reason)
        ctx.file("site/README", "not built: " + reason + "\n")
    ctx.file("REASON", reason + "\n")
    ctx.file("defs.bzl", "PYOPENCL_2026 = struct(available = %s, reason = %r)\n" %
                         (available, reason))
    ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])

exports_files(["REASON"])

filegroup(
    name = "site",
    srcs = glob(["site/**"], exclude = ["site/**/__pycache__/**"]),
)
""")

pyopencl_2026_repository = repository_rule(
    implementation = _pyopencl_2026_impl,
    attrs = {
        "script": attr.label(
            default = Label("//python/compat:build_pyopencl.sh"),
            allow_single_file = True,
        ),
        "workspace_marker": attr.label(default = Label("//:WORKSPACE"), allow_single_file = True),
    },
    environ = ["CLPOOL_PYOPENCL_SOURCES"],
    local = True,
)
