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
test's undeclared outputs (bazel-testlogs/.../test.outputs/). Link the program with -rdynamic so
that its functions have names in the report. A bad size, profile or device fails at loading, with
a message naming the target and the attribute. See README.md, "Use it in CI".
"""

_UNITS = {
    "": 0,
    "b": 0,
    "k": 10,
    "kib": 10,
    "m": 20,
    "mib": 20,
    "g": 30,
    "gib": 30,
    "t": 40,
    "tib": 40,
}
_DECIMAL = {"kb": "KiB", "mb": "MiB", "gb": "GiB", "tb": "TiB"}
_PROFILES = ["exact", "nvidia", "pocl"]
_DEVICES = ["mockcl", "system"]

def _size(name, attr, text):
    """Bytes of `text` in clpool's size grammar (common/byte_size.h), or fail() naming the target."""
    where = "clpool_memory_test(name = \"%s\"): %s = %r" % (name, attr, text)
    if type(text) != "string":
        fail("%s: give a string such as \"2GiB\"" % where)
    s = text.strip(" \t")
    digits = ""
    for c in s.elems():
        if not c.isdigit():
            break
        digits += c
    if not digits:
        fail("%s is not a size: write digits and a unit, such as \"2GiB\" or \"512MiB\"" % where)
    unit = s[len(digits):].strip(" \t").lower()
    if unit in _DECIMAL:
        fail("%s is ambiguous: decimal units are not accepted; write %s%s" % (where, digits, _DECIMAL[unit]))
    if unit not in _UNITS:
        fail("%s has an unknown unit (use B, KiB, MiB, GiB or TiB, or k, m, g, t)" % where)
    value = int(digits)
    for _ in range(_UNITS[unit]):
        value *= 2
    if value == 0:
        fail("%s must be more than 0" % where)
    if value > 4611686018427387904:
        fail("%s is larger than the largest device, 2^62 bytes (4 EiB)" % where)
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
      args: the program's arguments.
      device: "mockcl" (a mock device with this capacity; no GPU needed) or "system" (the
        machine's own OpenCL device, with the layer enforcing the capacity).
      **kwargs: passed to sh_test (size, tags, timeout, ...).
    """
    capacity_bytes = _size(name, "capacity", capacity)
    limit_bytes = _size(name, "limit", limit) if limit != None else 0
    if profile not in _PROFILES:
        fail("clpool_memory_test(name = \"%s\"): profile = %r is not a device profile: use one of %s" %
             (name, profile, ", ".join(_PROFILES)))
    if profile == "nvidia" and capacity_bytes <= 2752512:
        fail("clpool_memory_test(name = \"%s\"): capacity = %r leaves nothing usable: the nvidia " % (name, capacity) +
             "profile keeps 2688KiB for the driver")
    if device not in _DEVICES:
        fail("clpool_memory_test(name = \"%s\"): device = %r: use \"mockcl\" or \"system\"" % (name, device))
    if type(args) != "list":
        fail("clpool_memory_test(name = \"%s\"): args must be a list of strings" % name)
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
            str(capacity_bytes),
            profile,
            str(limit_bytes),
            "$(rootpath %s)" % binary,
            "--",
        ] + args,
        data = data,
        **kwargs
    )
