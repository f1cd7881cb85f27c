#!/usr/bin/env bash
# The reference case: an unmodified PyOpenCL program on POCL, recorded through the layer by
# record_pyopencl_workload.sh, with and without a simulated budget, and refused on a bad setting;
# then over mockcl, whose 256 MiB device itself runs out (the driver's failures are recorded).
#   pyopencl_layer_test.sh LAYER_SO TRACE_SUMMARY RECORD_SCRIPT MOCKCL_SO
set -euo pipefail
source "$(dirname "$0")/../../dev/testing/test_lib.sh" || exit 1  # fail, die, finish

export CLPOOL_RECORD_LAYER_SO=$(realpath "$1")
export CLPOOL_RECORD_TRACE_SUMMARY=$(realpath "$2")
record=$(realpath "$3")
mockcl=$(realpath "$4")
tmp=${TEST_TMPDIR:-$(mktemp -d)}
export POCL_CACHE_DIR=$tmp/pocl-cache XDG_CACHE_HOME=$tmp/cache HOME=$tmp

# expect FILE KEY VALUE: the summary line "KEY: VALUE" is in FILE.
expect() { grep -qx "$2: $3" "$1" || { cat "$1" >&2; die "expected '$2: $3'"; }; }
# expect_positive FILE KEY
expect_positive() { grep -qE "^$2: [1-9][0-9]*$" "$1" || { cat "$1" >&2; die "expected $2 > 0"; }; }

echo "--- unlimited: the workload runs to the end and every block is freed"
status=0
"$record" "$tmp/free.trace" --scale 16MiB --steps 3 >"$tmp/free.summary" 2>"$tmp/free.err" || status=$?
[[ $status == 0 ]] || { cat "$tmp/free.err" >&2; die "workload failed with $status"; }
cat "$tmp/free.summary"
expect "$tmp/free.summary" alloc_failed 0
expect "$tmp/free.summary" live_at_end 0
expect "$tmp/free.summary" alloc.host 1
expect "$tmp/free.summary" alloc.svm 1
expect "$tmp/free.summary" meta.source layer
# 8 weight buffers + at least 8 activations and 4 gradients from the pool in step 0.
buffers=$(sed -n 's/^alloc.buffer: //p' "$tmp/free.summary")
(( buffers >= 20 )) || die "expected at least 20 buffer allocations, got $buffers"
grep -q ' free [0-9]* [0-9]* svm ' "$tmp/free.trace" || die "no svm free recorded"
# The enqueued SVM free is recorded on a queue (id 1), not as a plain clSVMFree (queue 0).
awk '$5 == "free" && $8 == "svm" && $4 != 1 { exit 1 }' "$tmp/free.trace" ||
  die "svm free not recorded on queue 1"

echo "--- budget 16MiB: the workload runs out of memory and the failures are recorded"
status=0
"$record" "$tmp/oom.trace" --budget 16MiB --scale 16MiB --steps 6 >"$tmp/oom.summary" \
  2>"$tmp/oom.err" || status=$?
cat "$tmp/oom.summary"
[[ $status == 3 ]] || { cat "$tmp/oom.err" >&2; die "expected exit status 3 (OOM), got $status"; }
grep -q "out of memory at step" "$tmp/oom.err" || die "workload did not report the OOM"
expect_positive "$tmp/oom.summary" alloc_failed
expect "$tmp/oom.summary" meta.budget 16777216
grep -q '^first_alloc_failed: seq [0-9]* size [0-9]* kind buffer$' "$tmp/oom.summary" ||
  die "no first_alloc_failed line"
peak=$(sed -n 's/^peak_device_bytes: //p' "$tmp/oom.summary")
(( peak <= 16777216 )) || die "peak $peak exceeds the budget"

echo "--- a bad setting stops the program with a message naming the variable"
status=0
OPENCL_LAYERS=$CLPOOL_RECORD_LAYER_SO CLPOOL_LAYER_BUDGET=lots /usr/bin/python3 \
  "$(dirname "$record")/pyopencl_workload.py" --scale 16MiB >"$tmp/bad.out" 2>"$tmp/bad.err" ||
  status=$?
[[ $status != 0 ]] || die "the program ran despite CLPOOL_LAYER_BUDGET=lots"
grep -q 'clpool_layer: error: CLPOOL_LAYER_BUDGET "lots" is not a number' "$tmp/bad.err" ||
  { cat "$tmp/bad.err" >&2; die "no clear message"; }

echo "--- over mockcl (256 MiB device, no layer budget): the driver's own refusals are recorded"
status=0
OCL_ICD_VENDORS=$mockcl "$record" "$tmp/mock.trace" --scale 256MiB --steps 4 \
  >"$tmp/mock.summary" 2>"$tmp/mock.err" || status=$?
cat "$tmp/mock.summary"
[[ $status == 3 ]] || { cat "$tmp/mock.err" >&2; die "expected exit status 3 (OOM), got $status"; }
expect_positive "$tmp/mock.summary" alloc_failed
expect "$tmp/mock.summary" live_at_end 0
grep -q '^meta.budget' "$tmp/mock.summary" && die "no budget was set, yet the trace names one"
echo "--- POCL as a 8 MiB NVIDIA GPU (CLPOOL_LAYER_PROFILE=nvidia): the first use that does not fit fails"
cat > "$tmp/first_use.py" <<'PY'
import numpy as np
import pyopencl as cl
ctx = cl.create_some_context(interactive=False)
q = cl.CommandQueue(ctx)
two = 2 << 20
bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, two) for _ in range(3)]  # creation never fails
pattern = np.int32(7)
cl.enqueue_fill_buffer(q, bufs[0], pattern, 0, two)
cl.enqueue_fill_buffer(q, bufs[1], pattern, 0, two)
try:
    cl.enqueue_copy(q, bufs[2], np.ones(two, dtype=np.uint8))
    print("no failure")
except cl.MemoryError as e:
    print("first use failed:", e.code)
bufs[0].release()
q.finish()
cl.enqueue_copy(q, bufs[2], np.ones(two, dtype=np.uint8))
q.finish()
print("after release: ok")
PY
status=0
OPENCL_LAYERS=$CLPOOL_RECORD_LAYER_SO CLPOOL_LAYER_TRACE=$tmp/first_use.trace CLPOOL_LAYER_BUDGET=8MiB \
  CLPOOL_LAYER_PROFILE=nvidia PYOPENCL_CTX=0 /usr/bin/python3 "$tmp/first_use.py" \
  >"$tmp/first_use.out" 2>"$tmp/first_use.err" || status=$?
cat "$tmp/first_use.out"
[[ $status == 0 ]] || { cat "$tmp/first_use.err" >&2; die "the first-use program failed with $status"; }
grep -qx "first use failed: -4" "$tmp/first_use.out" || die "expected the write to fail with -4"
grep -qx "after release: ok" "$tmp/first_use.out" || die "expected the write to succeed after a release"
grep -q "first use of id 3 (2097152 bytes) by clEnqueueWriteBuffer: status -4 from the layer" \
  "$tmp/first_use.trace" || { cat "$tmp/first_use.trace" >&2; die "the failure is not in the trace"; }
echo PASS
