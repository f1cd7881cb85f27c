"""The attributes of clpool's test rules, passed through as written, and checked in their names.

Bazel expands "Make" variables ($(...), $$) in a test's `args` and splits each one as a Bourne
shell would, so `args = ["two words", "it's"]` reached the program as three words, and the
apostrophe broke the target; so did `capacity = "64 MiB"` or `profile = "nvidia exact"`, which
reached clpool as two words. Each value is quoted here so that what Bazel does to it gives back
the string itself, and clpool's own parsers judge it whole. What a string says (a size, a
profile, a kind of point) is left to clpool's tools; here only its type, so that a wrong type
fails at loading naming the attribute rather than in Bazel's words about sh_test's `args`.
"""

def verbatim(value):
    """One string quoted for a test rule's `args`: Bazel's expansion and splitting give it back."""
    return "'" + value.replace("$", "$$").replace("'", "'\\''") + "'"

def verbatim_args(rule, name, args):
    """`args` quoted for a test rule's `args`; fail() naming the target for anything but strings."""
    if type(args) != "list":
        fail("%s(name = \"%s\"): args must be a list of strings" % (rule, name))
    out = []
    for a in args:
        if type(a) != "string":
            fail("%s(name = \"%s\"): args: %r is not a string" % (rule, name, a))
        out.append(verbatim(a))
    return out

def string_attr(rule, name, attr, value, example):
    """`value` when it is a string that is not blank, else fail() naming the target, the attribute
    and `example` (what such a value looks like)."""
    if type(value) != "string" or not value.strip(" \t"):
        fail("%s(name = \"%s\"): %s = %r: give a string such as %s" % (rule, name, attr, value, example))
    return value

def _executable_impl(ctx):
    target = ctx.attr.binary
    exe = target[DefaultInfo].files_to_run.executable
    if exe == None or exe.is_source:
        fail("%s(name = \"%s\"): binary = \"%s\" %s: give an executable target (a cc_binary, " %
             (ctx.attr.rule, ctx.attr.test, target.label, "is a source file" if exe else "has no program to run") +
             "sh_binary, py_binary, ...)")
    runfiles = ctx.runfiles(files = [exe]).merge(target[DefaultInfo].default_runfiles)
    return [DefaultInfo(files = depset([exe]), default_runfiles = runfiles, data_runfiles = runfiles)]

# The program a test rule runs: its `binary` attribute's executable with its runfiles, or an
# analysis error naming the attribute: a library has no program to run ($(rootpath) said
# "expands to no files"), and a source file is not one (a script is run through sh_binary).
executable = rule(
    implementation = _executable_impl,
    attrs = {
        "binary": attr.label(mandatory = True, allow_files = True),
        "rule": attr.string(),
        "test": attr.string(),
    },
)

def checked_binary(rule, name, binary, kwargs):
    """Declares the target that checks `binary` for the test `name` and returns its label."""
    checked = "%s.binary" % name
    executable(
        name = checked,
        binary = binary,
        rule = rule,
        test = name,
        testonly = True,
        tags = ["manual"],
        visibility = ["//visibility:private"],
        target_compatible_with = kwargs.get("target_compatible_with"),
    )
    return ":" + checked
