#!/usr/bin/env bash
# record_pyopencl_pooled.sh end to end on POCL: one run of pyopencl_pooled.py under `clpool
# record` with --record-app writes both traces; the application-level one holds the sizes the
# program asked for (4 bytes per float of each step's signal), the layer's holds what the pool
# asked the driver for (bin sizes, never those), and a bad --record-app path stops the program.
#   pyopencl_pooled_record_test.sh CLPOOL CORE_SO PACKAGE_INIT_PY RECORD_SH TRACE_SUMMARY
set -u
source "$(dirname "$0")/../dev/testing/test_lib.sh" || exit 1  # fail, die, finish
export CLPOOL="$(realpath "$1")"
core="$(realpath "$2")"
pkg="$(dirname "$(realpath "$3")")"
script="$(realpath "$4")"
SUMMARY="$(realpath "$5")"
T="${TEST_TMPDIR:-$(mktemp -d)}"
export POCL_CACHE_DIR="$T/pocl-cache" CLPOOL_PYTHONPATH="$T/site" PYTHONDONTWRITEBYTECODE=1
mkdir -p "$T/site/clpool" "$T/out"
cp "$pkg"/*.py "$T/site/clpool/"
cp "$core" "$T/site/clpool/_core.so"
unset OPENCL_LAYERS OCL_ICD_VENDORS

bash "$script" "$T/out" --steps 3 >"$T/log" 2>&1 || { fail "record_pyopencl_pooled.sh exit $?"; cat "$T/log"; }
grep -q "clpool record: trace $T/out/pyopencl_pooled_layer.trace" "$T/log" || { fail "no summary"; cat "$T/log"; }
sizes() { awk '$5 == "alloc" { print $7 }' "$1"; }
# Step s has n = 250000 + 150000 s + 1237 s^2 floats; its signal is the step's first request.
for n in 250000 401237 554948; do
  sizes "$T/out/pyopencl_pooled_app.trace" | grep -qx "$((4 * n))" || fail "app trace lacks $((4 * n)) bytes"
  sizes "$T/out/pyopencl_pooled_layer.trace" | grep -qx "$((4 * n))" && fail "layer trace has the exact $((4 * n))"
done
"$SUMMARY" "$T/out/pyopencl_pooled_app.trace" | grep -qx "live_at_end: 0" || fail "app trace: buffers never freed"
# Re-running replaces both traces (each is its recorder's own).
bash "$script" "$T/out" --steps 1 >"$T/log" 2>&1 || { fail "second recording exit $?"; cat "$T/log"; }
sizes "$T/out/pyopencl_pooled_app.trace" | grep -qx 1604948 && fail "app trace not replaced"

echo "--- a bad --record-app path: the program stops before computing anything"
echo "a,b" >"$T/out/log.csv"
out="$(PYTHONPATH="$T/site" /usr/bin/python3 "$(dirname "$script")/pyopencl_pooled.py" --steps 1 \
  --record-app "$T/out/log.csv" 2>&1)" && fail "a non-trace --record-app file was accepted"
[[ "$out" == *"exists and is not a trace clpool.record wrote"* && "$out" != *"step 0"* ]] ||
  fail "bad --record-app: $out"
[[ "$(cat "$T/out/log.csv")" == "a,b" ]] || fail "log.csv was touched"

echo "--- bad arguments of the script and the program: exit 2, nothing run"
rc=0; out="$(bash "$script" "$T/no/such/dir" 2>&1)" || rc=$?
[[ $rc == 2 && "$out" == *"$T/no/such/dir is not a directory"* ]] || fail "missing OUT_DIR: exit $rc: $out"
rc=0; out="$(bash "$script" 2>&1)" || rc=$?
[[ $rc == 2 && "$out" == *"OUT_DIR"* ]] || fail "no OUT_DIR: exit $rc: $out"
rc=0; out="$(PYTHONPATH="$T/site" /usr/bin/python3 "$(dirname "$script")/pyopencl_pooled.py" --steps 0 2>&1)" || rc=$?
[[ $rc == 2 && "$out" == *"--steps: 0 is not a positive number of steps"* ]] || fail "--steps 0: exit $rc: $out"
finish
