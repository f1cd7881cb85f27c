#!/bin/bash
# oom_sweep_test.sh, the script every clpool_oom_sweep_test runs, on sweep_victim: it fails on a
# program that leaks on its error path and passes on one that handles it, its outputs land in the
# undeclared outputs, and under Bazel's sharding variables each shard runs its share, the shards
# together every point once, each touching TEST_SHARD_STATUS_FILE.
#   oom_sweep_runner_test.sh OOM_SWEEP_TEST_SH CLPOOL LAYER_SO LIBMOCKCL_SO SWEEP_VICTIM
set -u
source "$(dirname "$0")/../dev/testing/test_lib.sh" || exit 1
runner="$(realpath "$1")"
tools=("$(realpath "$2")" "$(realpath "$3")" "$(realpath "$4")")
victim="$(realpath "$5")"
T="${TEST_TMPDIR:-$(mktemp -d)}"
[[ -n "${ASAN_OPTIONS:-}" ]] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
run() {  # run CASE [ENV...] -- MODE: the runner as Bazel would run it
  local case="$1"; shift
  local env=()
  while [[ "$1" != "--" ]]; do env+=("$1"); shift; done
  shift
  env "${env[@]}" TEST_UNDECLARED_OUTPUTS_DIR="$T/$case" bash "$runner" "${tools[@]}" "$victim" \
    --profile nvidia -- "$@" > "$T/$case.log" 2>&1
}
run handles -- handles
rc=$?
[[ $rc == 0 ]] || { fail "handles: exit $rc"; cat "$T/handles.log"; }
grep -q "crashed 0, hung 0, leaked 0, silent 0, handled 6, not reached 0" "$T/handles.log" || fail "handles: verdicts"
[[ -s "$T/handles/sweep.json" && -s "$T/handles/sweep.html" && -d "$T/handles/sweep/runs" ]] || fail "handles: outputs"
run leaks -- leaks
rc=$?
[[ $rc == 1 ]] || { fail "leaks: exit $rc, want 1"; cat "$T/leaks.log"; }
grep -q "leaked: 4 runs" "$T/leaks.log" || fail "leaks: verdicts"
for k in 0 1 2; do
  run "shard$k" TEST_TOTAL_SHARDS=3 TEST_SHARD_INDEX=$k TEST_SHARD_STATUS_FILE="$T/status$k" -- handles
  [[ $? == 0 && -e "$T/status$k" ]] || fail "shard $k: exit or status file"
  grep -q "shard $((k + 1))/3" "$T/shard$k.log" || fail "shard $k: not sharded"
done
/usr/bin/python3 - "$T" <<'PY' || fail "the shards together are not the whole sweep"
import json, sys
d = sys.argv[1]
runs = lambda case: [r["point"] for r in json.load(open(f"{d}/{case}/sweep.json"))["runs"]]
union = sorted(p for k in range(3) for p in runs(f"shard{k}"))
assert union == sorted(runs("handles")) and len(set(union)) == len(union) == 6, union
PY
bash "$runner" "${tools[@]}" > "$T/usage.log" 2>&1
[[ $? == 2 ]] && grep -q "oom_sweep_test.sh: usage" "$T/usage.log" || fail "usage"
finish
