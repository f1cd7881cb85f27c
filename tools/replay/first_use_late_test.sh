#!/usr/bin/env bash
# README.md's "When a buffer is first used", as shown: examples/first_use_late.py recorded on a
# 4 GiB mockcl device under the nvidia profile runs to its end, and so does its replay there,
# which commits each buffer at its recorded first use (trace version 4): it needs 2563 MiB, not
# the 5123 MiB of a replay that takes each buffer as used when made (the same events as a
# version-3 trace, without their first uses).
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
# clpool record's summary: 5 GiB made, 2.5 GiB ever used at once (the replay's peak below).
[[ "$out" == *"peak_device_bytes: 5368709120"* && "$out" == *"use: 2"* &&
  "$out" == *"peak_device_bytes_at_first_use: 2684354560"* ]] || fail "the record's summary: $out"
head -3 "$T/late.trace" | grep -qx "# first_uses: buffer" || fail "no first_uses comment: $(head -3 "$T/late.trace")"
[[ "$(grep -c '^[0-9]* [0-9]* [0-9]* [0-9]* use ' "$T/late.trace")" == 2 ]] || fail "want 2 use events: $(cat "$T/late.trace")"
out="$("$REPLAY" --no-progress "$T/late.trace" --capacity 4GiB --no-pool 2>&1)"
rc=$?
[[ $rc == 0 && "$out" == *"result: replayed cleanly, 6 events, no out-of-memory"* &&
  "$out" == *"peak device used          2.50 GiB (2684354560 bytes)"* &&
  "$out" == *"first uses                the trace records them (buffer; 2 use events)"* ]] ||
  fail "replay at 4 GiB: exit $rc: $out"
out="$("$REPLAY" --no-progress "$T/late.trace" --min-capacity --no-pool 2>&1)"
[[ "$out" == *"minimum capacity: 2563 MiB (2687500288 bytes)"* ]] || fail "minimum capacity: $out"
# With a pool, the first buffer's block is held when the second is first used: it runs out there.
out="$("$REPLAY" --no-progress "$T/late.trace" --capacity 4GiB 2>&1)"
rc=$?
[[ $rc == 1 && "$out" == *"OUT OF MEMORY at event 4 (seq 4, line "*"): use of 2.50 GiB (2684354560 bytes)"* &&
  "$out" == *"deferred allocation failed at first use"* ]] || fail "pool replay at 4 GiB: exit $rc: $out"
# The second buffer, not yet used, is in none of the sites holding device memory; the first's
# block, held by the pool, is.
[[ "$out" == *"not among the sites: 2.50 GiB (2684354560 bytes) in live blocks no command has used yet"* &&
  "$out" == *"sites whose freed blocks the pool still held:"*"first_use_late.py:11)"* &&
  "$out" == *"events replayed           5 (2 alloc, 1 free, 0 alloc_failed, 2 use)"* ]] ||
  fail "pool replay at 4 GiB, its sites: $out"
# At the peak both buffers are live, one of them not yet used: one site holds device memory.
out="$("$REPLAY" --no-progress "$T/late.trace" --capacity 4GiB --no-pool --peak 2>&1)"
[[ "$out" == *"at the peak (event 2): 5 GiB (5368709120 bytes) live"* &&
  "$out" == *"1. <module> ("*"first_use_late.py:11)"* && "$out" != *"2. <module>"* &&
  "$out" == *"not among the sites: 2.50 GiB (2684354560 bytes) in 1 block no command had used yet (the device holds nothing for it)"* ]] ||
  fail "peak sites: $out"
# Without its first uses (the events as version 3), each buffer counts from its creation.
grep -v ' use \|^# first_uses' "$T/late.trace" | sed '1s/.*/clpool-trace 3/' >"$T/late3.trace"
out="$("$REPLAY" --no-progress "$T/late3.trace" --capacity 4GiB --no-pool 2>&1)"
rc=$?
[[ $rc == 1 && "$out" == *"result: OUT OF MEMORY at event 1 (seq 2, line "*"): alloc of 2.50 GiB (2684354560 bytes), id 2"* ]] ||
  fail "version-3 replay at 4 GiB: exit $rc: $out"
out="$("$REPLAY" --no-progress "$T/late3.trace" --min-capacity --no-pool 2>&1)"
[[ "$out" == *"minimum capacity: 5123 MiB (5371854848 bytes)"* ]] || fail "version-3 minimum capacity: $out"
# A sub-buffer the program kept uses its parent after the program let the parent go: the parent
# is still the program's through the sub-buffer, so the layer writes its release after the
# sub-buffer goes (FORMAT.md), after the use; the trace is a valid one, and it replays.
cat >"$T/sub.py" <<'PY'
import numpy as np
import pyopencl as cl
ctx = cl.Context(dev_type=cl.device_type.ALL)
queue = cl.CommandQueue(ctx)
parent = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 1 << 20)
sub = parent.get_sub_region(0, 4096)
del parent
cl.enqueue_fill_buffer(queue, sub, np.uint8(1), 0, 4096)
queue.finish()
print("ok")
PY
out="$(OCL_ICD_VENDORS="$MOCK" MOCKCL_BACKING=none MOCKCL_DEVICES=gpu-64g \
  "$CLPOOL" record --budget 64MiB --profile nvidia --out "$T/sub.trace" -- /usr/bin/python3 "$T/sub.py" 2>&1)"
rc=$?
[[ $rc == 0 && "$out" != *malformed* ]] && grep -qx ok <<<"$out" || fail "sub-buffer recording: exit $rc: $out"
awk '$5 == "release" && $6 == 1 { r = NR } $5 == "use" && $6 == 1 { u = NR } $5 == "free" && $8 == "sub" { f = NR } END { exit !(r && u && f && u < r && f < r) }' "$T/sub.trace" ||
  fail "want the parent used, then its release after the sub-buffer's free: $(grep -v '^frame\|^stack' "$T/sub.trace")"
for frees_at in release wait driver; do
  out="$("$REPLAY" --no-progress "$T/sub.trace" --capacity 64MiB --frees-at "$frees_at" 2>&1)"
  [[ $? == 0 && "$out" == *"replayed cleanly"* ]] || fail "sub-buffer replay, --frees-at $frees_at: $out"
done
finish
