#!/bin/bash
# memory_test.sh, the script every clpool_memory_test runs, on examples/ci/cc's tile_cache: it
# passes within capacity and limit, fails naming TileCache::put on an out-of-memory and above the
# limit, and refuses a bad command line. (memory_test_test.sh checks the rule itself from a
# workspace of its own.)
#   memory_test_runner_test.sh MEMORY_TEST_SH CLPOOL LAYER_SO CLPOOL_REPLAY LIBMOCKCL_SO TILE_CACHE
set -uo pipefail
runner="$(realpath "$1")"
tools=("$(realpath "$2")" "$(realpath "$3")" "$(realpath "$4")" "$(realpath "$5")")
tile_cache="$(realpath "$6")"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail=0
run() {  # run CASE CAPACITY LIMIT ARGS...
  local case="$1" capacity="$2" limit="$3"
  shift 3
  TEST_UNDECLARED_OUTPUTS_DIR="$tmp/$case" bash "$runner" "${tools[@]}" "$capacity" nvidia "$limit" \
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
expect "fits" $? 0 "$tmp/fits.log" "^clpool_memory_test: PASS: tile_cache fits a mockcl device of 256MiB, nvidia profile and its limit of 134217728$"
run oom 268435456 - --tiles 24
expect "out of memory" $? 1 "$tmp/oom.log" \
  "^clpool_memory_test: FAIL: tile_cache ran out of device memory on a mockcl device of 268435456, nvidia profile; clpool's report:$" \
  "^  the layer: first use of id [0-9]+ \(16777216 bytes\) by clEnqueueMigrateMemObjects" \
  "^  1\. TileCache::put\(" "^clpool_memory_test: FAIL: tile_cache exited with status 3$"
[[ -s "$tmp/oom/out_of_memory.html" && -s "$tmp/oom/device.trace" ]] && echo "ok: out of memory: page and trace" || { echo "FAIL: no page"; fail=1; }
run limit 268435456 128MiB --tiles 10
expect "over the limit" $? 1 "$tmp/limit.log" \
  "^clpool_memory_test: FAIL: tile_cache's peak device memory is above its limit of 128MiB" \
  "^  1\. TileCache::put\("
grep -q "exited with status" "$tmp/limit.log" && { echo "FAIL: the program itself succeeded"; fail=1; }
run bad_program 268435456 - --bogus
expect "the program's own failure" $? 1 "$tmp/bad_program.log" "^clpool_memory_test: FAIL: tile_cache exited with status 2 \(it made no device allocation\)"
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
for c in decimal headroom bad_limit; do
  grep -q "clpool_memory_test: tile_cache" "$tmp/$c.log" && { echo "FAIL: $c ran the program"; fail=1; }
done
exit $fail
