#!/bin/bash
# PyOpenCL (Debian's, hence /usr/bin/python3) on mockcl through the system ICD loader.
set -euo pipefail
so="$(realpath "$1")"
script="$(realpath "$2")"
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh  # mockcl_icd; from the runfiles root
dir="$(mktemp -d "${TEST_TMPDIR:-/tmp}/vendors.XXXXXX")"
mockcl_icd "$dir" "$so"
export OCL_ICD_VENDORS="$dir" OCL_ICD_PLATFORM_SORT=none
export MOCKCL_DEVICES="gpu-64m;gpu-64m:semantics=deferred,name=deferred"
export MOCKCL_BACKING=none  # the mock's own semantics; pyopencl_backing_test.sh computes on POCL
export PYOPENCL_NO_CACHE=1  # every program built by the mock, none loaded from an earlier run's binary
err="${TEST_TMPDIR:-/tmp}/stderr.txt"
/usr/bin/python3 "$script" "$so" 2> >(tee "$err" >&2)
sleep 0.2
# PyOpenCL leaves objects behind at exit (and leaks a cl_mem after a failed migrate): the ICD's
# exit report names them.
grep -q "mockcl: objects alive at process exit: .*mem=1" "$err"
echo "exit report seen"
