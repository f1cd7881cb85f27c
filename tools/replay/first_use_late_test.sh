#!/usr/bin/env bash
# README.md's "When a buffer is first used", as shown: examples/first_use_late.py recorded on a
# 4 GiB mockcl device under the nvidia profile runs to its end, while its replay, which takes each
# buffer as used when created, runs out at the second buffer and needs 5123 MiB.
#   first_use_late_test.sh CLPOOL CLPOOL_REPLAY LIBMOCKCL_SO PROGRAM_PY
set -u
source tools/dev/testing/test_lib.sh || exit 1  # fail, finish; from the runfiles root
CLPOOL="$(realpath "$1")"
REPLAY="$(realpath "$2")"
MOCK="$(realpath "$3")"
PROG="$(realpath "$4")"
T="${TEST_TMPDIR:-$(mktemp -d)}"
unset OPENCL_LAYERS PYTHONPATH
out="$(OCL_ICD_VENDORS="$MOCK" MOCKCL_BACKING=none MOCKCL_DEVICES=gpu-64g \
  "$CLPOOL" record --budget 4GiB --profile nvidia --out "$T/late.trace" -- /usr/bin/python3 "$PROG" 2>&1)"
rc=$?
[[ $rc == 0 ]] && grep -qx ok <<<"$out" || fail "the recorded run did not end well: exit $rc: $out"
out="$("$REPLAY" --no-progress "$T/late.trace" --capacity 4GiB --no-pool 2>&1)"
[[ $? == 1 && "$out" == *"result: OUT OF MEMORY at event 1 (seq 1, line "*"): alloc of 2.50 GiB (2684354560 bytes), id 2"* ]] ||
  fail "replay at 4 GiB: $out"
out="$("$REPLAY" --no-progress "$T/late.trace" --min-capacity --no-pool 2>&1)"
[[ "$out" == *"minimum capacity: 5123 MiB = 5.00 GiB (5371854848 bytes)"* ]] || fail "minimum capacity: $out"
finish
