#!/bin/bash
# The test clpool_memory_test (memory_test.bzl) generates: runs a program under clpool's OpenCL
# layer on a device of the given capacity and profile, and fails, with clpool_replay's report of
# the sites holding the memory, when the program exits non-zero, runs out of device memory, or
# peaks above its limit.
#   memory_test.sh CLPOOL LAYER_SO CLPOOL_REPLAY LIBMOCKCL_SO|- CAPACITY PROFILE LIMIT BINARY -- [ARGS...]
# CAPACITY and LIMIT are sizes as the rule's user wrote them ("256MiB", or bytes; LIMIT "-": none),
# PROFILE a device profile; clpool_replay checks all three before anything runs (clpool's one size
# grammar and the profile's headroom: the rule holds no copy of them). LIBMOCKCL_SO "-": the
# system's OpenCL device.
# The trace, the reports and the pages go to $TEST_UNDECLARED_OUTPUTS_DIR (else $TEST_TMPDIR).
set -uo pipefail
if [[ $# -lt 9 || "$9" != "--" ]]; then
  echo "memory_test.sh: usage: CLPOOL LAYER_SO CLPOOL_REPLAY LIBMOCKCL_SO|- CAPACITY PROFILE LIMIT BINARY -- [ARGS...]" >&2
  exit 2
fi
clpool="$(realpath "$1")"
layer="$(realpath "$2")"
replay="$(realpath "$3")"
mockcl="$4"
capacity="$5"
profile="$6"
limit="$7"
binary="$(realpath "$8")"
shift 9
out="${TEST_UNDECLARED_OUTPUTS_DIR:-${TEST_TMPDIR:-$(mktemp -d)}}"
mkdir -p "$out"
trace="$out/device.trace"
rm -f "$trace"
name="$(basename "$binary")"
# Where a user finds the outputs after the test: Bazel zips the undeclared outputs there.
shown="$out"
if [[ -n "${TEST_TARGET:-}" && -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" ]]; then
  target="${TEST_TARGET#@*//}"
  target="${target#//}"
  package="${target%%:*}"
  shown="bazel-testlogs/${package:+$package/}${target#*:}/test.outputs/outputs.zip"
fi

# A setting clpool refuses fails the test before the program runs, with clpool's message naming
# the rule's attribute: the sizes and the profile as clpool_replay checks its --capacity and
# --profile, on an empty trace.
check() {  # check ATTRIBUTE SIZE PROFILE
  local empty="${TEST_TMPDIR:-/tmp}/memory_test_empty.trace" said
  printf 'clpool-trace 1\n' > "$empty"
  if ! said="$("$replay" "$empty" --no-pool --capacity "$2" --profile "$3" --no-progress 2>&1 >/dev/null)"; then
    said="${said#clpool_replay: error: }"
    said="${said//--capacity/$1}"
    echo "clpool_memory_test: FAIL: ${said//--profile/profile}"
    exit 2
  fi
}
check capacity "$capacity" "$profile"
[[ "$limit" != "-" ]] && check limit "$limit" exact

if [[ "$mockcl" != "-" ]]; then
  vendors="$(mktemp -d "${TEST_TMPDIR:-/tmp}/mockcl-vendors.XXXXXX")"
  realpath "$mockcl" > "$vendors/mockcl.icd"
  export OCL_ICD_VENDORS="$vendors" OCL_ICD_PLATFORM_SORT=none
  export MOCKCL_DEVICES="gpu-$capacity:profile=$profile"
  where="a mockcl device of $capacity, $profile profile"
else
  where="the system's OpenCL device, the layer enforcing $capacity ($profile profile)"
fi
echo "clpool_memory_test: $name $* on $where"
# The layer enforces the capacity too, so that an out-of-memory is in the trace with its reason.
"$clpool" record --layer "$layer" --out "$trace" --budget "$capacity" --profile "$profile" -- "$binary" "$@"
status=$?

# Replays the trace on a device of CAPACITY with PROFILE, no pool (the trace holds the program's
# own requests to the driver), writing the report and the page as NAME.txt, NAME.html.
report() {  # report NAME CAPACITY PROFILE
  "$replay" "$trace" --no-pool --capacity "$2" --profile "$3" --no-progress \
    --html "$out/$1.html" > "$out/$1.txt" 2> "$out/$1.err"
  local rc=$?
  cat "$out/$1.txt"
  [[ $rc -eq 2 ]] && cat "$out/$1.err" >&2
  echo "clpool_memory_test: the trace device.trace, the report $1.txt and the page $1.html are in $shown"
  return $rc
}

failed=0
# A program that makes no device allocation fits any device: it passes, saying so (the layer sees
# the OpenCL calls that go through the ICD loader, libOpenCL.so).
if [[ ! -s "$trace" ]] || ! grep -qE '^[0-9]+ [0-9]+ [0-9]+ [0-9]+ alloc(_failed)? ' "$trace"; then
  if [[ $status -ne 0 ]]; then
    echo "clpool_memory_test: FAIL: $name exited with status $status (it made no device allocation)"
    exit 1
  fi
  echo "clpool_memory_test: PASS: $name made no device allocation through the OpenCL ICD loader (nothing to fit)"
  exit 0
fi
if grep -qE '^[0-9]+ [0-9]+ [0-9]+ [0-9]+ alloc_failed |^# failure: first use ' "$trace"; then
  echo "clpool_memory_test: FAIL: $name ran out of device memory on $where; clpool's report:"
  grep -m1 '^# failure: ' "$trace" | sed 's/^# failure: /  the layer: /'
  report out_of_memory "$capacity" "$profile"
  failed=1
elif [[ "$limit" != "-" ]]; then
  # The peak of requested bytes is above LIMIT exactly when a replay on an exact-byte device of
  # LIMIT runs out of memory; its report names the sites at that point.
  report limit "$limit" exact > "$out/limit.log"
  rc=$?
  if [[ $rc -eq 1 ]]; then
    echo "clpool_memory_test: FAIL: $name's peak device memory is above its limit of $limit; the replay on a device of $limit:"
    cat "$out/limit.log"
    failed=1
  elif [[ $rc -ne 0 ]]; then
    cat "$out/limit.log"
    echo "clpool_memory_test: FAIL: clpool_replay could not replay the trace (exit $rc)"
    failed=1
  fi
fi
if [[ $status -ne 0 ]]; then
  echo "clpool_memory_test: FAIL: $name exited with status $status"
  failed=1
fi
if [[ $failed -eq 0 ]]; then
  echo "clpool_memory_test: PASS: $name fits $where$([[ "$limit" != "-" ]] && echo " and its limit of $limit")"
fi
exit $failed
