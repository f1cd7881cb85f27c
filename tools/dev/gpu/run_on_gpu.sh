#!/usr/bin/env bash
# The GPU session: which call reports out-of-memory and the boundary of the nvidia profile (issue
# 41), the Python suites on the GPU, the probe, real-device replay, the OpenCL tests and the
# layer's and pool's costs on NVIDIA's OpenCL driver, in calls of at most ~9 minutes each.
#
#   bash .gpu/run_on_gpu.sh          # from the repository root on the GPU machine; OUT set by the tool
#
# Everything it runs is in the folder it lives in (made by tools/dev/gpu/make_carry.sh: static -c opt
# binaries, Debian's ICD loader, libbenchmark, libunwind, libmockcl.so, the layer, the traces and
# profiles, the Python helpers). Every step has its own time limit and a share of a global deadline
# (GPU_DEADLINE seconds, 540 by default); a failing step never stops the next one. Everything goes
# to $OUT (at most 8 files, no folders): log.txt (all output), summary.txt (steps, times, exit
# codes, the key results), results.tar (every step's files, appended as each step ends, so a kill
# keeps the steps done), first_use.txt, boundary.txt and sweep.txt (the driver against the
# models), measured.profile (the probe's profile) and replay.txt (the replay tables).
#
# Dry run without a GPU: mockcl plays a GPU that enforces its memory:
#   GPU_ICD=$PWD/.gpu/lib/libmockcl.so GPU_PLATFORM=mockcl MOCKCL_BACKING=none \
#   MOCKCL_DEVICES=gpu-4g:profile=nvidia,free_query=amd OUT=/tmp/out bash .gpu/run_on_gpu.sh
# (no CUDA there: the ballast and the NVML steps say so and are skipped). The step python needs
# kernels that run: MOCKCL_BACKING=pocl MOCKCL_DEVICES=gpu-4g GPU_STEPS="env python" instead.
#
# Settings (environment):
#   OUT             where the results go (default /tmp/clpool-gpu-out)
#   GPU_ICD         the OpenCL driver (default /usr/local/nvidia/lib64/libnvidia-opencl.so.1)
#   GPU_PLATFORM    part of its platform's name (default NVIDIA): --platform, opencl:PLATFORM,
#                   CLPOOL_TEST_DEVICES and the layer test's platform check
#   GPU_LEAVE_FREE  bytes the CUDA ballast leaves free (default 3 GiB: fragmentation.trace needs
#                   1.1 GiB, and an OpenCL context takes some of what is free)
#   GPU_DEADLINE    seconds for the whole script (default 540); steps are cut to fit
#   GPU_STEPS       which steps to run, of env ballast firstuse sweep boundary python stress probe
#                   replay tests bench, in that order (default "env ballast firstuse sweep boundary": the
#                   long boundary step last, so a deadline cuts only it; issue 41's first
#                   call; its second: GPU_STEPS="env python", the PyOpenCL suite with each of
#                   three pools, the stress test on both PyOpenCLs and the plugin's example, all
#                   at once, with python.tar.xz from tools/dev/gpu/make_python_carry.sh in the
#                   same folder; issue 35's session was "env ballast probe replay tests bench")
#   GPU_BOUNDARY_SPAN  bytes either side of each predicted minimum capacity that the boundary
#                   step's trials cover, at 64 KiB steps (default 8388608: 257 trials a trace)
#   GPU_STRESS_SECONDS  the stress test's duration in the python step (default 20)
#   GPU_SUITE_SELECT    a pytest -k expression for PyOpenCL's tests in the python step (default:
#                   all of test_array.py and test_algorithm.py)
#   GPU_LAYER_TEST  the layer test binary for the scenarios (default layer_mockcl_test; the
#                   static-destruction scenario runs from layer_pocl_test)
set -o pipefail
T0=$SECONDS
G=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-/tmp/clpool-gpu-out}
GPU_ICD=${GPU_ICD:-/usr/local/nvidia/lib64/libnvidia-opencl.so.1}
GPU_PLATFORM=${GPU_PLATFORM:-NVIDIA}
GPU_LEAVE_FREE=${GPU_LEAVE_FREE:-3221225472}
GPU_DEADLINE=${GPU_DEADLINE:-540}
GPU_STEPS=${GPU_STEPS:-env ballast firstuse sweep boundary}
GPU_LAYER_TEST=${GPU_LAYER_TEST:-layer_mockcl_test}
NVLIB=${NVLIB:-/usr/local/nvidia/lib64}
RESERVE=12   # seconds kept for packing up

mkdir -p "$OUT"
W=$(mktemp -d /tmp/clpool-gpu-work.XXXXXX)      # the steps' files, packed into $OUT/results.tar
SCRATCH=$(mktemp -d /tmp/clpool-gpu-scratch.XXXXXX)  # traces and temporaries, not kept
exec > >(tee -a "$OUT/log.txt") 2>&1
TEE_PID=$!

# NVIDIA's driver elsewhere than expected: the first libnvidia-opencl.so.1 the linker or a usual
# place knows.
if [[ ! -e "$GPU_ICD" ]]; then
  for f in $(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl.so.1/ {print $NF}') \
           /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 /usr/lib64/libnvidia-opencl.so.1; do
    if [[ -e "$f" ]]; then echo "note: $GPU_ICD is missing; using $f"; GPU_ICD=$f; break; fi
  done
fi
ICD_DIR=${GPU_ICD_DIR:-/tmp/icd}
mkdir -p "$ICD_DIR"
echo "$GPU_ICD" > "$ICD_DIR/gpu.icd"
export OCL_ICD_VENDORS=$ICD_DIR/gpu.icd
# mockcl as a second ICD, for the steps that set a model beside the driver (firstuse, sweep,
# boundary): OCL_ICD_VENDORS=$MOCK_ICD.
MOCK_ICD=$SCRATCH/mockicd/mockcl.icd
mkdir -p "$SCRATCH/mockicd"
echo "$G/lib/libmockcl.so" > "$MOCK_ICD"
export LD_LIBRARY_PATH=$G/lib:$NVLIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$G/bin:$PATH:$NVLIB/../bin:/usr/local/nvidia/bin
export TMPDIR=$SCRATCH
export POCL_CACHE_DIR=$SCRATCH/pocl
export PYTHONUNBUFFERED=1
BIN=$G/bin
LIB=$G/lib
DATA=$G/data
PY=${PYTHON:-python3}
SUMMARY=$W/summary.txt
: > "$SUMMARY"

stamp() { date -u +%H:%M:%S; }
elapsed() { echo $((SECONDS - T0)); }
left() { echo $((GPU_DEADLINE - RESERVE - (SECONDS - T0))); }
note() { echo "$*"; echo "$*" >> "$SUMMARY"; cp "$SUMMARY" "$OUT/summary.txt" 2>/dev/null; }
want() { [[ " $GPU_STEPS " == *" $1 "* ]]; }

STEP=""; STEP_START=0; STEP_DIR=""
step() {  # step NAME BUDGET: a header, and the folder of its files
  end_step
  STEP=$1; STEP_START=$SECONDS; STEP_DIR=$W/$1; mkdir -p "$STEP_DIR"
  echo
  echo "=================================================================================="
  echo "=== [$(stamp) +$(elapsed)s] step $1 (budget $2 s, $(left) s left before the deadline)"
  echo "=================================================================================="
}
end_step() {
  [[ -z "$STEP" ]] && return 0
  note "step $STEP: $((SECONDS - STEP_START)) s"
  tar -rf "$OUT/results.tar" -C "$W" "$STEP" 2>/dev/null || true
  STEP=""
}

# run LIMIT LABEL LOGFILE CMD...: CMD with a time limit (cut to the deadline), its output to the
# log and to LOGFILE (under the step's folder; "-" for none). Returns CMD's exit status.
run() {
  local limit=$1 label=$2 log=$3; shift 3
  local l; l=$(left)
  (( limit > l )) && limit=$l
  if (( limit < 2 )); then
    note "  $label: SKIPPED (deadline)"
    return 125
  fi
  echo "--- [$(stamp) +$(elapsed)s] $label (limit $limit s): $*"
  local s=$SECONDS rc
  if [[ "$log" == "-" ]]; then
    timeout -k 5 "$limit" "$@" 2>&1
    rc=$?
  else
    timeout -k 5 "$limit" "$@" 2>&1 | tee "$STEP_DIR/$log"
    rc=${PIPESTATUS[0]}
  fi
  local how="rc=$rc"
  (( rc == 124 || rc == 137 )) && how="TIMED OUT (rc=$rc)"
  note "  $label: $how, $((SECONDS - s)) s"
  return $rc
}

BALLAST_PIDS=()
cleanup() {
  for p in "${BALLAST_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${BALLAST_PIDS[@]}"; do wait "$p" 2>/dev/null; done
  BALLAST_PIDS=()
}
trap cleanup EXIT

nvidia_free() {  # the GPU's free memory in bytes (NVML through nvidia-smi), or nothing
  command -v nvidia-smi >/dev/null 2>&1 || return 0
  local mib
  mib=$(timeout 20 nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits 2>/dev/null | head -1 | tr -dc 0-9)
  [[ -n "$mib" ]] && echo $((mib * 1048576))
}
smi_line() {
  command -v nvidia-smi >/dev/null 2>&1 || { echo "  (no nvidia-smi)"; return 0; }
  timeout 20 nvidia-smi --query-gpu=name,memory.total,memory.used,memory.free --format=csv,noheader 2>&1 | sed 's/^/  nvidia-smi: /'
}

# start_ballast MODE BYTES NAME: a CUDA process holding device memory (ballast.py); waits for it.
start_ballast() {
  local mode=$1 bytes=$2 name=$3 status=$W/ballast/$3.status
  mkdir -p "$W/ballast"
  "$PY" "$G/py/ballast.py" "$mode" "$bytes" "$status" < /dev/null > "$W/ballast/$name.log" 2>&1 &
  local pid=$!
  BALLAST_PIDS+=("$pid")
  local waited=0
  while (( waited < 600 )); do  # tenths of a second: at most 60 s
    if grep -q '^ready' "$status" 2>/dev/null; then break; fi
    if grep -q '^error' "$status" 2>/dev/null || ! kill -0 "$pid" 2>/dev/null; then break; fi
    sleep 0.1; waited=$((waited + 1))
  done
  sed "s/^/  ballast $name: /" "$status" 2>/dev/null
  if grep -q '^ready' "$status" 2>/dev/null; then
    note "  ballast $name ($mode $bytes B): ready after $((waited / 10)) s, $(grep '^free_after' "$status")"
    return 0
  fi
  note "  ballast $name: NOT held ($(grep '^error' "$status" 2>/dev/null || echo "no status after $((waited / 10)) s"))"
  kill "$pid" 2>/dev/null
  return 1
}

pow2_above() {  # the smallest power of two above $1 bytes, at least 1 GiB
  local p=1073741824
  while (( p <= $1 )); do p=$((p * 2)); done
  echo $p
}

note "clpool GPU session: platform '$GPU_PLATFORM', ICD $GPU_ICD, deadline $GPU_DEADLINE s, steps: $GPU_STEPS"
note "started $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"

# ---------------------------------------------------------------------------------------------
if want env; then
  step env 25
  uname -a; cat /etc/os-release 2>/dev/null | grep PRETTY; nproc
  command -v nvidia-smi >/dev/null 2>&1 && run 20 "nvidia-smi" nvidia-smi.txt nvidia-smi
  smi_line
  echo "ICD: $OCL_ICD_VENDORS -> $(cat "$OCL_ICD_VENDORS")"; ls -la "$GPU_ICD" 2>&1
  echo "carried files:"; (cd "$G" && ls -la bin lib data py)
  echo "libraries (anything 'not found' below will not run):"
  for f in "$BIN"/* "$LIB"/*.so*; do
    ldd "$f" 2>&1 | grep -E "not found|libOpenCL|libbenchmark" | sed "s|^|  $(basename "$f"): |"
  done
  run 20 "clpool_probe --list" probe-list.txt clpool_probe --list
fi

# ---------------------------------------------------------------------------------------------
if want ballast; then
  step ballast 70
  smi_line
  note "  free before the ballast: $(nvidia_free) B (nvidia-smi)"
  MODE=$(command -v nvidia-smi >/dev/null 2>&1 && timeout 20 nvidia-smi --query-gpu=compute_mode --format=csv,noheader 2>/dev/null | head -1)
  note "  compute mode: ${MODE:-unknown}"
  if ! "$PY" -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
    note "  no libcuda.so.1 here: no CUDA ballast; the device's whole free memory is used"
  elif [[ "$MODE" == *Exclusive* || "$MODE" == *Prohibited* ]]; then
    note "  compute mode $MODE: a second process could not use the GPU: no CUDA ballast"
  elif start_ballast leave "$GPU_LEAVE_FREE" main; then
    # OpenCL must still work beside the ballast's process; if not, do without it.
    if ! run 20 "clpool_probe --list (beside the ballast)" probe-list-ballast.txt clpool_probe --list; then
      note "  OpenCL fails beside the ballast: ballast released, the whole free memory is used"
      cleanup
    fi
  fi
  smi_line
  note "  free after the ballast: $(nvidia_free) B (nvidia-smi)"
  run 30 "context cost (NVML around clCreateContext)" context-cost.txt "$PY" "$G/py/cl_context_cost.py" "$GPU_PLATFORM"
fi

# ---------------------------------------------------------------------------------------------
# Which call reports out-of-memory (issue 41, item 1): the driver, mockcl with the nvidia profile
# and the layer's budget with the nvidia profile, each given the same free memory, case by case.
if want firstuse; then
  step firstuse 60
  run 30 "clpool_first_use (the driver)" gpu.tsv clpool_first_use --platform "$GPU_PLATFORM"
  F=$(sed -n 's/^# free: \([0-9]*\) B.*/\1/p' "$STEP_DIR/gpu.tsv" 2>/dev/null)
  if [[ -n "$F" ]]; then
    note "  free memory the cases ran beside: $F B"
    # A card with F free whose max alloc is above the buffer under test, as on a large GPU.
    OCL_ICD_VENDORS=$MOCK_ICD MOCKCL_BACKING=none \
      MOCKCL_DEVICES="gpu:capacity=$F,reported=$((4 * F)),max_alloc=$((2 * F)),profile=nvidia,free_query=amd" \
      run 30 "clpool_first_use (mockcl, nvidia profile)" mockcl.tsv clpool_first_use
    # The same with SVM refused at first use: which of the two SVM rows the driver matches is the
    # nvidia profile's svm_oom_at.
    OCL_ICD_VENDORS=$MOCK_ICD MOCKCL_BACKING=none \
      MOCKCL_DEVICES="gpu:capacity=$F,reported=$((4 * F)),max_alloc=$((2 * F)),profile=nvidia,svm_oom_at=first_use,free_query=amd" \
      run 30 "clpool_first_use (mockcl, nvidia profile, svm_oom_at=first_use)" mockcl_svm_first_use.tsv clpool_first_use
    OPENCL_LAYERS=$LIB/libclpool_layer.so CLPOOL_LAYER_BUDGET=$F CLPOOL_LAYER_PROFILE=nvidia \
      run 30 "clpool_first_use (the layer's budget over the driver)" layer.tsv \
      clpool_first_use --platform "$GPU_PLATFORM" --free "$F"
    "$PY" "$G/py/compare_first_use.py" driver="$STEP_DIR/gpu.tsv" mockcl="$STEP_DIR/mockcl.tsv" \
      layer="$STEP_DIR/layer.tsv" | tee "$STEP_DIR/compare.txt"
    sed -n '/cases differ:\|tables agree/,$p' "$STEP_DIR/compare.txt" | sed 's/^/  /' >> "$SUMMARY"
    # The driver against svm_oom_at=first_use alone: no difference in the SVM rows here means the
    # nvidia profile's svm_oom_at should be first_use.
    { echo "== the driver against mockcl with svm_oom_at=first_use"
      "$PY" "$G/py/compare_first_use.py" driver="$STEP_DIR/gpu.tsv" \
        svm_first_use="$STEP_DIR/mockcl_svm_first_use.tsv"; } | tee -a "$STEP_DIR/compare.txt" \
      | sed -n '/^==\|cases differ:\|tables agree/p' | sed 's/^/  /' >> "$SUMMARY"
    cp "$STEP_DIR/compare.txt" "$OUT/first_use.txt" 2>/dev/null
  else
    note "  clpool_first_use printed no free memory: no comparison"
  fi
fi

# ---------------------------------------------------------------------------------------------
# An OOM sweep on the driver (issue 41, item 4): clpool sweep fails each failure point of the
# example program (examples/oom_sweep/stage.c, checked and unchecked builds) through the layer,
# over NVIDIA's driver and over mockcl with the nvidia profile, and the two reports are compared
# point by point (verdict, exit code or signal).
if want sweep; then
  step sweep 90
  : > "$STEP_DIR/compare.txt"
  for prog in stage stage_unchecked; do
    run 30 "clpool sweep $prog on the driver" "$prog.driver.txt" clpool sweep --no-gdb \
      --layer "$LIB/libclpool_layer.so" --out "$SCRATCH/sweep-driver-$prog" \
      --json "$STEP_DIR/$prog.driver.json" -- "$BIN/$prog"
    OCL_ICD_VENDORS=$MOCK_ICD MOCKCL_BACKING=none MOCKCL_DEVICES=gpu-4g:profile=nvidia \
      run 30 "clpool sweep $prog on mockcl" "$prog.mockcl.txt" clpool sweep --no-gdb \
      --layer "$LIB/libclpool_layer.so" --out "$SCRATCH/sweep-mockcl-$prog" \
      --json "$STEP_DIR/$prog.mockcl.json" -- "$BIN/$prog"
    { echo "== $prog"
      "$PY" "$G/py/compare_sweeps.py" driver="$STEP_DIR/$prog.driver.json" \
        mockcl="$STEP_DIR/$prog.mockcl.json" 2>&1
    } | tee -a "$STEP_DIR/compare.txt"
  done
  grep -E "^(== |all [0-9]+ points agree|[0-9]+ of [0-9]+ points differ|  [a-z-]+:[0-9]+: )" \
    "$STEP_DIR/compare.txt" | sed 's/^/  /' >> "$SUMMARY"
  cp "$STEP_DIR/compare.txt" "$OUT/sweep.txt" 2>/dev/null
fi

# ---------------------------------------------------------------------------------------------
# The boundary (issue 41, item 2): each boundary trace's trials at 64 KiB steps within 8 MiB of
# the minimum capacity the nvidia profile predicts, on the driver and on mockcl with the nvidia
# profile played as a real device of the same free memory (--device opencl on both: the same
# ballast of real buffers leaves each trial's capacity free, and on a device with 2 MiB pages a
# ballast's last partial page changes what is left, so only two devices behind the same ballast
# can be compared trial by trial), compared trial by trial (verdict and first failing allocation);
# and the simulated device's trials beside them (the model without a ballast).
if want boundary; then
  step boundary 240
  SPAN=${GPU_BOUNDARY_SPAN:-8388608}
  if [[ ! $SPAN =~ ^[1-9][0-9]{0,11}$ ]]; then
    note "  GPU_BOUNDARY_SPAN='$SPAN': want a whole number of bytes (at most 12 digits); 8388608 used"
    SPAN=8388608
  fi
  note "  trials at 64 KiB steps within $SPAN B of each predicted minimum capacity"
  : > "$STEP_DIR/compare.txt"
  # Seed by seed (frees_s1, nofrees_s1, frees_s2, ...), so that a deadline cuts both kinds alike.
  for trace in $(ls "$DATA"/boundary/*.trace | sort -t_ -k2,2 -k1,1); do
    t=$(basename "$trace" .trace)
    clpool_replay "$trace" --no-progress --no-pool --min-capacity --granule 64KiB \
      --format json="$STEP_DIR/$t.min.json" > /dev/null 2>&1
    P=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["min_capacity"]["capacity"])' \
      "$STEP_DIR/$t.min.json" 2>/dev/null)
    [[ -z "$P" ]] && { note "  $t: no predicted minimum capacity"; continue; }
    range="$((P - SPAN)):$((P + SPAN)):64KiB"
    run 150 "$t: trials on opencl:$GPU_PLATFORM ($range)" "$t.opencl.txt" clpool_replay "$trace" \
      --progress --no-pool --device "opencl:$GPU_PLATFORM" --trials "$range" \
      --format json="$STEP_DIR/$t.opencl.json" --format text > /dev/null
    rc=$?
    # 1: some trials ran out, as below the boundary they must; anything else lost the run's answers.
    if ((rc != 0 && rc != 1)); then
      note "  $t: the driver's trials did not finish (rc=$rc; $t.opencl.txt says why): no comparison"
      continue
    fi
    # The driver's free memory with a context open, before any ballast: the mock device gets it.
    F=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["trials"][0]["device_free_at_start_bytes"])' \
      "$STEP_DIR/$t.opencl.json" 2>/dev/null)
    [[ -z "$F" ]] && { note "  $t: the driver's trials' JSON gave no free memory"; continue; }
    # max_alloc at least 1 GiB: the ballast's chunks are min(max alloc, 1 GiB) on both devices.
    OCL_ICD_VENDORS=$MOCK_ICD MOCKCL_BACKING=none \
      MOCKCL_DEVICES="gpu:capacity=$F,reported=$F,max_alloc=$F,profile=nvidia,free_query=amd" \
      run 30 "$t: trials on mockcl played as a device with $F B free" "$t.mock.txt" clpool_replay \
      "$trace" --no-progress --no-pool --device opencl:mockcl --trials "$range" \
      --format json="$STEP_DIR/$t.mock.json" --format text > /dev/null
    run 10 "$t: trials on sim" - clpool_replay "$trace" --no-progress --no-pool \
      --trials "$range" --format json="$STEP_DIR/$t.sim.json" > /dev/null
    { echo "== $t (predicted $P B; driver free with a context open $F B)"
      "$PY" "$G/py/compare_trials.py" model="$STEP_DIR/$t.mock.json" driver="$STEP_DIR/$t.opencl.json" 2>&1
      echo "-- without the ballast (the simulated device) against the model behind it:"
      "$PY" "$G/py/compare_trials.py" sim="$STEP_DIR/$t.sim.json" model="$STEP_DIR/$t.mock.json" 2>&1 | head -1
    } | tee -a "$STEP_DIR/compare.txt"
    grep -A1 "^== $t " "$STEP_DIR/compare.txt" | tail -1 | sed "s/^/  $t: /" >> "$SUMMARY"
  done
  cp "$STEP_DIR/compare.txt" "$OUT/boundary.txt" 2>/dev/null
fi

# The Python make_python_carry.sh packs (python.tar.xz, beside this script), unpacked once into
# $PYROOT; false, with a note, when the carry has none.
carried_python() {
  PYROOT=$SCRATCH/py
  if [[ ! -f "$G/python.tar.xz" ]]; then
    note "  no $G/python.tar.xz (tools/dev/gpu/make_python_carry.sh makes it): skipped"
    return 1
  fi
  [[ -x "$PYROOT/python3" ]] || { mkdir -p "$PYROOT" && tar -xJf "$G/python.tar.xz" -C "$PYROOT"; }
}

# start_stress V LIMIT LABEL LOG [PYTEST ARGS...]: clpool's stress test on PyOpenCL V (2026:
# 2026.1.2, 2022: Debian's 2022.3.1) in the background, its own PyOpenCL cache, its output to LOG
# only, its pid added to pids; CLPOOL_STRESS_OPS and CLPOOL_STRESS_THREADS from the caller.
start_stress() {
  local v=$1 limit=$2 label=$3 log=$4 site=$PYROOT/opt/clpool
  shift 4
  [[ $v == 2026 ]] && site=$PYROOT/opt/pyopencl2026:$site
  XDG_CACHE_HOME=$SCRATCH/cache-${log%.txt} CLPOOL_TEST_MODE=gpu \
    CLPOOL_STRESS_SECONDS=${GPU_STRESS_SECONDS:-20} PYTHONPATH=$site:$PYROOT/tests \
    run "$limit" "$label" "$log" "$PYROOT/python3" -X faulthandler -m pytest -q -s \
    -p no:cacheprovider "$PYROOT/tests/stress_test.py" "$@" > /dev/null &
  pids+=($!)
}

# ---------------------------------------------------------------------------------------------
# The Python suites on the GPU (issue 41, item 3), with the Python that make_python_carry.sh packs
# (python.tar.xz, beside this script): PyOpenCL 2026.1.2's test_array.py and test_algorithm.py with
# no pool, PyOpenCL's pool and clpool's pool; clpool's stress test on PyOpenCL 2026.1.2 and on
# Debian's 2022.3.1; the pytest plugin observing the GPU (--clpool: the layer over the driver) on
# its example suite (examples/ci/python), buggy and fixed.
if want python; then
  step python 480
  if carried_python; then
    run 20 "the carried Python" python-version.txt env PYTHONPATH="$PYROOT/opt/pyopencl2026" "$PYROOT/python3" \
      -c 'import sys, numpy, pyopencl as cl; print(sys.version.split()[0], numpy.__version__, cl.VERSION_TEXT, [p.name for p in cl.get_platforms()])'
    # The runs of each part at once, each its own process, log and PyOpenCL cache (XDG_CACHE_HOME):
    # the machine has 16 cores, the suites spend their time compiling kernels, and nothing here is
    # timed. Their output goes to their own files only, so the log is not interleaved.
    pids=()
    for pool in none pyopencl clpool; do
      XDG_CACHE_HOME=$SCRATCH/cache-$pool \
        run 300 "PyOpenCL 2026.1.2 test_array.py, test_algorithm.py, pool $pool" "suite-$pool.txt" \
        bash "$PYROOT/suite/python/pyopencl_suite/run_pyopencl_suite.sh" --device system \
        --python "$PYROOT/python3" --pyopencl-src "$PYROOT/pyopencl-tests.tar.gz" \
        --pyopencl-site "$PYROOT/opt/pyopencl2026" --site "$PYROOT/opt/clpool" --pool "$pool" \
        --files test_array.py,test_algorithm.py --out "$STEP_DIR/suite-$pool" \
        ${GPU_SUITE_SELECT:+--select "$GPU_SUITE_SELECT"} > /dev/null &
      pids+=($!)
    done
    for v in 2026 2022; do
      start_stress $v 90 "clpool's stress test on PyOpenCL $v" "stress-$v.txt"
    done
    for v in buggy fixed; do
      proj=$SCRATCH/ci-$v
      mkdir -p "$proj/tests"
      cp "$PYROOT/examples/ci/python/$v/imagelib.py" "$proj/"
      cp "$PYROOT/examples/ci/python/tests/"*.py "$proj/tests/"
      (cd "$proj" && XDG_CACHE_HOME=$SCRATCH/cache-plugin-$v \
        PYTHONPATH=$PYROOT/opt/pyopencl2026:$PYROOT/opt/clpool:$proj \
        run 90 "the pytest plugin observing the GPU, example suite ($v)" "plugin-$v.txt" \
        "$PYROOT/python3" -m pytest -p clpool.pytest_plugin --clpool --clpool-profile nvidia \
        -p no:cacheprovider --clpool-artifacts "$STEP_DIR/artifacts-$v" tests) > /dev/null &
      pids+=($!)
    done
    wait "${pids[@]}"
    for pool in none pyopencl clpool; do
      grep -E "^(PyOpenCL|  not passed)" "$STEP_DIR/suite-$pool.txt" 2>/dev/null | sed 's/^/  /' >> "$SUMMARY"
    done
    for v in 2026 2022; do
      grep -E "^stress: seed|( passed| failed).* in [0-9.]+s" "$STEP_DIR/stress-$v.txt" 2>/dev/null |
        sed "s/^/  stress $v: /" >> "$SUMMARY"
    done
    for v in buggy fixed; do
      grep -E "^=+ .*(passed|failed)|^clpool: " "$STEP_DIR/plugin-$v.txt" 2>/dev/null |
        sed "s/^/  plugin $v: /" >> "$SUMMARY"
    done
    cp "$SUMMARY" "$OUT/summary.txt" 2>/dev/null
  fi
fi

# ---------------------------------------------------------------------------------------------
# Narrowing down a crash of clpool's stress test on the driver (issue 41's first session: a
# SIGSEGV in a thread that was not Python's, in 3 runs of 5 on Debian's PyOpenCL 2022.3.1 (2 more hung), 1 of 2 on
# 2026.1.2; POCL ran 150 s of each without one): the test with one kind of operation at a time
# (python/tests/stress_test.py, CLPOOL_STRESS_OPS), with 8 threads and with 1, on both
# PyOpenCLs, every run a process of its own and all at once; each run's exit code (139: SIGSEGV,
# 124: a hang cut by the time limit) goes to the summary.
if want stress; then
  step stress 120
  if carried_python; then
    pids=()
    for v in 2026 2022; do
      for ops in buffers buffers,drops svm pinned buffers,pool_calls buffers,svm,pinned,drops,pool_calls; do
        for threads in 8 1; do
          CLPOOL_STRESS_OPS=$ops CLPOOL_STRESS_THREADS=$threads start_stress $v 60 \
            "stress $v, $ops, $threads threads" "stress-$v-${ops//,/+}-$threads.txt" -k threads
        done
      done
    done
    wait "${pids[@]}"
    cp "$SUMMARY" "$OUT/summary.txt" 2>/dev/null
  fi
fi

# ---------------------------------------------------------------------------------------------
if want probe; then
  step probe 60
  FREE=$(nvidia_free)
  MAXB=$(pow2_above "${FREE:-${GPU_PROBE_FREE:-4294967296}}")
  note "  free now: ${FREE:-unknown} B; --max-bytes $MAXB"
  run 45 "clpool_probe" probe.txt clpool_probe --platform "$GPU_PLATFORM" --max-bytes "$MAXB" \
    --output "$STEP_DIR/measured.profile" --force
  cp "$STEP_DIR/measured.profile" "$OUT/measured.profile" 2>/dev/null
  echo "--- the measured profile beside the shipped one, key by key (sizes in bytes):"
  clpool_probe --compare "$DATA/nvidia.profile" "$STEP_DIR/measured.profile" 2>&1 | tee "$STEP_DIR/profile-fields.txt"
  sed 's/^/  /' "$STEP_DIR/profile-fields.txt" >> "$SUMMARY"
  # A second run, for repeatability.
  run 30 "clpool_probe (again)" probe2.txt clpool_probe --platform "$GPU_PLATFORM" --max-bytes "$MAXB" \
    --output "$STEP_DIR/measured2.profile" --force
  diff <(grep -v '^#' "$STEP_DIR/measured.profile" 2>/dev/null) <(grep -v '^#' "$STEP_DIR/measured2.profile" 2>/dev/null) \
    > /dev/null && note "  second probe: the same profile" || note "  second probe: a DIFFERENT profile (see probe2.txt)"
  # What the measured profile predicts for the calibration trace (simulated, no device).
  if [[ -s "$STEP_DIR/measured.profile" ]]; then
    for prof in "$DATA/nvidia.profile" "$STEP_DIR/measured.profile"; do
      run 20 "sim with $(basename "$prof")" "sim-$(basename "$prof" .profile).txt" clpool_replay \
        "$DATA/pyopencl_layer.trace" --device sim --profile "$prof" --min-capacity --compare nopool pool:lb=4
    done
  fi
fi

# ---------------------------------------------------------------------------------------------
if want replay; then
  step replay 200
  smi_line
  for t in pyopencl_layer fragmentation; do
    run 20 "$t on sim (nvidia profile)" "$t.sim.txt" clpool_replay "$DATA/$t.trace" --device sim \
      --min-capacity --compare nopool pool:lb=4 --format json="$STEP_DIR/$t.sim.json" --format text
    run 30 "$t on mockcl (nvidia profile)" "$t.mockcl.txt" clpool_replay "$DATA/$t.trace" --device mockcl \
      --mockcl-so "$LIB/libmockcl.so" --min-capacity --compare nopool pool:lb=4 \
      --format json="$STEP_DIR/$t.mockcl.json" --format text
  done
  for t in pyopencl_layer fragmentation; do
    run 100 "$t on opencl:$GPU_PLATFORM" "$t.opencl.txt" clpool_replay "$DATA/$t.trace" \
      --device "opencl:$GPU_PLATFORM" --min-capacity --compare nopool pool:lb=4 --progress \
      --format json="$STEP_DIR/$t.opencl.json" --format text
  done
  {
    for t in pyopencl_layer fragmentation; do
      for d in sim mockcl opencl; do
        echo "== $t on $d"
        grep -E "^(input|configuration|---|minimum capacity|device|result)|could not|error" "$STEP_DIR/$t.$d.txt" 2>/dev/null
      done
    done
  } | tee "$OUT/replay.txt"
  smi_line
fi

# ---------------------------------------------------------------------------------------------
if want tests; then
  step tests 200
  export CLPOOL_TEST_DEVICES=${GPU_TEST_DEVICES:-$GPU_PLATFORM}
  note "  CLPOOL_TEST_DEVICES=$CLPOOL_TEST_DEVICES"
  for t in allocators_test buffer_pool_test svm_pool_test host_pinned_pool_test pool_front_test; do
    limit=45
    [[ $t == allocators_test ]] && limit=90
    run $limit "$t" "$t.txt" "$BIN/$t" --gtest_brief=1 --gtest_output="xml:$STEP_DIR/$t.xml"
    grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$STEP_DIR/$t.txt" 2>/dev/null | sed "s/^/  $t: /" >> "$SUMMARY"
  done
  unset CLPOOL_TEST_DEVICES
  # mockcl's battery needs the mock behind it (its control API); its device-query cross-checks do not.
  run 15 "consistency_check (the battery's query cross-checks)" consistency.txt "$BIN/consistency_check" "$GPU_PLATFORM"
  mkdir -p "$SCRATCH/layer"
  TEST_TMPDIR=$SCRATCH/layer run 90 "layer scenarios ($GPU_LAYER_TEST)" layer_test.txt \
    "$BIN/$GPU_LAYER_TEST" "$LIB/libclpool_layer.so" "$BIN/layer_driver" "$GPU_PLATFORM" "$OCL_ICD_VENDORS" \
    --gtest_brief=1 --gtest_output="xml:$STEP_DIR/layer_test.xml"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$STEP_DIR/layer_test.txt" 2>/dev/null | sed "s/^/  layer_test: /" >> "$SUMMARY"
  TEST_TMPDIR=$SCRATCH/layer run 20 "layer static-destruction scenario (layer_pocl_test)" layer_static.txt \
    "$BIN/layer_pocl_test" "$LIB/libclpool_layer.so" "$BIN/layer_driver" "$GPU_PLATFORM" "$OCL_ICD_VENDORS" \
    --gtest_filter='*static_destruction*' --gtest_output="xml:$STEP_DIR/layer_static.xml"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$STEP_DIR/layer_static.txt" 2>/dev/null | sed "s/^/  layer_static: /" >> "$SUMMARY"
fi

# ---------------------------------------------------------------------------------------------
if want bench; then
  step bench 130
  # The layer: create + release of 4 KiB, bare, the driver's destructor callback alone, the layer
  # loaded but not recording (no settings; a budget, which watches frees), recording.
  LAYER_BENCH_SO=$LIB/libclpool_layer.so run 60 "layer_bench" layer_bench.txt "$BIN/layer_bench" \
    --benchmark_filter='^(bare|bare_dtor_callback|layer_no_settings|layer_budget|layer_recording|layer_recording_direct)/' \
    --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true \
    --benchmark_out="$STEP_DIR/layer_bench.json" --benchmark_out_format=json
  # The pool's hit against the driver's own allocation (1 MiB).
  run 35 "pool/opencl bench" pool_bench.txt "$BIN/pool_opencl_bench" --benchmark_min_time=0.2 \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out="$STEP_DIR/pool_bench.json" --benchmark_out_format=json
  # With time to spare: the layer's stack-capture modes.
  if (( $(left) > 40 )); then
    LAYER_BENCH_SO=$LIB/libclpool_layer.so run 30 "layer_bench (stacks)" layer_bench_stacks.txt "$BIN/layer_bench" \
      --benchmark_filter='_deep/' --benchmark_out="$STEP_DIR/layer_bench_stacks.json" --benchmark_out_format=json
  fi
fi

# ---------------------------------------------------------------------------------------------
end_step
cleanup
note "ballast released; free now: $(nvidia_free) B"
note "total: $(elapsed) s (deadline $GPU_DEADLINE s)"
cp "$SUMMARY" "$OUT/summary.txt"
echo "=== [$(stamp) +$(elapsed)s] done; files in $OUT:"
ls -la "$OUT"
rm -rf "$SCRATCH" "$W"
exec >&- 2>&-
wait "$TEE_PID" 2>/dev/null
exit 0
