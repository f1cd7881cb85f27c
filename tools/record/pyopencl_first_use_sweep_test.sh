#!/usr/bin/env bash
# PyOpenCL's ImmediateAllocator leaks the buffer whose first use fails: it creates the buffer, then
# makes it real on the device with one enqueued command (clEnqueueMigrateMemObjects, or
# clEnqueueWriteBuffer before OpenCL 1.2), and when that command reports an out-of-memory it
# raises without releasing the buffer (src/wrap_mempool.cpp, immediate_buffer_allocator::allocate,
# in 2022.3.1 and 2026.1.2 alike). clpool sweep finds it, and clpool.pyopencl's drop-in does not
# have it: testing/pyopencl_immediate.py swept at every first use (and every allocation) with
# PyOpenCL's pool and with clpool's, on mockcl's nvidia profile through the layer.
#   pyopencl_first_use_sweep_test.sh CLPOOL CORE_SO PACKAGE_INIT_PY PROGRAM_PY [PYOPENCL_INIT_PY]
# PYOPENCL_INIT_PY: another PyOpenCL's package (python/compat's 2026 site); without it, Debian's.
set -u
# From Bazel's runfiles root, where sh_test starts (this script also runs as
# //python/compat:pyopencl_first_use_sweep_test_pyopencl2026).
source tools/dev/testing/test_lib.sh || exit 1  # fail, finish
CLPOOL="$(realpath "$1")"
core="$(realpath "$2")"
pkg="$(dirname "$(realpath "$3")")"
PROG="$(realpath "$4")"
pyopencl_site=""
[[ -n "${5:-}" ]] && pyopencl_site="$(cd "$(dirname "$5")/.." && pwd)"
T="${TEST_TMPDIR:-$(mktemp -d)}"
cd "$T" || exit 1
mkdir -p "$T/site/clpool"
cp "$pkg"/*.py "$T/site/clpool/"
cp "$core" "$T/site/clpool/_core.so"
export POCL_CACHE_DIR="$T/pocl-cache" XDG_CACHE_HOME="$T/xdg" PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="${pyopencl_site:+$pyopencl_site:}$T/site"
unset OPENCL_LAYERS OCL_ICD_VENDORS
/usr/bin/python3 -c 'import pyopencl; print("PyOpenCL", pyopencl.VERSION_TEXT, "from", pyopencl.__file__)'

# sweep POOL POINTS: clpool sweep's JSON report of the program with POOL's pool, in $T/POOL-POINTS.json.
sweep() {
  local rc=0
  "$CLPOOL" sweep --profile nvidia --points "$2" --timeout 60 --out "$T/sweep-$1-$2" \
    --json "$T/$1-$2.json" -- /usr/bin/python3 "$PROG" "$1" >"$T/$1-$2.log" 2>&1 || rc=$?
  echo "$rc"
}
# verdicts FILE: "VERDICT KIND EXIT LIVE BLOCK" per run.
verdicts() {
  /usr/bin/python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["runs"]:
    print(r["verdict"], r["kind"], r["exit_code"], r["live_at_exit_bytes"], r["block_bytes"])
' "$1"
}

echo "--- PyOpenCL's pool: every failed first use leaks the buffer it failed on"
rc="$(sweep pyopencl first-use)"
[[ $rc == 1 ]] || { fail "PyOpenCL first-use sweep: exit $rc, want 1 (failing runs)"; cat "$T/pyopencl-first-use.log"; }
v="$(verdicts "$T/pyopencl-first-use.json")"
echo "$v"
[[ "$(wc -l <<<"$v")" == 4 ]] || fail "want 4 first-use runs (one per array): $v"
# The program reports the out-of-memory and stops (exit 1), holding exactly the buffer that failed.
while read -r verdict kind code live block; do
  [[ $verdict == leaked && $kind == first_use && $code == 1 && $live == "$block" && $block -gt 0 ]] ||
    fail "PyOpenCL: want a leak of the failed buffer: $verdict $kind exit $code live $live block $block"
done <<<"$v"
grep -q "pyopencl_immediate.py:[0-9]*" "$T/pyopencl-first-use.log" ||
  fail "the leaks are not named at the program's line: $(head -12 "$T/pyopencl-first-use.log")"

echo "--- PyOpenCL's pool: a failed allocation (creation) leaks nothing"
rc="$(sweep pyopencl alloc)"
[[ $rc == 0 ]] || { fail "PyOpenCL alloc sweep: exit $rc"; cat "$T/pyopencl-alloc.log"; }
v="$(verdicts "$T/pyopencl-alloc.json")"
[[ "$(wc -l <<<"$v")" == 4 && "$(grep -c '^handled alloc 1 0 ' <<<"$v")" == 4 ]] ||
  fail "PyOpenCL allocs: want 4 handled, nothing live: $v"

# clpool's pool retries a failed allocation (its out-of-memory ladder); the sweep fails one point
# once, so the retry succeeds and the program ends as it would without the fault (exit 0).
echo "--- clpool's drop-in: the same program, every point handled, recovered, nothing live"
for points in first-use alloc; do
  rc="$(sweep clpool "$points")"
  [[ $rc == 0 ]] || { fail "clpool $points sweep: exit $rc"; cat "$T/clpool-$points.log"; }
  v="$(verdicts "$T/clpool-$points.json")"
  echo "$v"
  [[ "$(wc -l <<<"$v")" == 4 && "$(grep -c '^handled [a-z_]* 0 0 ' <<<"$v")" == 4 ]] ||
    fail "clpool $points: want 4 handled, nothing live: $v"
done
finish
