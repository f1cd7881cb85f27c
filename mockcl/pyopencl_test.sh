#!/bin/bash
# PyOpenCL (Debian's, hence /usr/bin/python3) on mockcl through the system ICD loader.
set -euo pipefail
so="$(realpath "$1")"
script="$(realpath "$2")"
dir="$(mktemp -d "${TEST_TMPDIR:-/tmp}/vendors.XXXXXX")"
echo "$so" > "$dir/mockcl.icd"
export OCL_ICD_VENDORS="$dir" OCL_ICD_PLATFORM_SORT=none
export MOCKCL_DEVICES="gpu-64m;gpu-64m:semantics=deferred,name=deferred"
exec /usr/bin/python3 "$script" "$so"
