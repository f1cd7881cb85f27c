#!/usr/bin/env bash
# Records a trace of the PyOpenCL workload (pyopencl_workload.py) on the system's OpenCL device
# (POCL here) through the clpool layer, then prints its summary.
#
#   tools/layer/record_pyopencl_workload.sh OUT.trace [--budget SIZE] [WORKLOAD ARGS...]
#
#   --budget SIZE   simulate a device of SIZE bytes (CLPOOL_LAYER_BUDGET grammar: 4GiB, 512MiB)
#   WORKLOAD ARGS   passed to pyopencl_workload.py (--scale, --steps, --allocator; see --help)
#
# Example, the README's scenario (a 4 GiB-class workload on a simulated 4 GiB card; deferred
# allocation keeps POCL from touching the memory, so it runs on a laptop):
#   tools/layer/record_pyopencl_workload.sh oom.trace --budget 4GiB --scale 4GiB --allocator deferred
#
# Exit status: the workload's (0: ran to the end, 3: out of memory, which is what an OOM scenario
# wants), or 1 when the trace could not be recorded or is not valid.
# CLPOOL_RECORD_LAYER_SO and CLPOOL_RECORD_TRACE_SUMMARY name prebuilt binaries (tests use them); otherwise the
# script builds them with Bazel. PYTHON (default /usr/bin/python3) must have pyopencl.
set -euo pipefail

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
[[ $# -ge 1 && $1 != -h && $1 != --help ]] || usage 2
out=$1
shift
budget=""
if [[ ${1:-} == --budget ]]; then
  [[ $# -ge 2 ]] || { echo "record_pyopencl_workload.sh: --budget needs a size" >&2; exit 2; }
  budget=$2
  shift 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
so=${CLPOOL_RECORD_LAYER_SO:-}
summary=${CLPOOL_RECORD_TRACE_SUMMARY:-}
if [[ -z $so || -z $summary ]]; then
  repo=$(cd "$here/../.." && pwd)
  (cd "$repo" && bazel build //tools/layer:libclpool_layer.so //tools/layer:trace_summary >&2)
  bin=$(cd "$repo" && bazel info bazel-bin 2>/dev/null)
  so=$bin/tools/layer/libclpool_layer.so
  summary=$bin/tools/layer/trace_summary
fi
so=$(realpath "$so")
python=${PYTHON:-/usr/bin/python3}

env_args=(OPENCL_LAYERS="$so" CLPOOL_LAYER_TRACE="$out")
[[ -n $budget ]] && env_args+=(CLPOOL_LAYER_BUDGET="$budget")

status=0
env "${env_args[@]}" "$python" "$here/pyopencl_workload.py" "$@" || status=$?
echo "workload exit status: $status" >&2
if [[ ! -s $out ]]; then
  echo "record_pyopencl_workload.sh: no trace was written to $out" >&2
  exit 1
fi
"$summary" "$out" || exit 1
exit "$status"
