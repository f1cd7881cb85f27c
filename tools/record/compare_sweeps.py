#!/usr/bin/env python3
"""Compares two `clpool sweep --json` reports of the same program point by point: each failure
point's verdict (crashed, hung, leaked, silent, handled, not reached) and how the run ended (exit
code or signal). For the same program on two devices (a GPU's driver and mockcl, say): where the
program's error paths behave differently.

    compare_sweeps.py LABEL=SWEEP.json LABEL=SWEEP.json

Exit codes: 0 every point agrees, 1 some differ (listed), 2 bad input (a missing or malformed
report, or reports of different failure points).
"""
import json
import sys


def die(message):
    print(f"compare_sweeps.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def load(arg):
    label, sep, path = arg.partition("=")
    if not sep or not label or not path:
        die(f"'{arg}' is not LABEL=SWEEP.json")
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except OSError as e:
        die(f"{path}: {e.strerror}")
    except ValueError as e:
        die(f"{path}: not JSON ({e})")
    if (
        not isinstance(report, dict)
        or report.get("tool") != "clpool sweep"
        or not isinstance(report.get("runs"), list)
    ):
        die(f"{path}: not a clpool sweep JSON report")
    return label, report


def runs_by_point(label, report):
    """{point: run}; a run without a point or a verdict, or a point twice, is bad input."""
    runs = {}
    for run in report["runs"]:
        if (
            not isinstance(run, dict)
            or not isinstance(run.get("point"), str)
            or not isinstance(run.get("verdict"), str)
        ):
            die(f"{label}: a run without a point or a verdict: {str(run)[:80]}")
        if run["point"] in runs:
            die(f"{label}: point {run['point']} appears twice")
        runs[run["point"]] = run
    return runs


def outcome(run):
    how = ""
    if run.get("signal") is not None:
        how = f", signal {run['signal']}"
    elif run.get("exit_code") is not None:
        how = f", exit {run['exit_code']}"
    return run["verdict"] + how


def main(argv):
    if len(argv) != 2:
        die("give two reports: compare_sweeps.py LABEL=SWEEP.json LABEL=SWEEP.json")
    (la, a), (lb, b) = load(argv[0]), load(argv[1])
    runs_a, runs_b = runs_by_point(la, a), runs_by_point(lb, b)
    if sorted(runs_a) != sorted(runs_b):
        die(f"the reports swept different points: {la} {sorted(runs_a)}, {lb} {sorted(runs_b)}")
    print(f"| point | call | {la} | {lb} |")
    print("| --- | --- | --- | --- |")
    differ = []
    for point, ra in runs_a.items():
        rb = runs_b[point]
        oa, ob = outcome(ra), outcome(rb)
        print(f"| {point} | {ra.get('what', '')} | {oa} | {ob} |")
        if oa != ob:
            differ.append(
                f"  {point}: {la} {oa} ({ra.get('detail', '')}); {lb} {ob} "
                f"({rb.get('detail', '')})"
            )
    print()
    if not differ:
        print(f"all {len(runs_a)} points agree")
        return 0
    print(f"{len(differ)} of {len(runs_a)} points differ:")
    print("\n".join(differ))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
