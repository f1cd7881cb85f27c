#!/usr/bin/env python3
"""Puts clpool_first_use tables side by side: one column per table, one row per case, each cell
the step that reported the failure and its status ("enqueue -4", "create NULL", "none"), then the
cases where the tables disagree.

    compare_first_use.py LABEL=FILE LABEL=FILE [...]

Exit codes: 0 all tables agree on every case, 1 they differ (the differences are listed), 2 bad
input (a missing or malformed file, fewer than two tables).
"""
import sys

COLUMNS = [
    "case",
    "call",
    "create",
    "enqueue",
    "finish",
    "event",
    "fails_at",
    "control",
    "usable_after",
    "note",
]


def die(message):
    print(f"compare_first_use.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def read_table(path):
    """{case: row dict} in file order, and the '#' header lines."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        die(f"{path}: {e.strerror}")
    header = [line for line in lines if line.startswith("#")]
    # The table starts at its header line; what comes before it that is not a '#' line (a note
    # on standard error, captured with the table) is not part of it.
    start = next((i for i, line in enumerate(lines) if line.split("\t") == COLUMNS), None)
    if start is None:
        die(f"{path}: not a clpool_first_use table (no header line: {' '.join(COLUMNS)})")
    body = [line for line in lines[start:] if line and not line.startswith("#")]
    rows = {}
    for n, line in enumerate(body[1:], start=2):
        cells = line.split("\t")
        if len(cells) != len(COLUMNS):
            die(f"{path}: table line {n} has " f"{len(cells)} cells, not {len(COLUMNS)}")
        rows[cells[0]] = dict(zip(COLUMNS, cells))
    return rows, header


def outcome(row):
    """What a case came to, in the words the comparison uses."""
    if row is None:
        return "(absent)"
    step = row["fails_at"]
    words = "none" if step == "none" else f"{step} {row[step]}"
    if row["note"] != "-":
        words += " (" + row["note"] + ")"
    if row["control"] != "ok":
        words += "; control FAILED"
    if row["usable_after"] != "yes":
        words += "; context NOT usable after"
    return words


def main(argv):
    tables = []
    for arg in argv:
        label, sep, path = arg.partition("=")
        if not sep or not label or not path:
            die(f"'{arg}' is not LABEL=FILE")
        rows, header = read_table(path)
        tables.append((label, rows, header))
    if len(tables) < 2:
        die("give at least two tables: compare_first_use.py LABEL=FILE LABEL=FILE [...]")
    cases = []
    for _, rows, _ in tables:
        cases += [c for c in rows if c not in cases]
    for label, _, header in tables:
        for line in header:
            print(f"{label}: {line.lstrip('# ')}")
    print()
    print("| case | call | " + " | ".join(label for label, _, _ in tables) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in tables) + " |")
    differ = []
    for case in cases:
        cells = [outcome(rows.get(case)) for _, rows, _ in tables]
        call = next(rows[case]["call"] for _, rows, _ in tables if case in rows)
        print(f"| {case} | {call} | " + " | ".join(cells) + " |")
        if len(set(cells)) > 1:
            differ.append((case, cells))
    print()
    if not differ:
        print(f"all {len(tables)} tables agree on all {len(cases)} cases")
        return 0
    print(f"{len(differ)} of {len(cases)} cases differ:")
    for case, cells in differ:
        print(
            f"  {case}: "
            + "; ".join(f"{label}: {cell}" for (label, _, _), cell in zip(tables, cells))
        )
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
