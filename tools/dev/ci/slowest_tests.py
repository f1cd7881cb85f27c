#!/usr/bin/env python3
"""The slowest tests of one or more Bazel runs, from their build event files.

    tools/dev/ci/slowest_tests.py [--top N] LABEL=BEP.json...

Each BEP.json is what `bazel test --build_event_json_file=BEP.json` wrote; LABEL names the run
(`default`, `asan`). Prints the N slowest test attempts over all of them (default 10), one line
each: seconds, run, target, status. A missing or unreadable file is named and left out (the step
that should have written it failed, and says so itself); exit 0 unless the arguments are wrong.
"""
import argparse
import json
import sys


def attempts(path):
    """(seconds, target, status) of every test attempt in one build event file."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # a run cut short leaves its last line unfinished
            test = event.get("id", {}).get("testResult")
            if test is None:
                continue
            result = event.get("testResult", {})
            millis = result.get("testAttemptDurationMillis")
            if millis is None:
                continue
            yield int(millis) / 1000.0, test.get("label", "?"), result.get("status", "?")


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
            rows += [(s, label, target, status) for s, target, status in attempts(path)]
        except OSError as e:
            print(f"slowest_tests.py: {label}: {path}: {e.strerror}: left out", file=sys.stderr)
    rows.sort(key=lambda r: -r[0])
    print(f"the {min(args.top, len(rows))} slowest tests (of {len(rows)} attempts):")
    for seconds, label, target, status in rows[: args.top]:
        print(f"  {seconds:8.1f} s  {label:8}  {target}  {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
