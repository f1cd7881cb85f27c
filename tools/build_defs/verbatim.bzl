"""The program arguments of clpool's test rules, passed through as written.

Bazel expands "Make" variables ($(...), $$) in a test's `args` and splits each one as a Bourne
shell would, so `args = ["two words", "it's"]` reached the program as three words, and the
apostrophe broke the target. Each argument is quoted here so that what Bazel does to it gives
back the string itself.
"""

def verbatim_args(rule, name, args):
    """`args` quoted for a test rule's `args`; fail() naming the target for anything but strings."""
    if type(args) != "list":
        fail("%s(name = \"%s\"): args must be a list of strings" % (rule, name))
    out = []
    for a in args:
        if type(a) != "string":
            fail("%s(name = \"%s\"): args: %r is not a string" % (rule, name, a))
        out.append("'" + a.replace("$", "$$").replace("'", "'\\''") + "'")
    return out
