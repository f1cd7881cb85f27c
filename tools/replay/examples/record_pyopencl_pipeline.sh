#!/usr/bin/env bash
# Records pyopencl_pipeline.py on the system's OpenCL device (POCL here) through the clpool layer
# (OPENCL_LAYERS), writing the trace the main job replays:
#
#   bash tools/replay/examples/record_pyopencl_pipeline.sh tools/replay/examples/pyopencl_layer.trace
#
# Builds the layer with Bazel unless CLPOOL_RECORD_LAYER_SO names one. PYTHON (default
# /usr/bin/python3) must have pyopencl (tools/setup.sh installs python3-pyopencl and POCL).
set -euo pipefail
[[ $# -ge 1 ]] || { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
out=$1
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
so=${CLPOOL_RECORD_LAYER_SO:-}
if [[ -z $so ]]; then
  repo=$(cd "$here/../../.." && pwd)
  (cd "$repo" && bazel build //tools/layer:libclpool_layer.so >&2)
  so=$(cd "$repo" && bazel info bazel-bin 2>/dev/null)/tools/layer/libclpool_layer.so
fi
rm -f "$out"
OPENCL_LAYERS=$(realpath "$so") CLPOOL_LAYER_TRACE="$out" "${PYTHON:-/usr/bin/python3}" \
  "$here/pyopencl_pipeline.py" "$@"
[[ -s $out ]] || { echo "record_pyopencl_pipeline.sh: no trace written to $out" >&2; exit 1; }
echo "wrote $(grep -vc '^#' "$out") lines to $out" >&2
