#!/usr/bin/env python3
"""The layering of clpool's packages as data: ARCHITECTURE.md's table (between the markers
"<!-- layering table -->" and "<!-- end of layering table -->") is the one list of Bazel packages
and what each may depend on. tools/dev/lint/check_layering.sh runs this and asks `bazel query` the
questions it generates.

    layering.py check [--repo DIR]      every Bazel package has a row, every row a package, every
                                        package a row names exists; exit 1 naming each problem
    layering.py queries [--repo DIR]    one line per package that has rules of its own to check:
                                        NAME<TAB>FROM<TAB>FORBIDDEN, bazel query expressions

A row: | `pool/opencl/` | what it is | `pool/`, `common/`, `sync/` |. The third column names the
clpool packages the package may depend on, each in backticks and ending in '/'; other words there
are for people (the standard library, OpenCL, CLI11 are always allowed). `*` in backticks: a
package of tests, examples or documentation, which may use any package (its non-test rules are
not checked). What a package may reach is the closure of its row: it may use what the packages it
names may use. The root package is written `//`.
"""

import argparse
import os
import re
import sys

BEGIN = "<!-- layering table -->"
END = "<!-- end of layering table -->"
ANY = "*"


def bazel_packages(repo):
    """Every Bazel package of the workspace at `repo`, as 'pool/opencl/' ('//' for the root)."""
    out = []
    for root, dirs, files in os.walk(repo):
        rel = os.path.relpath(root, repo)
        if rel != "." and ("WORKSPACE" in files or "WORKSPACE.bazel" in files):
            dirs[:] = []  # another repository
            continue
        dirs[:] = [
            d
            for d in dirs
            if not d.startswith(".")
            and not d.startswith("bazel-")
            and not (rel == "." and d == "third_party")
        ]
        if "BUILD" in files or "BUILD.bazel" in files:
            out.append("//" if rel == "." else rel + "/")
    return sorted(out)


def read_table(repo):
    """{package: set of allowed packages, or {ANY}} from ARCHITECTURE.md; raises ValueError."""
    path = os.path.join(repo, "ARCHITECTURE.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        raise ValueError(f"{path}: no layering table (the markers {BEGIN} and {END})")
    body = text[text.index(BEGIN) + len(BEGIN) : text.index(END)]
    table = {}
    for number, line in enumerate(body.splitlines(), 1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue  # the header, its rule, prose
        names = re.findall(r"`([^`]+)`", cells[0])
        if len(names) != 1 or not (names[0].endswith("/") or names[0] == "//"):
            raise ValueError(
                f"layering table: row '{line.strip()}': the first cell names one package"
            )
        package = names[0]
        if package in table:
            raise ValueError(f"layering table: {package} has two rows")
        allowed = set(re.findall(r"`([^`]*/|\*)`", cells[2]))
        table[package] = allowed
    return table


def problems(repo):
    """What is wrong with the table against the tree, one sentence each."""
    try:
        table = read_table(repo)
    except (OSError, ValueError) as e:
        return [str(e)]
    packages = bazel_packages(repo)
    out = []
    for p in packages:
        if p not in table:
            out.append(
                f"package {p} has no row in ARCHITECTURE.md's layering table: add one saying "
                f"what it may depend on"
            )
    for p, allowed in sorted(table.items()):
        if p not in packages:
            out.append(f"the layering table has a row for {p}, which is not a Bazel package")
        for a in sorted(allowed - {ANY}):
            if a not in table:
                out.append(f"the layering table's row for {p} names {a}, which has no row")
            if a == p:
                out.append(f"the layering table's row for {p} names itself")
    return out


def closure(table, package):
    seen, todo = set(), list(table[package] - {ANY})
    while todo:
        p = todo.pop()
        if p in seen or p not in table:
            continue
        seen.add(p)
        todo.extend(table[p] - {ANY})
    return seen


def label(package):
    return "//:all" if package == "//" else f"//{package.rstrip('/')}:all"


def queries(repo):
    """(name, from, forbidden) for every package whose rules are checked."""
    table = read_table(repo)
    out = []
    for p in sorted(table):
        if ANY in table[p]:
            continue
        reach = closure(table, p)
        forbidden = [q for q in sorted(table) if q != p and q not in reach]
        if not forbidden:
            continue
        allowed = ", ".join(sorted(table[p]))
        name = (
            f"{p} depends on {allowed} and what they may use"
            if allowed
            else f"{p} depends on no other package"
        )
        out.append((name, label(p), " + ".join(label(q) for q in forbidden)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["check", "queries"])
    parser.add_argument(
        "--repo", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
    )
    args = parser.parse_args()
    repo = os.path.abspath(args.repo)
    found = problems(repo)
    if found:
        for p in found:
            print(f"check_layering: {p}", file=sys.stderr)
        return 1
    if args.command == "queries":
        for name, source, forbidden in queries(repo):
            print(f"{name}\t{source}\t{forbidden}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
