#!/usr/bin/env bash
# The nvidia profile against an NVIDIA H200, trial by trial (testdata/boundary/h200: the driver's
# answers from tools/dev/gpu/run_on_gpu.sh, step boundary). Each boundary trace is replayed on
# mockcl played as that device (the free memory it had with a context open, the same ballast of
# real buffers) at the same capacities; every trial must give the H200's verdict and first
# failing allocation, and start from the free memory and fill the H200 reported.
#   h200_boundary_test.sh CLPOOL_REPLAY LIBMOCKCL_SO COMPARE_TRIALS_PY TRACE...
set -u
source "$(dirname "$0")/../dev/testing/test_lib.sh" || exit 1  # fail, die, finish, expect_run
REPLAY="$(realpath "$1")"
export LIBMOCKCL_SO="$(realpath "$2")"
COMPARE="$(realpath "$3")"
shift 3
T="${TEST_TMPDIR:-$(mktemp -d)}"
VENDORS="$T/vendors"
mkdir -p "$VENDORS"
echo "$LIBMOCKCL_SO" > "$VENDORS/mockcl.icd"
checked=0
for trace in "$@"; do
  name=$(basename "$trace" .trace)
  answers="$(dirname "$trace")/h200/$name.json"
  [[ -f "$answers" ]] || continue  # nofrees_s4: the session's deadline came first
  read -r lo hi free < <(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["results"][0]["trials"]
print(t[0]["capacity"], t[-1]["capacity"], t[0]["device_free_at_start_bytes"])' "$answers")
  OCL_ICD_VENDORS="$VENDORS" MOCKCL_BACKING=none \
    MOCKCL_DEVICES="gpu:capacity=$free,reported=$free,max_alloc=$free,profile=nvidia,free_query=amd" \
    "$REPLAY" --no-progress "$trace" --no-pool --device opencl:mockcl --trials "$lo:$hi:64KiB" \
    --format json="$T/$name.json" > /dev/null 2>&1
  rc=$?
  ((rc == 1)) || { fail "$name: --trials on mockcl exit $rc, want 1"; continue; }
  expect_run 0 "nopool: 257 of 257 trials agree" python3 "$COMPARE" model="$T/$name.json" h200="$answers"
  # The same device behind the same ballast: what it said was free, and what a fill took.
  python3 - "$T/$name.json" "$answers" <<'PY' || fail "$name: the devices differ before the replay"
import json, sys
a, b = (json.load(open(p))["results"][0]["trials"] for p in sys.argv[1:])
bad = [(x["capacity"], k, x.get(k), y.get(k)) for x, y in zip(a, b)
       for k in ("device_free_bytes", "fill_accepted_bytes") if x.get(k) != y.get(k)]
for b_ in bad[:5]:
    print("  %d B: %s: mockcl %s, the H200 %s" % b_)
sys.exit(1 if bad else 0)
PY
  checked=$((checked + 1))
done
((checked == 7)) || fail "checked $checked traces against the H200, want 7"
finish
