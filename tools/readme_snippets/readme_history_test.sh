#!/usr/bin/env bash
# READMEs are for users: no run logs or development history (those live in
# docs/measurements.md). Refuses, in the files given, a heading that carries a date (a notebook
# entry, "### Something (2026-11-22)") and libFuzzer's own progress lines pasted from a run.
set -u
fails=0
for f in "$@"; do
  if grep -n -E '^#+ .*\(?20[0-9]{2}-[0-9]{2}-[0-9]{2}\)?' "$f"; then
    echo "FAIL: $f: a dated heading (move the entry to docs/measurements.md)"
    fails=$((fails + 1))
  fi
  if grep -n -E '^#[0-9]+[[:space:]]+(INITED|DONE|NEW|REDUCE|pulse|RELOAD)[[:space:]]' "$f"; then
    echo "FAIL: $f: a pasted fuzzer log (move it to docs/measurements.md)"
    fails=$((fails + 1))
  fi
done
(( fails == 0 )) && echo "no run logs in the READMEs" || exit 1
