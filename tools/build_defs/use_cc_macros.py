# python3 tools/build_defs/use_cc_macros.py, from the repository root.
# Every BUILD file that declares cc_library/cc_binary/cc_test loads them from
# //tools/build_defs:cc.bzl (C++20 on the target) instead of using the native rules or
# @rules_cc's forwarders. Idempotent: run it again after a merge.
import pathlib
import re
import subprocess

files = subprocess.run(
    ["git", "ls-files", "BUILD", "*/BUILD"], capture_output=True, text=True, check=True
).stdout.split()
for f in files:
    if f.startswith("third_party/"):
        continue
    p = pathlib.Path(f)
    s = p.read_text()
    used = sorted(set(re.findall(r"(?<![\w.])(cc_binary|cc_library|cc_test)\(", s)))
    s = re.sub(
        r'^load\("(@rules_cc//cc:defs\.bzl|//tools/build_defs:cc\.bzl)",[^\n]*\)\n',
        "",
        s,
        flags=re.M,
    )
    if not used:
        continue
    lines = s.split("\n")
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        i += 1  # after the file's leading comment
    load = 'load("//tools/build_defs:cc.bzl", %s)' % ", ".join('"%s"' % u for u in used)
    lines.insert(i, load)
    if i + 1 < len(lines) and lines[i + 1].strip() and not lines[i + 1].startswith("load("):
        lines.insert(i + 1, "")
    s = "\n".join(lines)
    s = re.sub(r"\)\n\n+(load\()", r")\n\1", s)  # no blank line between loads
    p.write_text(s)
