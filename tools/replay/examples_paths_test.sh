#!/usr/bin/env bash
# The shipped example traces name no file of the machine that recorded them: every frame's file is
# relative to the repository root, or in the system (/usr, /lib), or no file at all (<string>, ?).
#   examples_paths_test.sh TRACE...
set -u
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh || exit 1  # fail, finish; from the runfiles root
traces=0
for trace in "$@"; do
  [[ $trace == *.trace ]] || continue
  traces=$((traces + 1))
  bad="$(awk '$1 == "frame" && $5 ~ /^\// && $5 !~ /^\/(usr|lib|lib64)\// { print FILENAME ":" FNR ": " $5 }' "$trace")"
  if [[ -n $bad ]]; then
    fail "$trace: absolute paths of another machine:"
    echo "$bad" | head -5
  fi
  n=$(awk '$1 == "frame"' "$trace" | wc -l)
  echo "$(basename "$trace"): $n frames"
done
# No trace among the arguments would pass every check above without reading one.
((traces > 0)) || fail "no .trace among the arguments: $*"
finish
