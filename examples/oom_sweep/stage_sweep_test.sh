#!/usr/bin/env bash
# README.md's clpool sweep example, run as it is written there: the unchecked build of stage
# crashes at each failing map of a staging buffer (exit 1), the checked build handles every point
# (exit 0), and each report says so by site.
#   stage_sweep_test.sh CLPOOL LIBMOCKCL_SO STAGE STAGE_UNCHECKED
set -u
source "$(dirname "$0")/../../tools/dev/testing/test_lib.sh" || exit 1  # fail, finish
CLPOOL="$(realpath "$1")"
export OCL_ICD_VENDORS="$(realpath "$2")"
STAGE="$(realpath "$3")"
UNCHECKED="$(realpath "$4")"
T="${TEST_TMPDIR:-$(mktemp -d)}"
export POCL_CACHE_DIR="$T/pocl-cache"
unset OPENCL_LAYERS
[[ -n "${ASAN_OPTIONS:-}" ]] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"

has() { [[ "$out" == *"$1"* ]] || fail "report lacks '$1'"; }

out="$("$CLPOOL" sweep --profile nvidia --out "$T/unchecked" -- "$UNCHECKED" 2>&1)"
rc=$?
echo "$out"
[[ $rc == 1 ]] || fail "the unchecked build's sweep exited $rc, want 1"
has "8 failure points (4 allocations, 4 first uses)"
has "crashed 3, hung 0, leaked 0, silent 0, handled 5, not reached 0"
if [[ -n "${ASAN_OPTIONS:-}" ]]; then  # built with the sanitizers: UBSan's report ends it, exit 1
  has "stage.c:"
  has ": runtime error: null pointer passed as argument 1"
else
  has "signal 11 (SIGSEGV)"
fi
has "upload_chunk ("
has "replay: clpool sweep --profile nvidia --only first-use:1 -- $UNCHECKED"

out="$("$CLPOOL" sweep --profile nvidia --only first-use:1 --out "$T/one" -- "$STAGE" 2>&1)"
rc=$?
echo "$out"
[[ $rc == 0 ]] || fail "the checked build's run of first-use:1 exited $rc, want 0"
has "first-use:1 (4 MiB, clEnqueueMapBuffer): exit 1: reported"

out="$("$CLPOOL" sweep --profile nvidia --out "$T/checked" -- "$STAGE" 2>&1)"
rc=$?
echo "$out"
[[ $rc == 0 ]] || fail "the checked build's sweep exited $rc, want 0"
has "crashed 0, hung 0, leaked 0, silent 0, handled 8, not reached 0"
finish
