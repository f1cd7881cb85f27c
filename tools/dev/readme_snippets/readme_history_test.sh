#!/usr/bin/env bash
# READMEs are for users: no run logs or development history (those live in
# docs/measurements.md). Refuses, in the files given, a heading that carries a date (a notebook
# entry, "### Something (2026-11-22)") and libFuzzer's own progress lines pasted from a run.
set -u
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh || exit 1  # fail, finish; from the runfiles root
for f in "$@"; do
  if grep -n -E '^#+ .*\(?20[0-9]{2}-[0-9]{2}-[0-9]{2}\)?' "$f"; then
    fail "$f: a dated heading (move the entry to docs/measurements.md)"
  fi
  if grep -n -E '^#[0-9]+[[:space:]]+(INITED|DONE|NEW|REDUCE|pulse|RELOAD)[[:space:]]' "$f"; then
    fail "$f: a pasted fuzzer log (move it to docs/measurements.md)"
  fi
done
((fails)) || echo "no run logs in the READMEs"
finish
