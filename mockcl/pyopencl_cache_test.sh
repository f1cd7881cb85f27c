#!/bin/bash
# PyOpenCL's binary cache across runs (pyopencl_cache_test.py): the same program in three
# processes sharing one cache directory, in the mode given ($3: none or pocl). The first builds
# from source; the later ones must rebuild from the cached binary with the same kernels.
set -euo pipefail
so="$(realpath "$1")"
script="$(realpath "$2")"
mode="$3"
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh  # mockcl_icd; from the runfiles root
dir="$(mktemp -d "${TEST_TMPDIR:-/tmp}/vendors.XXXXXX")"
mockcl_icd "$dir" "$so"
export OCL_ICD_VENDORS="$dir" OCL_ICD_PLATFORM_SORT=none
export MOCKCL_DEVICES="gpu-64m"
export MOCKCL_BACKING="$mode"
cache="$(mktemp -d "${TEST_TMPDIR:-/tmp}/cache.XXXXXX")"
export XDG_CACHE_HOME="$cache" POCL_CACHE_DIR="$cache/pocl"
computes=none
[ "$mode" = pocl ] && computes=compute
/usr/bin/python3 "$script" "$so" build "$computes"
ls "$cache"/pyopencl/*/*/binary > /dev/null  # PyOpenCL stored a binary
/usr/bin/python3 "$script" "$so" hit "$computes"
/usr/bin/python3 "$script" "$so" hit "$computes"
# A corrupted cached binary: clCreateProgramWithBinary answers CL_INVALID_BINARY (never a crash),
# and PyOpenCL warns and builds from source, as it does on a real driver.
for b in "$cache"/pyopencl/*/*/binary; do printf 'garbage' > "$b"; done
/usr/bin/python3 "$script" "$so" hit "$computes" 2> "$cache/err.txt" || { cat "$cache/err.txt" >&2; exit 1; }
grep -q "INVALID_BINARY" "$cache/err.txt" || { cat "$cache/err.txt" >&2; exit 1; }
echo "corrupt binary refused"
