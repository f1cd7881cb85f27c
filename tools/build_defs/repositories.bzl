"""clpool_dependencies(): the repositories clpool's BUILD files name, for clpool's own WORKSPACE
and for a workspace that uses clpool:

    local_repository(name = "clpool", path = "/path/to/clpool")
    load("@clpool//tools/build_defs:repositories.bzl", "clpool_dependencies")
    clpool_dependencies()

Everything is offline (Debian's bazel-bootstrap 4.2.3 and Debian packages, see README.md,
"Building offline"):
  rules_cc, rules_java, remote_coverage_tools  tiny stand-ins under clpool's third_party/ for what
                        Bazel 4's WORKSPACE suffix would download (rules_java and
                        remote_coverage_tools are needed by Bazel itself, even for C++ only)
  platforms             Debian's bazel-platforms (/usr/share/bazel/tools/platforms)
  system_libs           Debian's system libraries under /usr (GoogleTest, OpenCL, ...), as
                        third_party/system/system_libs.BUILD declares them

A repository the workspace already defined is left alone, so a consumer can supply its own.
"""

def _in_tree_repository_impl(ctx):
    # The directory of `marker` in clpool's tree, linked entry by entry (a repository rule cannot
    # be given another repository's directory as a path). Bazel fetches it again when `marker` or
    # one of `files` changes (a directory listing is not watched).
    root = ctx.path(ctx.attr.marker).dirname
    for f in ctx.attr.files:
        ctx.path(f)
    for entry in root.readdir():
        ctx.symlink(entry, entry.basename)

# The files of each stand-in beside its WORKSPACE and BUILD.
_FILES = {"remote_coverage_tools": ["lcov_merger.sh"]}

_in_tree_repository = repository_rule(
    implementation = _in_tree_repository_impl,
    attrs = {
        "marker": attr.label(allow_single_file = True, mandatory = True),
        "files": attr.label_list(allow_files = True),
    },
    local = True,
)

def clpool_dependencies():
    """Declares rules_cc, rules_java, remote_coverage_tools, platforms and system_libs."""
    for name in ["rules_cc", "rules_java", "remote_coverage_tools"]:
        if not native.existing_rule(name):
            _in_tree_repository(
                name = name,
                marker = Label("//third_party/%s:WORKSPACE" % name),
                files = [Label("//third_party/%s:%s" % (name, f)) for f in ["BUILD"] + _FILES.get(name, [])],
            )
    if not native.existing_rule("platforms"):
        native.local_repository(
            name = "platforms",
            path = "/usr/share/bazel/tools/platforms",
        )
    if not native.existing_rule("system_libs"):
        native.new_local_repository(
            name = "system_libs",
            build_file = str(Label("//third_party/system:system_libs.BUILD")),
            path = "/usr",
        )
