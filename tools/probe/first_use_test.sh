#!/usr/bin/env bash
# clpool_first_use as a user runs it: --help, strict input checking (each bad value exits 2 with
# one error line on stderr), and the tables it prints on mockcl (the `nvidia` and `exact`
# profiles, and one whose SVM is refused at first use) and through the layer's budget
# (CLPOOL_LAYER_PROFILE: nvidia and the SVM one), compared with
# tools/probe/compare_first_use.py as the GPU session compares them with the real driver.
set -u
BIN="$1"
SO="$(realpath "$2")"
LAYER="$(realpath "$3")"
COMPARE="$4"
T="${TEST_TMPDIR:-/tmp}"
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh  # fail, finish, expect_run, mockcl_icd; from the runfiles root

mockcl_icd "$T/mock" "$SO"
export OCL_ICD_VENDORS="$T/mock/mockcl.icd"
export MOCKCL_BACKING=none
# A 256 MiB card that says how much it has free; max alloc above the buffer under test, as on a
# large NVIDIA card (max alloc a quarter of 141 GiB, a few GiB free beside a ballast).
NVIDIA="gpu:capacity=256m,reported=4g,max_alloc=1g,profile=nvidia,free_query=amd"
EXACT="gpu:capacity=256m,reported=4g,max_alloc=1g,free_query=amd"
export MOCKCL_DEVICES="$NVIDIA"

expect() { EXPECT_ONE_ERROR_LINE=1 expect_run "$1" "$2" "$BIN" "${@:3}"; }

for f in --platform --device --free --over --small --list "Exit codes" "fails_at"; do
  expect 0 "$f" --help
done
expect 2 "clpool_first_use: error: unknown option '--fre'; did you mean --free?" --fre 1GiB
expect 2 "unexpected argument 'stray'" stray
expect 2 "--free: must be positive, got '0'" --free 0
expect 2 "--free: '2GB'" --free 2GB
expect 2 "--free: needs a value" --free ""
expect 2 "--over: '-1'" --over -1
expect 2 "--small: must be at least 4KiB" --small 1KiB
expect 2 "--small must be smaller than the buffer under test (--free plus --over, 2097152 B)" --free 1MiB --over 1MiB --small 4MiB
expect 2 "--free plus --over is more than 2^62 bytes" --free 4611686018427387904 --over 1
expect 2 "--device: 'gpu' is not an index" --device gpu
expect 2 "--platform 'nvidia': no platform name contains it" --platform nvidia
MOCKCL_DEVICES=gpu-64m expect 2 \
  "the device 'mockcl gpu-64m' cannot say how much memory it has free; give --free"
expect 0 "device 0: mockcl gpu-256m (GPU" --list
# A table that cannot be written (a full disk) is an error, not exit 0.
to_full_disk() { "$BIN" > /dev/full; }
EXPECT_ONE_ERROR_LINE=1 expect_run 2 "clpool_first_use: error: standard output: cannot write: No space left on device" to_full_disk

# fails_at and the status of the step that failed, for one case of a table.
outcome() { awk -F'\t' -v c="$2" '$1 == c { s = $7; print s == "none" ? "none" : s " " ($7 == "create" ? $3 : $7 == "enqueue" ? $4 : $7 == "event" ? $6 : $5) }' "$1"; }
# every_row_ok FILE: each row's control ran and its context stayed usable.
every_row_ok() { awk -F'\t' '!/^#/ && $1 != "case" && ($8 != "ok" || $9 != "yes") { bad = 1; print "  bad row: " $0 } END { exit bad }' "$1"; }
BUFFER_USES="migrate migrate_undefined write write_blocking read fill copy_from copy_to read_rect
  write_rect copy_rect_to map map_invalidate kernel task sub_buffer_write"
SVM_CASES="svm_alloc svm_fill svm_memcpy_to svm_memcpy_from svm_map svm_migrate svm_kernel"

# mockcl, nvidia profile: creation succeeds, every use that commits fails at its enqueue with -4
# (migrating to the host commits nothing), and SVM is charged at clSVMAlloc.
"$BIN" > "$T/mock.tsv" 2> "$T/mock.err" || fail "clpool_first_use on mockcl (nvidia) -> exit $?: $(cat "$T/mock.err")"
grep -q "^# free: 268435456 B (CL_DEVICE_GLOBAL_FREE_MEMORY_AMD)" "$T/mock.tsv" || fail "mock.tsv: free memory line"
grep -q "^# buffer under test: 335544320 B (free + 67108864 B); control: 1048576 B" "$T/mock.tsv" || fail "mock.tsv: sizes line"
[[ $(grep -vc '^#' "$T/mock.tsv") == 26 ]] || fail "mock.tsv: want a header and 25 cases"
check "mockcl nvidia: every control ok, every context usable after" every_row_ok "$T/mock.tsv"
[[ $(outcome "$T/mock.tsv" create) == none ]] || fail "mockcl nvidia create: $(outcome "$T/mock.tsv" create)"
[[ $(outcome "$T/mock.tsv" migrate_host) == none ]] || fail "mockcl nvidia migrate_host: $(outcome "$T/mock.tsv" migrate_host)"
for c in $BUFFER_USES; do
  [[ $(outcome "$T/mock.tsv" "$c") == "enqueue -4" ]] || fail "mockcl nvidia $c: $(outcome "$T/mock.tsv" "$c")"
done
for c in $SVM_CASES; do
  [[ $(outcome "$T/mock.tsv" "$c") == "create NULL" ]] || fail "mockcl nvidia $c: $(outcome "$T/mock.tsv" "$c")"
done

# mockcl, exact profile: every buffer and block is refused at creation.
MOCKCL_DEVICES="$EXACT" "$BIN" > "$T/exact.tsv" 2>&1 || fail "clpool_first_use on mockcl (exact) -> exit $?"
check "mockcl exact: every control ok, every context usable after" every_row_ok "$T/exact.tsv"
for c in create $BUFFER_USES migrate_host; do
  [[ $(outcome "$T/exact.tsv" "$c") == "create -4" ]] || fail "mockcl exact $c: $(outcome "$T/exact.tsv" "$c")"
done

# The layer's budget with the nvidia profile, over a mock device with room to spare: the same
# table as mockcl's, SVM included (both read the profile's svm_oom_at: creation).
OPENCL_LAYERS="$LAYER" CLPOOL_LAYER_BUDGET=256MiB CLPOOL_LAYER_PROFILE=nvidia MOCKCL_DEVICES=gpu-4g \
  "$BIN" --free 256MiB > "$T/layer.tsv" 2> "$T/layer.err" || fail "clpool_first_use under the layer -> exit $?: $(cat "$T/layer.err")"
check "layer: every control ok, every context usable after" every_row_ok "$T/layer.tsv"
for c in $SVM_CASES; do
  [[ $(outcome "$T/layer.tsv" "$c") == "create NULL" ]] || fail "layer $c: $(outcome "$T/layer.tsv" "$c"), want create NULL"
done
expect_run 0 "all 2 tables agree on all 25 cases" python3 "$COMPARE" mock="$T/mock.tsv" layer="$T/layer.tsv"

# A profile whose SVM blocks are refused at first use (svm_oom_at = first_use): mockcl and the
# layer again agree on every case; clSVMAlloc succeeds and each SVM use fails at its enqueue.
cat > "$T/svm_first_use.profile" <<'PROFILE'
name = svm_first_use
oom_at = first_use
svm_oom_at = first_use
oom_status = CL_MEM_OBJECT_ALLOCATION_FAILURE
headroom = 2688KiB
page = 2MiB
pack_limit = 2MiB
pack_granule = 512B
max_alloc_enforced = no
PROFILE
MOCKCL_DEVICES="gpu:capacity=256m,reported=4g,max_alloc=1g,profile=$T/svm_first_use.profile,free_query=amd" \
  "$BIN" > "$T/mock_svm.tsv" 2> "$T/mock_svm.err" || fail "clpool_first_use on mockcl (svm_first_use) -> exit $?: $(cat "$T/mock_svm.err")"
OPENCL_LAYERS="$LAYER" CLPOOL_LAYER_BUDGET=256MiB CLPOOL_LAYER_PROFILE="$T/svm_first_use.profile" MOCKCL_DEVICES=gpu-4g \
  "$BIN" --free 256MiB > "$T/layer_svm.tsv" 2> "$T/layer_svm.err" || fail "clpool_first_use under the layer (svm_first_use) -> exit $?: $(cat "$T/layer_svm.err")"
for t in mock_svm layer_svm; do
  check "$t: every control ok, every context usable after" every_row_ok "$T/$t.tsv"
  for c in $SVM_CASES; do
    want="enqueue -4"
    [[ $c == svm_alloc ]] && want=none
    [[ $(outcome "$T/$t.tsv" "$c") == "$want" ]] || fail "$t $c: $(outcome "$T/$t.tsv" "$c"), want $want"
  done
done
expect_run 0 "all 2 tables agree on all 25 cases" python3 "$COMPARE" mock="$T/mock_svm.tsv" layer="$T/layer_svm.tsv"
# Tables that differ: the 7 SVM cases, each named, exit 1.
expect_run 1 "7 of 25 cases differ:" python3 "$COMPARE" creation="$T/mock.tsv" first_use="$T/mock_svm.tsv"
diffs=$(grep -c '^  svm_' <<<"$expect_out")
[[ $diffs == 7 ]] || fail "creation against first_use: want the 7 SVM cases to differ, got $diffs"
grep -q "| read | clEnqueueReadBuffer | enqueue -4 | enqueue -4 |" <<<"$expect_out" || fail "compare: the read row"
expect_run 0 "all 2 tables agree on all 25 cases" python3 "$COMPARE" a="$T/mock.tsv" b="$T/mock.tsv"

# A device with more free than --free says: nothing fails, and a last '#' line says why that can be.
MOCKCL_DEVICES=gpu-4g expect_run 0 "# no case ran out of memory: the device took a buffer 67108864 B larger than 268435456 B at every call. It does not enforce its memory (POCL), or it had more free than that." \
  "$BIN" --free 256MiB
grep -q "^# no case ran out of memory" "$T/mock.tsv" && fail "mock.tsv: the note where cases failed"
grep -q "^# note: the buffer under test is above" "$T/mock.tsv" && fail "mock.tsv: a max-alloc note below max alloc"
# A buffer under test above max alloc (gpu-256m: 128 MiB) is said to be.
MOCKCL_DEVICES="gpu-256m:profile=nvidia,free_query=amd" expect_run 0 \
  "# note: the buffer under test is above CL_DEVICE_MAX_MEM_ALLOC_SIZE (134217728 B)" "$BIN"

# The comparison's bad input: exit 2, one line.
EXPECT_ONE_ERROR_LINE=1 expect_run 2 "give at least two tables" python3 "$COMPARE" a="$T/mock.tsv"
EXPECT_ONE_ERROR_LINE=1 expect_run 2 "'$T/mock.tsv' is not LABEL=FILE" python3 "$COMPARE" "$T/mock.tsv" b="$T/mock.tsv"
EXPECT_ONE_ERROR_LINE=1 expect_run 2 "$T/none.tsv: No such file or directory" python3 "$COMPARE" a="$T/mock.tsv" b="$T/none.tsv"
echo "not a table" > "$T/bad.tsv"
EXPECT_ONE_ERROR_LINE=1 expect_run 2 "$T/bad.tsv: not a clpool_first_use table (no header line" python3 "$COMPARE" a="$T/mock.tsv" b="$T/bad.tsv"
# A note captured before the table (the layer's, on standard error) is not part of it.
{ echo "clpool_layer: note: CLPOOL_LAYER_TRACE is not set; not recording a trace"; cat "$T/mock.tsv"; } > "$T/noted.tsv"
expect_run 0 "all 2 tables agree on all 25 cases" python3 "$COMPARE" a="$T/mock.tsv" b="$T/noted.tsv"
head -5 "$T/mock.tsv" > "$T/short.tsv"; printf 'read\tclEnqueueReadBuffer\t0\n' >> "$T/short.tsv"
EXPECT_ONE_ERROR_LINE=1 expect_run 2 "$T/short.tsv: table line 3 has 3 cells, not 10" python3 "$COMPARE" a="$T/mock.tsv" b="$T/short.tsv"
finish
