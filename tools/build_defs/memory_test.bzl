"""clpool_memory_test: a device-memory budget for a C or C++ program, as a Bazel test.

    load("@clpool//tools/build_defs:memory_test.bzl", "clpool_memory_test")

    clpool_memory_test(
        name = "app_memory_test",
        binary = ":app",            # any executable target that uses OpenCL through the ICD loader
        capacity = "2GiB",          # the device it must fit
        profile = "nvidia",         # how that device commits memory (exact, nvidia, pocl)
        limit = "1GiB",             # optional: its peak device memory must not exceed this
        args = ["--frames", "64"],  # optional: the program's arguments
    )

The test runs the program under clpool's OpenCL layer (`clpool record`) on a mockcl device of
`capacity` and `profile` (device = "mockcl", the default; kernels run on POCL where it is
installed), or on the machine's own OpenCL device with the layer enforcing `capacity`
(device = "system"). It fails when the program exits non-zero, when it runs out of device memory
(the layer recorded a refusal), or when its peak device memory (the bytes its live buffers and
SVM blocks asked for) exceeds `limit`, saying the peak in bytes and by how much; then it prints
clpool_replay's report, which names the allocation sites holding the memory (at the
out-of-memory, or at the peak of the whole run), and writes the trace, the report and the HTML
page to the test's undeclared outputs, which Bazel zips: the log names the zip,
bazel-testlogs/PACKAGE/NAME/test.outputs/outputs.zip, or that of its run or shard folder
(Bazel 4.2.3 has no --nozip_undeclared_test_outputs; newer releases do). A pass gives the peak.
Link the program with -rdynamic so that its functions have names in the report. A program that
makes no device allocation passes, saying so.

Every attribute reaches clpool as written (no splitting at blanks: "64 MiB" is a size in clpool's
grammar). A device other than "mockcl" or "system", an attribute that is not a string, or
shard_count fails at loading, and a binary that is not an executable target at analysis, naming
the target and the attribute; a size or profile that clpool refuses (clpool's one size grammar, a
capacity not above the profile's headroom), and a limit above the capacity, fail the test before
the program runs, with clpool's own message naming the attribute. See README.md, "Use it in CI".
"""

load(":verbatim.bzl", "checked_binary", "string_attr", "verbatim", "verbatim_args")

_DEVICES = ["mockcl", "system"]
_RULE = "clpool_memory_test"

def clpool_memory_test(
        name,
        binary,
        capacity,
        profile = "nvidia",
        limit = None,
        args = [],
        device = "mockcl",
        **kwargs):
    """An sh_test that runs `binary` under clpool's layer on a device of `capacity`.

    Args:
      name: the test's name.
      binary: an executable target that uses OpenCL.
      capacity: the device's memory, e.g. "2GiB" or "2 GiB" (with the nvidia profile: the free
        memory the program starts with).
      profile: exact, nvidia or pocl: how the device commits memory and where it reports running
        out (device_model/profiles/).
      limit: optional; the program's peak device memory (requested bytes) must not exceed it, and
        it must not exceed `capacity`.
      args: the program's arguments, passed through verbatim (no $(location) or "Make" variable
        expansion, no splitting at blanks).
      device: "mockcl" (a mock device with this capacity; no GPU needed) or "system" (the
        machine's own OpenCL device, with the layer enforcing the capacity).
      **kwargs: passed to sh_test (size, tags, timeout, ...); not shard_count: the test is one run
        of the program.
    """
    capacity = string_attr(_RULE, name, "capacity", capacity, "\"2GiB\"")
    limit = string_attr(_RULE, name, "limit", limit, "\"1GiB\"") if limit != None else "-"
    profile = string_attr(_RULE, name, "profile", profile, "\"nvidia\" (a profile)")
    if device not in _DEVICES:
        fail("clpool_memory_test(name = \"%s\"): device = %r: use \"mockcl\" or \"system\"" % (name, device))
    if kwargs.get("shard_count", 1) not in [None, 1]:
        fail(("clpool_memory_test(name = \"%s\"): shard_count = %r: a memory test is one run of the " +
              "program and its peak, which shards cannot split (every shard would run it whole); " +
              "drop shard_count (clpool_oom_sweep_test shards its runs)") % (name, kwargs["shard_count"]))
    args = verbatim_args(_RULE, name, args)
    program = checked_binary(_RULE, name, binary, kwargs)
    record = Label("//tools/build_defs:clpool")
    layer = Label("//tools/build_defs:libclpool_layer.so")
    replay = Label("//tools/build_defs:clpool_replay")
    mockcl = Label("//tools/build_defs:libmockcl.so")
    data = [program, record, layer, replay] + ([mockcl] if device == "mockcl" else [])
    native.sh_test(
        name = name,
        srcs = [Label("//tools/build_defs:memory_test.sh")],
        args = [
            "$(rootpath %s)" % record,
            "$(rootpath %s)" % layer,
            "$(rootpath %s)" % replay,
            "$(rootpath %s)" % mockcl if device == "mockcl" else "-",
            verbatim(capacity),
            verbatim(profile),
            verbatim(limit),
            "$(rootpath %s)" % program,
            "--",
        ] + args,
        data = data,
        **kwargs
    )
