#!/bin/bash
# memory_test.sh, the script every clpool_memory_test runs, on examples/ci/cc's tile_cache: it
# passes within capacity and limit, giving its peak; fails naming TileCache::put on an
# out-of-memory and above the limit, giving the whole run's peak and the excess; says where Bazel
# leaves its outputs (runs_per_test, shards, bazel run); and refuses a bad command line, a limit
# above the capacity, before the program runs. (memory_test_test.sh checks the rule itself from a
# workspace of its own.)
#   memory_test_runner_test.sh MEMORY_TEST_SH CLPOOL LAYER_SO CLPOOL_REPLAY LIBMOCKCL_SO TILE_CACHE
set -uo pipefail
runner="$(realpath "$1")"
tools=("$(realpath "$2")" "$(realpath "$3")" "$(realpath "$4")" "$(realpath "$5")")
tile_cache="$(realpath "$6")"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail=0
run() {  # [OUTPUTS=DIR] run CASE CAPACITY LIMIT ARGS...
  local case="$1" capacity="$2" limit="$3"
  shift 3
  TEST_UNDECLARED_OUTPUTS_DIR="${OUTPUTS:-$tmp/$case}" bash "$runner" "${tools[@]}" "$capacity" "${PROFILE:-nvidia}" "$limit" \
    "$tile_cache" -- "$@" > "$tmp/$case.log" 2>&1
}
expect() {  # expect NAME RC WANT_RC LOG REGEX...
  local name="$1" rc="$2" want="$3" log="$4"
  shift 4
  local good=1
  [[ "$rc" -eq "$want" ]] || good=0
  for re in "$@"; do grep -qE -- "$re" "$log" || { echo "  missing: $re"; good=0; }; done
  if [[ $good -eq 1 ]]; then echo "ok: $name"; else echo "FAIL: $name (exit $rc)"; cat "$log"; fail=1; fi
}
run fits 256MiB 134217728 --tiles 24 --cache-limit 4
expect "fits" $? 0 "$tmp/fits.log" "^clpool_memory_test: PASS: tile_cache fits a mockcl device of 256MiB, nvidia profile: peak device memory 96 MiB \(100663296 bytes\), not above its limit of 134217728$"
# A size as the pytest plugin's markers write it: clpool's one grammar takes a blank before the unit.
run spaced "256 MiB" "128 MiB" --tiles 24 --cache-limit 4
expect "a size with a blank" $? 0 "$tmp/spaced.log" \
  "^clpool_memory_test: tile_cache --tiles 24 --cache-limit 4 on a mockcl device of 256 MiB, nvidia profile$" \
  "^clpool_memory_test: PASS: tile_cache fits a mockcl device of 256 MiB, nvidia profile: peak device memory 96 MiB \(100663296 bytes\), not above its limit of 128 MiB$"
run oom 268435456 - --tiles 24
expect "out of memory" $? 1 "$tmp/oom.log" \
  "^clpool_memory_test: FAIL: tile_cache ran out of device memory on a mockcl device of 268435456, nvidia profile; clpool's report:$" \
  "^  the layer: first use of id [0-9]+ \(16777216 bytes\) by clEnqueueMigrateMemObjects" \
  "^  1\. TileCache::put\(" "^clpool_memory_test: FAIL: tile_cache exited with status 3$"
[[ -s "$tmp/oom/out_of_memory.html" && -s "$tmp/oom/device.trace" ]] && echo "ok: out of memory: page and trace" || { echo "FAIL: no page"; fail=1; }
# A program that aborts on the failure (no exit handler runs; its trace ends in the zeros of the
# layer's file): the same report, its sites named and the layer's line read.
run abort 268435456 - --tiles 24 --abort-on-error
expect "out of memory, then abort()" $? 1 "$tmp/abort.log" \
  "^  the layer: first use of id [0-9]+ \(16777216 bytes\) by clEnqueueMigrateMemObjects" \
  "^  1\. TileCache::put\(" "^clpool_memory_test: FAIL: tile_cache exited with status 134$"
grep -q "binary file matches\|not defined)" "$tmp/abort.log" && { echo "FAIL: abort: the trace was not read as text or its frames are not named"; fail=1; }
# A request refused for its size is no out-of-memory: on a 12 MiB card whose profile enforces the
# maximum allocation (pocl; mockcl's is the card's size below 128 MiB), the 16 MiB tile is
# CL_INVALID_BUFFER_SIZE, which tile_cache takes for an error: it fails for its exit status alone.
PROFILE=pocl run size 12MiB - --tiles 1
expect "a size refusal" $? 1 "$tmp/size.log" \
  "^clpool_memory_test: note: the device refused 1 request\(s\) for their size " \
  "^clpool_memory_test: FAIL: tile_cache exited with status 3$"
grep -q "ran out of device memory" "$tmp/size.log" && { echo "FAIL: a size refusal called an out-of-memory"; fail=1; }
# Above the limit: the whole run's peak (11 tiles of 16 MiB), not a replay cut off at the limit.
OUTPUTS="$tmp/limit/testlogs/pkg/over_test/run_2_of_3/test.outputs" run limit 268435456 128MiB --tiles 10
expect "over the limit" $? 1 "$tmp/limit.log" \
  "^clpool_memory_test: FAIL: tile_cache's peak device memory, 176 MiB \(184549376 bytes\), is above its limit of 128MiB \(134217728 bytes\) by 50331648 bytes; " \
  "^  peak active +176 MiB \(184549376 bytes\)$" "^sites holding the most device memory at the peak" \
  "^  1\. TileCache::put\(" \
  "^clpool_memory_test: the trace device.trace, the report peak.txt and the page peak.html are in bazel-testlogs/pkg/over_test/run_2_of_3/test.outputs/outputs.zip$"
grep -q "exited with status" "$tmp/limit.log" && { echo "FAIL: the program itself succeeded"; fail=1; }
grep -qE "^  peak active +128 MiB" "$tmp/limit.log" && { echo "FAIL: a replay cut off at the limit"; fail=1; }
ls "$tmp/limit/testlogs/pkg/over_test/run_2_of_3/test.outputs" > "$tmp/limit.files"
[[ "$(tr '\n' ' ' < "$tmp/limit.files")" == "device.trace peak.err peak.html peak.txt " ]] \
  && echo "ok: over the limit: one report" || { echo "FAIL: outputs $(cat "$tmp/limit.files")"; fail=1; }
# Where the outputs are: a shard's folder; under bazel run the files themselves.
OUTPUTS="$tmp/shard/testlogs/over_test/shard_2_of_4/test.outputs" run shard 268435456 128MiB --tiles 10
expect "a shard's outputs" $? 1 "$tmp/shard.log" "are in bazel-testlogs/over_test/shard_2_of_4/test.outputs/outputs.zip$"
BUILD_WORKSPACE_DIRECTORY=/ws OUTPUTS="$tmp/ran/testlogs/over_test/test.outputs" run ran 268435456 128MiB --tiles 10
expect "bazel run's outputs" $? 1 "$tmp/ran.log" "are in bazel-testlogs/over_test/test.outputs$"
# Sharded anyway (--test_sharding_strategy=forced=2): the test runs whole in the first shard.
TEST_TOTAL_SHARDS=2 TEST_SHARD_INDEX=1 run forced 268435456 128MiB --tiles 10
expect "a second shard" $? 0 "$tmp/forced.log" "^clpool_memory_test: shard 2/2: nothing to run; the test is one run of tile_cache, in shard 1$"
run bad_program 268435456 - --bogus "it's" ""
expect "the program's own failure" $? 1 "$tmp/bad_program.log" \
  "^clpool_memory_test: tile_cache --bogus 'it'[\\]''s' '' on a mockcl device" \
  "^clpool_memory_test: FAIL: tile_cache exited with status 2 \(it made no device allocation\)"
run no_args 268435456 -
grep -q "^clpool_memory_test: tile_cache on a mockcl device" "$tmp/no_args.log" && echo "ok: no arguments, one blank" \
  || { echo "FAIL: the header without arguments"; cat "$tmp/no_args.log"; fail=1; }
bash "$runner" "${tools[@]}" 268435456 nvidia - > "$tmp/usage.log" 2>&1
expect "usage" $? 2 "$tmp/usage.log" "^memory_test.sh: usage: "
# Settings clpool refuses, in clpool's words (the rule keeps no copy of them), before anything runs.
run decimal 2GB - --tiles 1
expect "a decimal capacity" $? 2 "$tmp/decimal.log" \
  "^clpool_memory_test: FAIL: capacity: '2GB' is ambiguous: decimal units are not accepted; write 2GiB$"
run headroom 2MiB - --tiles 1
expect "a capacity within the headroom" $? 2 "$tmp/headroom.log" \
  "^clpool_memory_test: FAIL: capacity 2 MiB is not more than the headroom of profile 'nvidia', 2688 KiB"
run bad_limit 256MiB lots --tiles 1
expect "a limit that is not a size" $? 2 "$tmp/bad_limit.log" "^clpool_memory_test: FAIL: limit: 'lots' is not"
run limit_over_capacity 64MiB 1GiB --tiles 1
expect "a limit above the capacity" $? 2 "$tmp/limit_over_capacity.log" \
  "^clpool_memory_test: FAIL: limit 1GiB \(1073741824 bytes\) is above capacity 64MiB \(67108864 bytes\): "
for c in decimal headroom bad_limit limit_over_capacity; do
  grep -q "clpool_memory_test: tile_cache" "$tmp/$c.log" && { echo "FAIL: $c ran the program"; fail=1; }
done
exit $fail
