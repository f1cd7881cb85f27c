"""Compares two piglit result folders test by test (POCL's, then mockcl's) against the expected
differences (piglit_expected.tsv). Prints each side's counts ("pocl: 684 pass, 7 fail, 19 skip")
and every difference; exits 1 if a difference is not expected or an expected one is gone.

    python3 piglit_compare.py POCL_RESULTS MOCKCL_RESULTS EXPECTED_TSV
"""
import bz2
import collections
import json
import os
import sys


def load(folder):
    names = [n for n in os.listdir(folder) if n.startswith("results.json")]
    if not names:
        sys.exit(f"piglit_compare: no results.json* in {folder}")
    path = os.path.join(folder, names[0])
    opener = bz2.open if path.endswith(".bz2") else open
    with opener(path, "rt") as f:
        return {name: t["result"] for name, t in json.load(f)["tests"].items()}


def counts(results):
    c = collections.Counter(results.values())
    return ", ".join(f"{n} {r}" for r, n in c.most_common())


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    pocl, mock = load(sys.argv[1]), load(sys.argv[2])
    expected = {}
    with open(sys.argv[3]) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                test, want_pocl, want_mock, why = line.rstrip("\n").split("\t")
                expected[test] = (want_pocl, want_mock, why)
    print(f"pocl: {len(pocl)} tests, {counts(pocl)}")
    print(f"mockcl: {len(mock)} tests, {counts(mock)}")
    bad = 0
    for test in sorted(set(pocl) | set(mock)):
        got = (pocl.get(test, "missing"), mock.get(test, "missing"))
        if got[0] == got[1]:
            if test in expected:
                print(f"FAIL: {test}: expected to differ ({expected[test][2]}) but both {got[0]}")
                bad += 1
            continue
        if test in expected and expected[test][:2] == got:
            print(f"expected: {test}: POCL {got[0]}, mockcl {got[1]}: {expected[test][2]}")
            continue
        print(f"FAIL: {test}: POCL {got[0]}, mockcl {got[1]}")
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
