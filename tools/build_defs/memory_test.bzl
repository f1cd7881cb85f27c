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
SVM blocks asked for) exceeds `limit`; then it prints clpool_replay's report, which names the
allocation sites holding the memory, and writes the trace, the report and the HTML page to the
test's undeclared outputs (Bazel zips them: bazel-testlogs/PACKAGE/NAME/test.outputs/outputs.zip,
or plain files there with --nozip_undeclared_test_outputs). Link the program with -rdynamic so
that its functions have names in the report. A program that makes no device allocation passes,
saying so. A device other than "mockcl" or "system", or an
attribute that is not a string, fails at loading, naming the target; a size or profile that clpool
refuses (clpool's one size grammar, a capacity not above the profile's headroom) fails the test
before the program runs, with clpool's own message naming the attribute. See README.md, "Use it
in CI".
"""

load(":verbatim.bzl", "verbatim_args")

_DEVICES = ["mockcl", "system"]

def _string(name, attr, value):
    """`value` when it is a non-empty string, else fail() naming the target. What the string says
    (a size in clpool's grammar, a profile) is checked when the test runs, by clpool's own tools
    (memory_test.sh), so that the rule never holds a second copy of their rules."""
    if type(value) != "string" or not value.strip(" \t"):
        fail("clpool_memory_test(name = \"%s\"): %s = %r: give a string such as \"2GiB\"" % (name, attr, value))
    return value

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
      capacity: the device's memory, e.g. "2GiB" (with the nvidia profile: the free memory the
        program starts with).
      profile: exact, nvidia or pocl: how the device commits memory and where it reports running
        out (device_model/profiles/).
      limit: optional; the program's peak device memory (requested bytes) must not exceed it.
      args: the program's arguments, passed through verbatim (no $(location) or "Make" variable
        expansion, no splitting at blanks).
      device: "mockcl" (a mock device with this capacity; no GPU needed) or "system" (the
        machine's own OpenCL device, with the layer enforcing the capacity).
      **kwargs: passed to sh_test (size, tags, timeout, ...).
    """
    capacity = _string(name, "capacity", capacity)
    limit = _string(name, "limit", limit) if limit != None else "-"
    profile = _string(name, "profile", profile)
    if device not in _DEVICES:
        fail("clpool_memory_test(name = \"%s\"): device = %r: use \"mockcl\" or \"system\"" % (name, device))
    args = verbatim_args("clpool_memory_test", name, args)
    record = Label("//tools/build_defs:clpool")
    layer = Label("//tools/build_defs:libclpool_layer.so")
    replay = Label("//tools/build_defs:clpool_replay")
    mockcl = Label("//tools/build_defs:libmockcl.so")
    data = [binary, record, layer, replay] + ([mockcl] if device == "mockcl" else [])
    native.sh_test(
        name = name,
        srcs = [Label("//tools/build_defs:memory_test.sh")],
        args = [
            "$(rootpath %s)" % record,
            "$(rootpath %s)" % layer,
            "$(rootpath %s)" % replay,
            "$(rootpath %s)" % mockcl if device == "mockcl" else "-",
            capacity,
            profile,
            limit,
            "$(rootpath %s)" % binary,
            "--",
        ] + args,
        data = data,
        **kwargs
    )
