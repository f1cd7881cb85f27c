#!/bin/bash
# PyOpenCL (Debian's, hence /usr/bin/python3) computing on mockcl's backing device (POCL).
set -euo pipefail
so="$(realpath "$1")"
script="$(realpath "$2")"
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh  # mockcl_icd; from the runfiles root
dir="$(mktemp -d "${TEST_TMPDIR:-/tmp}/vendors.XXXXXX")"
mockcl_icd "$dir" "$so"
export OCL_ICD_VENDORS="$dir" OCL_ICD_PLATFORM_SORT=none
export MOCKCL_DEVICES="gpu-64m;gpu-16m:semantics=deferred,name=small"
export MOCKCL_BACKING=pocl
# PyOpenCL's kernel cache would otherwise go to $HOME.
export XDG_CACHE_HOME="${TEST_TMPDIR:-/tmp}/cache" POCL_CACHE_DIR="${TEST_TMPDIR:-/tmp}/pocl-cache"
/usr/bin/python3 "$script" "$so"
