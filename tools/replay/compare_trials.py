#!/usr/bin/env python3
"""Compares the --trials of two clpool_replay JSON reports of the same trace, trial by trial: the
verdict (clean or out of memory) and, where both ran out, the first failing allocation (its event).

    compare_trials.py LABEL=REPORT.json LABEL=REPORT.json

Prints one line per configuration: how many trials agree, the smallest clean capacity of each
(the boundary), and every trial that differs. Exit codes: 0 every trial agrees, 1 some differ,
2 bad input (a missing or malformed report, reports without trials, or trials at different
capacities or configurations).
"""
import json
import sys


def die(message):
    print(f"compare_trials.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def load(arg):
    label, sep, path = arg.partition("=")
    if not sep or not label or not path:
        die(f"'{arg}' is not LABEL=REPORT.json")
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except OSError as e:
        die(f"{path}: {e.strerror}")
    except ValueError as e:
        die(f"{path}: not JSON ({e})")
    try:
        configs = {r["config"]: r["trials"] for r in report["results"] if r.get("trials")}
    except (AttributeError, KeyError, TypeError):
        die(f"{path}: not a clpool_replay JSON report")
    if not configs:
        die(f"{path}: has no trials (run clpool_replay with --trials LO:HI:STEP --format json)")
    for config, trials in configs.items():
        for t in trials:
            if (
                not isinstance(t, dict)
                or not isinstance(t.get("capacity"), int)
                or not isinstance(t.get("ok"), bool)
                or (not t["ok"] and not isinstance((t.get("oom") or {}).get("event_index"), int))
            ):
                die(
                    f"{path}: {config}: a trial without a capacity, a verdict or its failing event: "
                    f"{str(t)[:80]}"
                )
    return label, configs


def device_note(trial):
    """A real device's account of the trial's start, where the report has one."""
    if "fill_accepted_bytes" not in trial:
        return ""
    free = trial.get("device_free_bytes")
    said = f"said {free} free, " if free is not None else ""
    return f" (the device {said}a fill took {trial['fill_accepted_bytes']})"


def verdict(trial):
    if trial["ok"]:
        return "clean"
    return f"OOM at event {trial['oom']['event_index']}"


def boundary(trials):
    """The smallest capacity from which every trial is clean, or None."""
    first = None
    for t in trials:
        if t["ok"]:
            first = t["capacity"] if first is None else first
        else:
            first = None
    return first


def main(argv):
    if len(argv) != 2:
        die("give two reports: compare_trials.py LABEL=REPORT.json LABEL=REPORT.json")
    (la, a), (lb, b) = load(argv[0]), load(argv[1])
    if sorted(a) != sorted(b):
        die(f"{la} has configurations {sorted(a)}, {lb} has {sorted(b)}")
    differ = 0
    for config in a:
        ta, tb = a[config], b[config]
        if [t["capacity"] for t in ta] != [t["capacity"] for t in tb]:
            die(f"{config}: the two reports' trials are at different capacities")
        diffs = [
            (x["capacity"], verdict(x) + device_note(x), verdict(y) + device_note(y))
            for x, y in zip(ta, tb)
            if verdict(x) != verdict(y)
        ]
        differ += len(diffs)
        print(
            f"{config}: {len(ta) - len(diffs)} of {len(ta)} trials agree; clean from "
            f"{la} {boundary(ta)}, {lb} {boundary(tb)} bytes"
        )
        for cap, va, vb in diffs:
            print(f"  {cap} B ({cap / 1048576:.4f} MiB): {la} {va}; {lb} {vb}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
