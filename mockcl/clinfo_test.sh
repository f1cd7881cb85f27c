#!/bin/bash
# clinfo, a real OpenCL client, lists the mock platform and its devices through the system ICD
# loader and exits 0.
set -euo pipefail
so="$(realpath "$1")"
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh  # mockcl_icd; from the runfiles root
dir="$(mktemp -d "${TEST_TMPDIR:-/tmp}/vendors.XXXXXX")"
mockcl_icd "$dir" "$so"
export OCL_ICD_VENDORS="$dir" OCL_ICD_PLATFORM_SORT=none
export MOCKCL_DEVICES="gpu-256m;gpu-8g:semantics=deferred;cpu"
out="$(clinfo)"
# Not `echo "$out" | head -20`: head exits after 20 lines, echo can die of SIGPIPE, and pipefail
# turns that into a failed test (8 of 300 runs of that pipeline failed here).
head -20 <<<"$out"
grep -q "Platform Name *mockcl" <<<"$out"
grep -q "Number of devices *3" <<<"$out"
grep -q "Device Name *mockcl gpu-256m" <<<"$out"
grep -q "Device Name *mockcl gpu-8g" <<<"$out"
grep -q "Device Name *mockcl cpu-4g" <<<"$out"
grep -q "Global memory size *8589934592" <<<"$out"
grep -q "Coarse-grained buffer sharing *Yes" <<<"$out"
list="$(clinfo -l)"
[[ "$(grep -c 'Device #' <<<"$list")" == 3 ]]
echo PASS
