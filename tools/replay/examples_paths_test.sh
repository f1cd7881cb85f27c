#!/usr/bin/env bash
# The shipped example traces name no file of the machine that recorded them: every frame's file is
# relative to the repository root, or in the system (/usr, /lib), or no file at all (<string>, ?).
#   examples_paths_test.sh TRACE...
set -u
fails=0
for trace in "$@"; do
  [[ $trace == *.trace ]] || continue
  bad="$(awk '$1 == "frame" && $5 ~ /^\// && $5 !~ /^\/(usr|lib|lib64)\// { print FILENAME ":" FNR ": " $5 }' "$trace")"
  if [[ -n $bad ]]; then
    echo "FAIL: absolute paths of another machine:"
    echo "$bad" | head -5
    fails=$((fails + 1))
  fi
  n=$(awk '$1 == "frame"' "$trace" | wc -l)
  echo "$(basename "$trace"): $n frames"
done
[[ $fails == 0 ]] || exit 1
echo PASS
