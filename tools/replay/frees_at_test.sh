#!/usr/bin/env bash
# Both moments of a free, end to end over POCL (trace/FORMAT.md "Two moments of a free"): the same
# program (examples/release_loop.py) recorded through the layer with and without a wait per step
# gives the same minimum capacity within a granule under the default rule (the nvidia profile's:
# free at the program's release), for the pool and without it, and the report says which rule it
# used. At the driver's moment (--frees-at driver, what a version-1 or -2 trace meant) the run
# without waits needs far more: POCL freed its buffers only at exit. The pocl profile predicts
# that too (its commands finish at the program's waits).
#   frees_at_test.sh CLPOOL CLPOOL_REPLAY RELEASE_LOOP_PY
set -u
source "$(dirname "$0")/../dev/testing/test_lib.sh" || exit 1  # fail, die, finish
CLPOOL="$(realpath "$1")"
REPLAY="$(realpath "$2")"
PROGRAM="$(realpath "$3")"
T="${TEST_TMPDIR:-$(mktemp -d)}"
cd "$T" || exit 1
export POCL_CACHE_DIR="$T/pocl-cache"
unset OPENCL_LAYERS OCL_ICD_VENDORS
[[ -n "${ASAN_OPTIONS:-}" ]] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
preload_env "$REPLAY"
py_env=("${preload_env[@]}")

for run in nowait wait; do
  args=()
  [[ $run == wait ]] && args=(--wait)
  out="$("${py_env[@]}" "$CLPOOL" record --stacks none --out "$T/$run.trace" -- /usr/bin/python3 "$PROGRAM" "${args[@]}" 2>&1)" ||
    die "clpool record ($run) failed: $out"
  [[ "$(head -1 "$T/$run.trace")" == "clpool-trace 3" ]] || fail "$run: not a version-3 trace"
  grep -q "^release: [1-9]" <<<"$out" || fail "$run: no release recorded: $out"
  echo "$run: $(grep -E '^(peak_device_bytes|release|wait|peak_device_bytes_at_release):' <<<"$out" | tr '\n' ' ')"
done

# min CONFIG TRACE [ARGS...]: the minimum capacity in bytes (granule 1 MiB).
min() {
  local config=$1 trace=$2
  shift 2
  local out
  out="$("$REPLAY" --no-progress "$trace" --min-capacity --granule 1MiB --compare "$config" --json "$@")" ||
    { fail "clpool_replay $trace --compare $config $*: exit $?"; echo 0; return; }
  python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["min_capacity"]["capacity"])' <<<"$out"
}
MiB=$((1 << 20))
for config in nopool pool; do
  a=$(min "$config" "$T/nowait.trace")
  b=$(min "$config" "$T/wait.trace")
  echo "$config, default rule: without waits $((a / MiB)) MiB, with a wait per step $((b / MiB)) MiB"
  diff=$((a > b ? a - b : b - a))
  ((diff <= MiB)) || fail "$config: the default rule gives $a and $b bytes, more than a granule apart"
  da=$(min "$config" "$T/nowait.trace" --frees-at driver)
  db=$(min "$config" "$T/wait.trace" --frees-at driver)
  echo "$config, --frees-at driver: without waits $((da / MiB)) MiB, with a wait per step $((db / MiB)) MiB"
  ((da > db + 4 * MiB)) || fail "$config: at the driver's moment POCL's late frees should cost more ($da vs $db)"
done
pa=$(min nopool "$T/nowait.trace" --profile pocl)
pb=$(min nopool "$T/wait.trace" --profile pocl)
echo "nopool, pocl profile (frees at the next wait): without waits $((pa / MiB)) MiB, with $((pb / MiB)) MiB"
((pa > pb + 4 * MiB)) || fail "the pocl profile should predict POCL's late frees ($pa vs $pb)"

out="$("$REPLAY" --no-progress "$T/nowait.trace" --min-capacity --no-pool)"
[[ "$out" == *"frees at                  the program's release"*"(what the nvidia profile predicts: its commands finish promptly; --frees-at to choose)"* ]] ||
  fail "the report does not name the rule: $out"
finish
