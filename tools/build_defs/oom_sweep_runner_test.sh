#!/bin/bash
# oom_sweep_test.sh, the script every clpool_oom_sweep_test runs, on sweep_victim: it fails on a
# program that leaks on its error path and passes on one that handles it, its outputs land in the
# undeclared outputs, and under Bazel's sharding variables each shard runs its share, the shards
# together every point once, each touching TEST_SHARD_STATUS_FILE; Bazel's --test_filter
# (TESTBRIDGE_TEST_ONLY) runs one point; a value clpool sweep refuses is named by the rule's
# attribute; the log's paths and replay commands are a user's after the test (bazel-bin/...,
# with OCL_ICD_VENDORS), and it says where the outputs zip is.
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
  env TEST_UNDECLARED_OUTPUTS_DIR="$T/$case" "${env[@]}" bash "$runner" "${tools[@]}" "$victim" \
    "${FLAGS[@]}" -- "$@" > "$T/$case.log" 2>&1
}
FLAGS=(profile=--profile nvidia points=--points all)
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
# The user's paths: bazel-bin/ for what Bazel built, the outputs zip, a replay's --out of its own
# and the mock device it needs.
out="$T/paths/testlogs/pkg/victim_test/test.outputs"
run paths TEST_UNDECLARED_OUTPUTS_DIR="$out" -- leaks
bin="$(realpath "$2")"
bin="${bin%/tools/layer/libclpool_layer.so}"
grep -qF "$T/" "$T/paths.log" && fail "paths: a path of the test's own run: $(grep -F "$T/" "$T/paths.log" | head -1)"
grep -qF "$bin/" "$T/paths.log" && fail "paths: a path under Bazel's bin folder"
grep -q "^      replay: OCL_ICD_VENDORS=bazel-bin/mockcl/libmockcl.so OCL_ICD_PLATFORM_SORT=none bazel-bin/tools/record/clpool sweep --profile nvidia --layer bazel-bin/tools/layer/libclpool_layer.so --out clpool-replay-alloc-2 --force --only alloc:2 -- bazel-bin/tools/record/testing/sweep_victim leaks$" "$T/paths.log" \
  || { fail "paths: the replay command"; grep replay: "$T/paths.log" | head -2; }
grep -q "^clpool_oom_sweep_test: the report sweep.json, the page sweep.html and each run's trace and output (sweep/runs/) are in bazel-testlogs/pkg/victim_test/test.outputs/outputs.zip$" "$T/paths.log" \
  || fail "paths: where the outputs are"
grep -q "<code>OCL_ICD_VENDORS=bazel-bin/mockcl/libmockcl.so OCL_ICD_PLATFORM_SORT=none bazel-bin/tools/record/clpool sweep " "$out/sweep.html" \
  || fail "paths: the page's replay commands"
# --test_filter: one point, the rule's --points left out; in another shard, nothing.
run filter TESTBRIDGE_TEST_ONLY=alloc:2 -- leaks
[[ $? == 1 ]] && grep -q "^runs: 1 of 1 " "$T/filter.log" && grep -q "alloc:2 (2 MiB buffer): exit 1 holding" "$T/filter.log" \
  || { fail "--test_filter=alloc:2"; cat "$T/filter.log"; }
grep -q -- "--out clpool-sweep --force --only alloc:2 --" "$T/filter.log" || fail "--test_filter: the replay's --out"
run filter_shard TESTBRIDGE_TEST_ONLY=alloc:2 TEST_TOTAL_SHARDS=2 TEST_SHARD_INDEX=1 -- leaks
[[ $? == 0 ]] && grep -q "^runs: 0 of 0 " "$T/filter_shard.log" || fail "--test_filter in another shard"
run filter_bad TESTBRIDGE_TEST_ONLY=alloc -- leaks
[[ $? == 2 ]] && grep -q "^clpool_oom_sweep_test: FAIL: --test_filter: 'alloc' is not a point" "$T/filter_bad.log" \
  || { fail "a bad --test_filter"; cat "$T/filter_bad.log"; }
# A value clpool sweep refuses: the attribute's name, before any run.
FLAGS=(profile=--profile "nvidia exact" points=--points allocs)  # the rule's flags, as it passes them
run bad_profile -- handles
[[ $? == 2 ]] && grep -q "^clpool_oom_sweep_test: FAIL: profile: profile 'nvidia exact': no such" "$T/bad_profile.log" \
  || { fail "profile = \"nvidia exact\""; cat "$T/bad_profile.log"; }
FLAGS=(profile=--profile nvidia points=--points allocs)
run bad_points -- handles
grep -q "^clpool_oom_sweep_test: FAIL: points: 'allocs' is not alloc, first-use or all$" "$T/bad_points.log" || fail "points = \"allocs\""
FLAGS=(profile=--profile nvidia timeout_seconds=--timeout -1)
run bad_timeout -- handles
grep -q "^clpool_oom_sweep_test: FAIL: timeout_seconds: '-1' is not a number of seconds above 0$" "$T/bad_timeout.log" || fail "timeout_seconds = -1"
[[ -e "$T/bad_points/sweep" ]] && fail "a refused value ran the program"
bash "$runner" "${tools[@]}" > "$T/usage.log" 2>&1
[[ $? == 2 ]] && grep -q "oom_sweep_test.sh: usage" "$T/usage.log" || fail "usage"
finish
