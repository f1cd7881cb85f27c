"""clpool_oom_sweep_test: every out-of-memory a program can meet, tried one by one, as a Bazel test.

    load("@clpool//tools/build_defs:oom_sweep.bzl", "clpool_oom_sweep_test")

    clpool_oom_sweep_test(
        name = "app_oom_sweep_test",
        binary = ":app",            # any executable target that uses OpenCL through the ICD loader
        args = ["--frames", "64"],  # optional: the program's arguments
        profile = "nvidia",         # where and how the device fails (exact, nvidia, pocl)
        shard_count = 4,            # optional: Bazel spreads the runs over 4 shards
    )

The test runs `clpool sweep` (tools/record/README.md, "clpool sweep") on the program, on a mockcl
device: a fault-free run finds its failure points, then one run per point fails exactly that
point, and the test fails when any run crashed, hung or leaked device memory; its text report
is in the log, and the JSON and the page with every run's trace are in the test's undeclared
outputs, whose zip the log names. The log's paths are a user's after the test: the program and
clpool under bazel-bin/, each replay command with the OCL_ICD_VENDORS it needs, to run from the
workspace's root. With shard_count, each shard runs every Nth point (TEST_SHARD_INDEX of
TEST_TOTAL_SHARDS, the shards together the whole sweep), so Bazel's local jobs or its remote
execution spread one sweep unchanged. `bazel test --test_filter=alloc:3` runs that one point
(clpool sweep's --only; with shards, in the shard whose points include it). Every value reaches
clpool sweep as written and is checked by it before any run, its refusal naming the attribute
(`points: 'allocs' is not alloc, first-use or all`); a value of the wrong type fails at loading,
and a binary that is not an executable target at analysis.
"""

load(":verbatim.bzl", "checked_binary", "string_attr", "verbatim", "verbatim_args")

_RULE = "clpool_oom_sweep_test"

def clpool_oom_sweep_test(
        name,
        binary,
        args = [],
        profile = "nvidia",
        points = "all",
        until_free = False,
        timeout_seconds = None,
        device = "mockcl",
        **kwargs):
    """An sh_test that runs clpool sweep on `binary`.

    Args:
      name: the test's name.
      binary: an executable target that uses OpenCL.
      args: the program's arguments, passed through verbatim (no $(location) or "Make" variable
        expansion, no splitting at blanks).
      profile: exact, nvidia or pocl (or a profile file): where and how the device fails.
      points: "all", "alloc" or "first-use".
      until_free: True or False: after the failing point the device stays full until the program
        frees memory.
      timeout_seconds: a number of seconds: a run is hung after this long (default: from the
        fault-free run).
      device: "mockcl" (the mock device; no GPU needed) or "system" (the machine's own device).
      **kwargs: passed to sh_test (size, tags, shard_count, timeout, ...).
    """
    if device not in ["mockcl", "system"]:
        fail("clpool_oom_sweep_test(name = \"%s\"): device = %r: use \"mockcl\" or \"system\"" % (name, device))
    profile = string_attr(_RULE, name, "profile", profile, "\"nvidia\" (a profile)")
    points = string_attr(_RULE, name, "points", points, "\"all\", \"alloc\" or \"first-use\"")
    if type(until_free) != "bool":
        fail("clpool_oom_sweep_test(name = \"%s\"): until_free = %r: give True or False" % (name, until_free))
    if timeout_seconds != None and type(timeout_seconds) != "int":
        timeout_seconds = string_attr(_RULE, name, "timeout_seconds", timeout_seconds, "30 (seconds)")
    args = verbatim_args(_RULE, name, args)
    program = checked_binary(_RULE, name, binary, kwargs)

    # Each flag with the attribute it came from (ATTRIBUTE=FLAG): the test states clpool sweep's
    # refusal of a value in the attribute's name.
    flags = ["profile=--profile", verbatim(profile), "points=--points", verbatim(points)]
    if until_free:
        flags.append("until_free=--until-free")
    if timeout_seconds != None:
        flags += ["timeout_seconds=--timeout", verbatim(str(timeout_seconds))]
    clpool = Label("//tools/build_defs:clpool")
    layer = Label("//tools/build_defs:libclpool_layer.so")
    mockcl = Label("//tools/build_defs:libmockcl.so")
    native.sh_test(
        name = name,
        srcs = [Label("//tools/build_defs:oom_sweep_test.sh")],
        args = [
            "$(rootpath %s)" % clpool,
            "$(rootpath %s)" % layer,
            "$(rootpath %s)" % mockcl if device == "mockcl" else "-",
            "$(rootpath %s)" % program,
        ] + flags + ["--"] + args,
        data = [program, clpool, layer] + ([mockcl] if device == "mockcl" else []),
        **kwargs
    )
