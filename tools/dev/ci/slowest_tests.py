#!/usr/bin/env python3
"""The slowest tests of one or more Bazel runs, from their build event files.

    tools/dev/ci/slowest_tests.py [--top N] LABEL=BEP.json...

Each BEP.json is what `bazel test --build_event_json_file=BEP.json` wrote; LABEL names the run
(`default`, `asan`). Prints the N slowest test attempts over all of them (default 10), one line
each: seconds, run, target, status. Then the margin of each test's size: every attempt that took
more than half its timeout (CONTRIBUTING.md: a test's size holds with a 2x margin under ASan on a
busy 2-core machine), or one line saying none did, with the attempt closest to it. A missing or
unreadable file is named and left out (the step that should have written it failed, and says so
itself); exit 0 unless the arguments are wrong: the margin is reported, not enforced, since it
depends on how busy the machine was.
"""
import argparse
import json
import sys


def attempts(path):
    """(seconds, target, status, timeout seconds or None) of every test attempt in one build event
    file. A test's timeout comes from its targetCompleted event, which Bazel writes after the
    attempts."""
    found, timeouts = [], {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # a run cut short leaves its last line unfinished
            ids = event.get("id", {})
            completed = ids.get("targetCompleted")
            if completed is not None:
                seconds = event.get("completed", {}).get("testTimeoutSeconds")
                if seconds is not None:
                    timeouts[completed.get("label", "?")] = int(seconds)
            test = ids.get("testResult")
            if test is None:
                continue
            result = event.get("testResult", {})
            millis = result.get("testAttemptDurationMillis")
            if millis is None:
                continue
            found.append((int(millis) / 1000.0, test.get("label", "?"), result.get("status", "?")))
    return [(s, target, status, timeouts.get(target)) for s, target, status in found]


def print_margins(rows):
    """The attempts past half their timeout, or the one closest to it."""
    timed = [r for r in rows if r[4]]
    if not timed:
        return
    tight = sorted((r for r in timed if r[0] * 2 > r[4]), key=lambda r: -r[0] / r[4])
    if not tight:
        s, label, target, _, timeout = max(timed, key=lambda r: r[0] / r[4])
        print(
            f"every test within half its timeout; closest: {target} ({label}) "
            f"{s:.1f} s of {timeout} s"
        )
        return
    print(f"{len(tight)} tests past half their timeout (give them a larger size, or split them):")
    for s, label, target, status, timeout in tight:
        print(f"  {s:8.1f} s of {timeout:5d} s  {label:8}  {target}  {status}")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("runs", nargs="+", metavar="LABEL=BEP.json")
    args = parser.parse_args(argv)
    if args.top < 1:
        parser.error(f"--top {args.top}: give a positive number")
    rows = []
    for run in args.runs:
        label, sep, path = run.partition("=")
        if not sep or not label or not path:
            parser.error(f"'{run}': give LABEL=BEP.json")
        try:
            rows += [(s, label, target, status, t) for s, target, status, t in attempts(path)]
        except OSError as e:
            print(f"slowest_tests.py: {label}: {path}: {e.strerror}: left out", file=sys.stderr)
    rows.sort(key=lambda r: -r[0])
    print(f"the {min(args.top, len(rows))} slowest tests (of {len(rows)} attempts):")
    for seconds, label, target, status, _ in rows[: args.top]:
        print(f"  {seconds:8.1f} s  {label:8}  {target}  {status}")
    print_margins(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
