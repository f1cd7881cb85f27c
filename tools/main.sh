#!/usr/bin/env bash
# The project's main job: reproduce an out-of-memory on the mock OpenCL device from a trace that
# was recorded from a real program (a PyOpenCL pipeline on POCL, through the clpool layer; see
# tools/replay/examples/record_pyopencl_pipeline.sh), draw it, and answer "would a pool setting
# have saved me?". Exits 0 when the out-of-memory was reproduced as expected, 1 otherwise.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tools/main.sh [--help]

The project's main job, in two steps over the mock OpenCL device (no GPU needed):
  1. replays tools/replay/examples/pyopencl_layer.trace (recorded from a PyOpenCL pipeline on
     POCL through the clpool layer) on a 128 MiB mockcl device and reproduces its out-of-memory,
     drawing it to $CLPOOL_SVG (default ${TMPDIR:-/tmp}/clpool_oom.svg);
  2. finds, per pool configuration, the smallest device on which the trace runs cleanly.
It runs tools/setup.sh (installs missing Debian packages) and builds with Bazel first.
Exit status: 0 when the out-of-memory was reproduced as expected, 1 otherwise, 2 bad usage.
USAGE
}
case "${1:-}" in
  "") ;;
  -h | --help) usage; exit 0 ;;
  *) echo "main.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
esac
(( $# <= 1 )) || { echo "main.sh: too many arguments" >&2; usage >&2; exit 2; }

cd "$(dirname "$0")/.."
bash tools/setup.sh

trace="$PWD/tools/replay/examples/pyopencl_layer.trace"
svg="${CLPOOL_SVG:-${TMPDIR:-/tmp}/clpool_oom.svg}"
replay() { bazel run --ui_event_filters=-info --noshow_progress --show_result=0 \
  //tools/replay:clpool_replay -- "$@"; }

echo "== 1. replay the recorded trace on a 128 MiB mockcl device, deferred allocation, pool:lb=4"
rc=0
replay "$trace" --device mockcl --capacity 128MiB --semantics deferred --svg "$svg" --no-progress || rc=$?
case $rc in
  1) ;;  # clpool_replay: "reproduced an out-of-memory", which is what this job shows
  0) echo "main.sh: FAILED: the replay ran cleanly; the out-of-memory was not reproduced" >&2; exit 1 ;;
  2) echo "main.sh: FAILED: clpool_replay rejected its input (exit 2)" >&2; exit 1 ;;
  *) echo "main.sh: FAILED: clpool_replay exited $rc" >&2; exit 1 ;;
esac

echo
echo "== 2. would a pool setting have saved me? smallest mockcl capacity per configuration"
rc=0
replay "$trace" --device mockcl --semantics deferred --min-capacity --no-progress \
  --compare nopool pool:lb=4 pool:lb=4,trim-ratio=0.25 pool:lb=4,alloc=immediate || rc=$?
if [[ $rc != 0 ]]; then
  echo "main.sh: FAILED: --min-capacity exited $rc (0 expected: every configuration has a capacity)" >&2
  exit 1
fi

echo
echo "picture: $svg"
echo "main.sh: OK: out-of-memory reproduced on the mock device"
