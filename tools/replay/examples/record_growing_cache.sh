#!/usr/bin/env bash
# Records growing_cache.py (a cache that is never evicted) both ways, from the repository root and
# with the script's relative path, so that the traces' Python frames name
# tools/replay/examples/growing_cache.py whatever the checkout's directory:
#
#   bash tools/replay/examples/record_growing_cache.sh OUT_DIR [growing_cache.py ARGS...]
#
# writes OUT_DIR/growing_cache_layer.trace (under the clpool layer with `clpool record`, stacks on)
# and OUT_DIR/growing_cache_app.trace (with clpool.record, CLPOOL_APP_TRACE), each replaced if it is
# an earlier recording. Arguments default to --requests 40. Builds //tools/record:clpool and
# //python:_core.so with Bazel unless CLPOOL (the clpool binary) and CLPOOL_PYTHONPATH (a directory
# holding the clpool package) are set. PYTHON (default /usr/bin/python3) must have pyopencl; the
# recordings use the system's OpenCL platform (POCL). Exit status: 2 for bad arguments, else the
# first failing recording's.
set -euo pipefail
[[ $# -ge 1 && $1 != -* ]] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[[ -d $1 ]] || { echo "record_growing_cache.sh: $1 is not a directory" >&2; exit 2; }
out=$(cd "$1" && pwd)
shift
[[ $# -gt 0 ]] || set -- --requests 40
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
cd "$repo"
clpool=${CLPOOL:-}
site=${CLPOOL_PYTHONPATH:-}
if [[ -z $clpool || -z $site ]]; then
  bazel build //tools/record:clpool //python:_core.so >&2
  bin=$(bazel info bazel-bin 2>/dev/null)
  clpool=$bin/tools/record/clpool
  site=$(mktemp -d "${TMPDIR:-/tmp}/clpool-site.XXXXXX")
  trap 'rm -rf "$site"' EXIT
  mkdir "$site/clpool"
  cp python/clpool/*.py "$site/clpool/"
  cp "$bin/python/_core.so" "$site/clpool/_core.so"
fi
python=${PYTHON:-/usr/bin/python3}
script=tools/replay/examples/growing_cache.py
# Python (3.9 and later) makes the path of the script it is given absolute, and its frames would
# name this machine's checkout. The script is run by a one-line launcher that compiles it under its
# relative path instead: the stacks gain one outermost frame, <module> (<string>:1).
launch='import sys; p = sys.argv[1]; sys.argv = sys.argv[1:]; exec(compile(open(p).read(), p, "exec"), {"__name__": "__main__", "__file__": p})'
"$clpool" record --force --out "$out/growing_cache_layer.trace" -- "$python" -c "$launch" "$script" "$@"
CLPOOL_APP_TRACE="$out/growing_cache_app.trace" PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" \
  "$python" -c "$launch" "$script" "$@"
