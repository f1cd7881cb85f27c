#!/usr/bin/env bash
# The layering of ARCHITECTURE.md, checked: its table of packages (tools/dev/lint/layering.py reads
# it) must have a row for every Bazel package and no other, and no library or binary of a package (its
# tests may use anything) may reach, directly or not, a package its row does not allow; the
# queries are generated from the table, so a new row is checked with no further work. Bazel's
# visibility enforces some of the same arrows at build time.
# Run from anywhere; exits 1 naming every problem and every arrow that points the wrong way.
# tools/test.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/../../.."

python3 tools/dev/lint/layering.py check  # a package without a row, a row without a package: exit 1
status=0
while IFS=$'\t' read -r name from forbidden; do
  found=$(bazel query --noshow_progress --noimplicit_deps \
    "let prod = ($from) - attr(testonly, 1, $from) - tests($from) in deps(\$prod) intersect ($forbidden)" \
    2>/dev/null | grep '^//' || true)
  if [[ -n "$found" ]]; then
    echo "check_layering: $name, yet:" >&2
    for target in $found; do
      bazel query --noshow_progress --noimplicit_deps \
        "somepath(($from) - attr(testonly, 1, $from) - tests($from), $target)" 2>/dev/null | sed 's/^/  /' >&2
      echo "  --" >&2
    done
    status=1
  else
    echo "check_layering: ok: $name"
  fi
done < <(python3 tools/dev/lint/layering.py queries)
exit $status
