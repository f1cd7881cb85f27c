#!/usr/bin/env python3
"""Production functions longer than the project allows (80 lines; CONTRIBUTING.md, "Two length checks").

    tools/dev/lint/function_length.py [--max N] [--max-file-lines M] [ROOT]

Lists every function of ROOT's production code (C++ .cc/.h and Python .py; not tests, fuzzers,
benchmarks, testing helpers or third_party) longer than N lines, from its opening line to its
closing brace (C++) or its last line (Python), and exits 1 if there is one. C++ is read with
comments, literals and preprocessor lines taken out and braces counted: a brace that opens at
namespace or class level after a parameter list is a function body (lambdas inside count with
their function). Run by tools/test.sh; tested by tools/dev/lint/function_length_test.sh.

It also lists every production file longer than M lines (default 500), and exits 1 if there is
one. No file is exempt: a file that grows past M is split by what it does.
"""
import argparse
import ast
import os
import re
import sys

SKIP_DIRS = {"fuzz", "tests", "testing", "third_party", "bench", "testdata", "examples"}


def production(path):
    parts = path.split(os.sep)
    if any(p in SKIP_DIRS or p.startswith("bazel-") or p.startswith(".") for p in parts[:-1]):
        return False
    name = parts[-1]
    if re.search(r"(_test|_bench|_fuzzer)\.(cc|h|py)$", name) or name.startswith("test_"):
        return False
    return name.endswith((".cc", ".h", ".py"))


DIRECTIVE = re.compile(r"[ \t]*#")


def strip_cpp(src):
    """Comments, string and character literals and preprocessor lines out; newlines kept."""
    out, i, n = [], 0, len(src)
    at_line_start = True
    while i < n:
        c = src[i]
        if at_line_start and DIRECTIVE.match(src, i):
            # A directive, with its continuation lines.
            j = i
            while True:
                k = src.find("\n", j)
                if k < 0:
                    k = n
                    break
                if src[k - 1] != "\\":
                    break
                out.append("\n")
                j = k + 1
            i = k
            continue
        at_line_start = False
        if src.startswith("//", i):
            k = src.find("\n", i)
            i = n if k < 0 else k
            continue
        if src.startswith("/*", i):
            k = src.find("*/", i + 2)
            k = n if k < 0 else k + 2
            out.append("\n" * src.count("\n", i, k))
            i = k
            continue
        m = re.match(r'(?:u8|u|U|L)?R"([^(\s]*)\(', src[i : i + 24]) if c in "uULR" else None
        if m and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            end = ")" + m.group(1) + '"'
            k = src.find(end, i + m.end())
            k = n if k < 0 else k + len(end)
            out.append('""' + "\n" * src.count("\n", i, k))
            i = k
            continue
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        if c == "\n":
            at_line_start = True
        out.append(c)
        i += 1
    return "".join(out)


def long_cpp_functions(path, text, limit):
    s = strip_cpp(text)
    stack, last, line, found = [], 0, 1, []
    for i, c in enumerate(s):
        if c == "\n":
            line += 1
        elif c == ";":
            last = i + 1
        elif c == "{":
            head = " ".join(s[last:i].split())
            kind = "block"
            if all(k in ("namespace", "class") for k, _, _ in stack):
                if (
                    re.search(r"\bnamespace\b", head)
                    and ")" not in head
                    or head.startswith('extern ""')
                ):
                    kind = "namespace"
                elif re.match(
                    r"(template\s*<.*>\s*)?(struct|class|union|enum)\b", head
                ) and not head.endswith(")"):
                    kind = "class"
                elif ")" in head and not head.endswith("="):
                    kind = "function"
            stack.append((kind, line, head))
            last = i + 1
        elif c == "}":
            if stack:
                kind, first, head = stack.pop()
                if kind == "function" and line - first + 1 > limit:
                    name = re.sub(r"\s*\(.*", "", head).split()[-1] if "(" in head else head
                    found.append((path, first, line - first + 1, name))
            last = i + 1
    return found


def long_python_functions(path, text, limit):
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    return [
        (path, n.lineno, n.end_lineno - n.lineno + 1, n.name)
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        and n.end_lineno - n.lineno + 1 > limit
    ]


def long_file(rel, text, limit):
    """The message for a file over `limit` lines, or None."""
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if lines <= limit:
        return None
    return f"{rel}: {lines} lines (at most {limit})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=80, help="the most lines a function may have")
    parser.add_argument(
        "--max-file-lines",
        type=int,
        default=500,
        metavar="M",
        help="the most lines a production file may have",
    )
    parser.add_argument("root", nargs="?", default=".")
    args = parser.parse_args()
    if args.max < 1:
        parser.error("--max must be at least 1")
    if args.max_file_lines < 1:
        parser.error("--max-file-lines must be at least 1")
    if not os.path.isdir(args.root):
        parser.error(f"{args.root!r} is not a directory")
    found, files_over = [], []
    for root, dirs, files in os.walk(args.root):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "bazel-")))
        for name in sorted(files):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, args.root)
            if not production(rel):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            check = long_python_functions if name.endswith(".py") else long_cpp_functions
            found += check(rel, text, args.max)
            over = long_file(rel, text, args.max_file_lines)
            if over is not None:
                files_over.append(over)
    for path, first, length, name in found:
        print(f"{path}:{first}: {name} is {length} lines (at most {args.max})")
    for message in files_over:
        print(message)
    if found or files_over:
        if found:
            print(
                f"function_length: {len(found)} production function(s) over {args.max} lines",
                file=sys.stderr,
            )
        if files_over:
            print(
                f"function_length: {len(files_over)} production file(s) over {args.max_file_lines} lines",
                file=sys.stderr,
            )
        return 1
    print(
        f"function_length: ok: no production function over {args.max} lines, no production file "
        f"over {args.max_file_lines} lines",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
