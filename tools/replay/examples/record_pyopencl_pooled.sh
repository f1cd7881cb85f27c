#!/usr/bin/env bash
# Records pyopencl_pooled.py (PyOpenCL kernels over a pyopencl.tools.MemoryPool) both ways in one
# run: under the clpool layer with `clpool record` (what the pool asks the driver for) and with
# clpool.record around its pool (what the program asks the pool for):
#
#   bash tools/replay/examples/record_pyopencl_pooled.sh OUT_DIR [pyopencl_pooled.py ARGS...]
#
# writes OUT_DIR/pyopencl_pooled_layer.trace and OUT_DIR/pyopencl_pooled_app.trace (each replaced
# if it is an earlier recording) and prints the layer trace's summary. Builds //tools/record:clpool
# and //python:_core.so with Bazel unless CLPOOL (the clpool binary) and CLPOOL_PYTHONPATH (a
# directory holding the clpool package) are set. PYTHON (default /usr/bin/python3) must have
# pyopencl. Exit status: the program's, as `clpool record` passes it on.
set -euo pipefail
[[ $# -ge 1 && $1 != -* ]] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
out=$1
shift
[[ -d $out ]] || { echo "record_pyopencl_pooled.sh: $out is not a directory" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
clpool=${CLPOOL:-}
site=${CLPOOL_PYTHONPATH:-}
if [[ -z $clpool || -z $site ]]; then
  repo=$(cd "$here/../../.." && pwd)
  (cd "$repo" && bazel build //tools/record:clpool //python:_core.so >&2)
  bin=$(cd "$repo" && bazel info bazel-bin 2>/dev/null)
  clpool=$bin/tools/record/clpool
  site=$(mktemp -d "${TMPDIR:-/tmp}/clpool-site.XXXXXX")
  trap 'rm -rf "$site"' EXIT
  mkdir "$site/clpool"
  cp "$repo"/python/clpool/*.py "$site/clpool/"
  cp "$bin/python/_core.so" "$site/clpool/_core.so"
fi
PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" "$clpool" record --force \
  --out "$out/pyopencl_pooled_layer.trace" -- \
  "${PYTHON:-/usr/bin/python3}" "$here/pyopencl_pooled.py" --record-app "$out/pyopencl_pooled_app.trace" "$@"
