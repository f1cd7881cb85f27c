#!/usr/bin/env bash
# Regenerates the table of real programs in tools/dev/real_programs/README.md (between its
# "real-programs-table" markers): runs real_program.sh for hashcat, clpeak and piglit (those
# installed) on POCL and on mockcl and writes one row each.
#
#   tools/dev/real_programs/table.sh [MOCKCL_SO]     default: an optimised build's libmockcl.so (built
#                                                first, --config=opt, as installed)
#
# Exit status: 0 the table was written (a program that failed its checks is still a row, and the
# status is 1), 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")/../../.."
so="${1:-}"
if [[ -z "$so" ]]; then
  bazel build --local_cpu_resources=1 --config=opt --symlink_prefix=/ //mockcl:libmockcl.so >&2
  so="$(bazel info --config=opt bazel-bin 2>/dev/null)/mockcl/libmockcl.so"
fi
rows="$(mktemp)"
status=0
for p in hashcat clpeak piglit; do
  bash tools/dev/real_programs/real_program.sh "$p" "$so" --row "$rows" || status=1
done
table="$(printf '| program | version | command | on POCL | on mockcl (MOCKCL_BACKING=pocl) | seconds, POCL / mockcl |\n'
         printf '| --- | --- | --- | --- | --- | --- |\n'
         awk -F'\t' '{ printf "| %s | %s | `%s` | %s | %s | %s / %s |\n", $1, $2, $3, $4, $5, $6, $7 }' "$rows")"
readme=tools/dev/real_programs/README.md
/usr/bin/python3 - "$readme" "$table" "$(date -u +%Y-%m-%d) on $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import re, sys
path, table, when = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
begin, end = "<!-- real-programs-table -->", "<!-- /real-programs-table -->"
if begin not in text or end not in text:
    sys.exit(f"table.sh: {path} lacks the {begin} ... {end} markers")
new = f"{begin}\n{table}\n\nMade by `tools/dev/real_programs/table.sh`, {when}.\n{end}"
text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda m: new, text, flags=re.S)
open(path, "w").write(text)
PY
rm -f "$rows"
echo "table.sh: wrote the table in $readme" >&2
exit $status
