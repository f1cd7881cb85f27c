#!/usr/bin/env python3
"""Two device profiles field by field, sizes in bytes and statuses as numbers.

    python3 compare_profiles.py SHIPPED.profile MEASURED.profile

Prints one row per field (name, the first file's value, the second's, same or DIFFERENT); comment
lines are skipped. A key one file leaves out has its default (DEFAULTS, as the profile grammar
says: a missing key keeps the `exact` profile's value), so a key written only when it is not
the default (`commands_finish`, `svm_oom_at`) compares equal to its default spelled out. Exit 0
when every field but `name` is the same, 1 otherwise, 2 when a file cannot be read.
"""
import re
import sys

UNITS = {
    "b": 1,
    "kib": 1 << 10,
    "mib": 1 << 20,
    "gib": 1 << 30,
    "tib": 1 << 40,
    "k": 1 << 10,
    "m": 1 << 20,
    "g": 1 << 30,
    "t": 1 << 40,
}
STATUSES = {
    "CL_MEM_OBJECT_ALLOCATION_FAILURE": -4,
    "CL_OUT_OF_RESOURCES": -5,
    "CL_OUT_OF_HOST_MEMORY": -6,
    "CL_INVALID_BUFFER_SIZE": -61,
}


DEFAULTS = {
    "oom_at": "creation",
    "svm_oom_at": "creation",
    "oom_status": "-4",
    "headroom": "0",
    "page": "1",
    "pack_limit": "0",
    "pack_granule": "1",
    "max_alloc_enforced": "yes",
    "commands_finish": "promptly",
}


def normal(value):
    v = value.strip()
    m = re.fullmatch(r"(\d+)\s*([A-Za-z]*)", v)
    if m and m.group(2).lower() in UNITS:
        return str(int(m.group(1)) * UNITS[m.group(2).lower()])
    if m and not m.group(2):
        return m.group(1)
    if v in STATUSES:
        return str(STATUSES[v])
    return v


def read(path):
    fields = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if "=" in line:
                key, value = line.split("=", 1)
                fields[key.strip()] = (value.strip(), normal(value))
    return fields


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        a, b = read(sys.argv[1]), read(sys.argv[2])
    except OSError as e:
        print("compare_profiles: %s" % e)
        return 2
    differ = 0
    print(
        "%-20s %-36s %-36s %s"
        % ("field", sys.argv[1].split("/")[-1], sys.argv[2].split("/")[-1], "")
    )
    for key in list(a) + [k for k in b if k not in a]:
        missing = ("-", None)
        if key in DEFAULTS:
            missing = ("(default %s)" % DEFAULTS[key], normal(DEFAULTS[key]))
        va, vb = a.get(key, missing), b.get(key, missing)
        same = va[1] == vb[1]
        if not same and key != "name":
            differ += 1

        def show(v):
            if v[1] in (None, v[0]) or v[0].startswith("(default "):
                return v[0]
            return "%s (%s)" % (v[0], v[1])

        print("%-20s %-36s %-36s %s" % (key, show(va), show(vb), "same" if same else "DIFFERENT"))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
