#!/usr/bin/env bash
# clpool_memory_test (tools/build_defs/memory_test.bzl) used from a workspace of its own, as a user
# has it: examples/ci/cc/ (tile_cache and its three tests) with its loads pointed at @clpool.
# tile_cache_memory_test must pass; tile_cache_oom_test and tile_cache_over_limit_test must fail,
# naming TileCache::put and leaving the trace and the page in their outputs; a target with a bad
# size must fail at loading with a message naming it. Run by tools/test.sh (Bazel cannot run
# inside a Bazel test). Exit status 0 when every check held.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
work="$(mktemp -d "${TMPDIR:-/tmp}/clpool-memory-test.XXXXXX")"
ws="$work/ws"
mkdir -p "$ws/bad"
sed "s|/path/to/clpool|$repo|" tools/install/bazel_consumer/WORKSPACE.example > "$ws/WORKSPACE"
sed 's|"//tools/build_defs:|"@clpool//tools/build_defs:|' examples/ci/cc/BUILD > "$ws/BUILD"
cp examples/ci/cc/tile_cache.cc "$ws/"
cat > "$ws/bad/BUILD" <<'BAD'
load("@clpool//tools/build_defs:memory_test.bzl", "clpool_memory_test")

clpool_memory_test(
    name = "decimal_capacity",
    binary = "//:tile_cache",
    capacity = "2GB",
)
BAD
# No .bazelrc (nor ~/.bazelrc), as the README's recipe; a disk cache of its own so that a second
# run does not rebuild clpool's tools.
user_bazel() { env -u CC -u CXX bazel --nohome_rc --output_base="$work/bazel_out" "$@"; }
trap 'user_bazel shutdown >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
flags=(--disk_cache="${HOME}/.cache/clpool-memory-test-disk" --jobs=2 --test_output=errors)
fail=0
ok() { echo "memory_test_test: ok: $1"; }
bad() { echo "memory_test_test: FAILED: $1" >&2; fail=1; }
cd "$ws"

user_bazel test "${flags[@]}" //:tile_cache_memory_test > "$work/pass.log" 2>&1 \
  && ok "tile_cache_memory_test passes" || { tail -40 "$work/pass.log" >&2; bad "tile_cache_memory_test"; }
testlogs="$(user_bazel info bazel-testlogs 2>/dev/null)"

for t in tile_cache_oom_test:"ran out of device memory on a mockcl device of 256MiB, nvidia profile":out_of_memory \
         tile_cache_over_limit_test:"peak device memory is above its limit of 128MiB":limit; do
  IFS=: read -r name message page <<< "$t"
  if user_bazel test "${flags[@]}" "//:$name" > "$work/$name.log" 2>&1; then
    bad "$name passed"
    continue
  fi
  log="$testlogs/$name/test.log"
  grep -qF "clpool_memory_test: FAIL: tile_cache's $message" "$log" || grep -qF "clpool_memory_test: FAIL: tile_cache $message" "$log" \
    && ok "$name fails: $message" || { tail -30 "$log" >&2; bad "$name's message"; }
  grep -qE '^  1\. TileCache::put\(' "$log" && ok "$name names TileCache::put" || bad "$name: no site"
  /usr/bin/python3 - "$testlogs/$name/test.outputs/outputs.zip" "$page" <<'PY' && ok "$name: trace and page in its outputs" || bad "$name: outputs"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = z.namelist()
assert "device.trace" in names and sys.argv[2] + ".html" in names, names
assert b"TileCache::put" in z.read(sys.argv[2] + ".html")
PY
done

# clpool_oom_sweep_test: Bazel runs its three shards; the test fails (tile_cache leaks on its error
# path), each shard ran its share, the shards together every point once.
if user_bazel test "${flags[@]}" //:tile_cache_oom_sweep_test > "$work/sweep.log" 2>&1; then
  bad "tile_cache_oom_sweep_test passed"
else
  /usr/bin/python3 - "$testlogs/tile_cache_oom_sweep_test" <<'PY' && ok "tile_cache_oom_sweep_test: 3 shards, every point once, leaks found" || { tail -30 "$work/sweep.log" >&2; bad "tile_cache_oom_sweep_test's shards"; }
import io, json, os, sys, zipfile
d = sys.argv[1]
points = []
for k in (1, 2, 3):
    shard = os.path.join(d, f"shard_{k}_of_3")
    log = open(os.path.join(shard, "test.log")).read()
    assert f"shard {k}/3" in log and "leaked:" in log, log[-2000:]
    z = zipfile.ZipFile(os.path.join(shard, "test.outputs", "outputs.zip"))
    points += [r["point"] for r in json.loads(z.read("sweep.json"))["runs"]]
assert len(points) == len(set(points)) == 24, points
PY
fi

# clpool's own check, not a copy in the rule: the test fails before the program runs.
if user_bazel test "${flags[@]}" //bad:decimal_capacity > "$work/bad.log" 2>&1; then
  bad "a capacity of 2GB was accepted"
else
  grep -qF "clpool_memory_test: FAIL: capacity: '2GB' is ambiguous: decimal units are not accepted; write 2GiB" \
    "$testlogs/bad/decimal_capacity/test.log" \
    && ok "capacity = \"2GB\" is refused in clpool's words" || { cat "$work/bad.log" >&2; bad "the 2GB message"; }
fi
[[ $fail -eq 0 ]] && echo "memory_test_test: all checks passed"
exit $fail
