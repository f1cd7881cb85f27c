#!/usr/bin/env bash
# clpool_memory_test (tools/build_defs/memory_test.bzl) used from a workspace of its own, as a user
# has it: examples/ci/cc/ (tile_cache and its three tests) with its loads pointed at @clpool.
# tile_cache_memory_test must pass; tile_cache_oom_test and tile_cache_over_limit_test must fail,
# naming TileCache::put and leaving the trace and the page in their outputs; a user's C program
# (mesh) builds without C++ flags, gets its arguments verbatim, passes when it allocates nothing
# and has its static function explained; test logs hold no sandbox lines; a target with a bad
# size must fail with clpool's message naming the attribute, and one with a value of the wrong
# type, a library as its binary, or shard_count, at loading or analysis naming it; a size with a
# blank ("64 MiB") and a profile with one reach clpool whole; a limit failure states the whole
# run's peak; the logs say where runs_per_test's and shards' outputs are, and the sweep's replay
# commands run after the test; --test_filter runs one point of a sweep; `bazel coverage` runs.
# Run by tools/test.sh (Bazel cannot run inside a Bazel test). Exit status 0 when every check held.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
work="$(mktemp -d "${TMPDIR:-/tmp}/clpool-memory-test.XXXXXX")"
ws="$work/ws"
mkdir -p "$ws/bad"
sed "s|/path/to/clpool|$repo|" tools/install/bazel_consumer/WORKSPACE.example > "$ws/WORKSPACE"
sed 's|"//tools/build_defs:|"@clpool//tools/build_defs:|' examples/ci/cc/BUILD > "$ws/BUILD"
cp examples/ci/cc/tile_cache.cc "$ws/"
# The README's .bazelrc: Debian's linux-sandbox writes its debug lines into every test log.
printf 'build --spawn_strategy=processwrapper-sandbox\n' > "$ws/.bazelrc"
# A user's C program, linked without -rdynamic, allocating in a static function: it prints its
# arguments, then makes N buffers of 1 MiB (N its first argument; 0: a context, no buffer).
mkdir -p "$ws/mesh"
cat > "$ws/mesh/mesh.c" <<'C'
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static cl_mem vertex_buffer(cl_context ctx, cl_command_queue q) {
  cl_int err;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 20, NULL, &err);
  if (m != NULL) clEnqueueMigrateMemObjects(q, 1, &m, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, NULL, NULL);
  return m;
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) printf("mesh: argument [%s]\n", argv[i]);
  const int n = argc > 1 ? atoi(argv[1]) : 0;
  cl_platform_id p;
  cl_device_id d;
  if (clGetPlatformIDs(1, &p, NULL) != CL_SUCCESS || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS) return 3;
  cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, NULL);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, d, NULL, NULL);
  cl_mem held[64];
  for (int i = 0; i < n && i < 64; ++i) held[i] = vertex_buffer(ctx, q);
  clFinish(q);
  for (int i = 0; i < n && i < 64; ++i) clReleaseMemObject(held[i]);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return 0;
}
C
cat > "$ws/mesh/BUILD" <<'MESH'
load("@clpool//tools/build_defs:cc.bzl", "cc_binary")
load("@clpool//tools/build_defs:memory_test.bzl", "clpool_memory_test")

cc_binary(
    name = "mesh",
    srcs = ["mesh.c"],
    copts = ["-DCL_TARGET_OPENCL_VERSION=300"],
    visibility = ["//visibility:public"],
    deps = ["@system_libs//:opencl"],
)

clpool_memory_test(
    name = "no_allocation_test",
    binary = ":mesh",
    capacity = "64MiB",
    args = ["0", "two words", "it's", "$HOME", "$(location :mesh)"],
)

clpool_memory_test(
    name = "over_limit_test",
    binary = ":mesh",
    capacity = "64MiB",
    limit = "2MiB",
    args = ["3"],
    tags = ["manual"],
)

# Sizes as the pytest plugin's markers write them.
clpool_memory_test(
    name = "spaced_sizes_test",
    binary = ":mesh",
    capacity = "64 MiB",
    limit = "3 MiB",
    args = ["3"],
)

clpool_memory_test(
    name = "spaced_profile_test",
    binary = ":mesh",
    capacity = "64MiB",
    profile = "nvidia --frames",
    tags = ["manual"],
)

sh_test(
    name = "trivial_test",
    srcs = ["trivial_test.sh"],
)
MESH
printf '#!/bin/sh\necho trivial\n' > "$ws/mesh/trivial_test.sh"
chmod +x "$ws/mesh/trivial_test.sh"
# Values the rules refuse at loading or analysis, naming the target and the attribute: one package
# each (a failing macro stops its package).
mkdir -p "$ws/bad_profile" "$ws/bad_points" "$ws/bad_binary" "$ws/bad_shards"
printf '%s\n' 'load("@clpool//tools/build_defs:memory_test.bzl", "clpool_memory_test")' \
  'clpool_memory_test(name = "t", binary = "//mesh", capacity = "64MiB", profile = None)' > "$ws/bad_profile/BUILD"
printf '%s\n' 'load("@clpool//tools/build_defs:oom_sweep.bzl", "clpool_oom_sweep_test")' \
  'clpool_oom_sweep_test(name = "t", binary = "//mesh", points = None)' > "$ws/bad_points/BUILD"
printf '%s\n' 'load("@clpool//tools/build_defs:memory_test.bzl", "clpool_memory_test")' \
  'cc_library(name = "lib", hdrs = ["lib.h"])' \
  'clpool_memory_test(name = "t", binary = ":lib", capacity = "64MiB")' > "$ws/bad_binary/BUILD"
touch "$ws/bad_binary/lib.h"
printf '%s\n' 'load("@clpool//tools/build_defs:memory_test.bzl", "clpool_memory_test")' \
  'clpool_memory_test(name = "t", binary = "//mesh", capacity = "64MiB", shard_count = 2)' > "$ws/bad_shards/BUILD"
cat > "$ws/bad/BUILD" <<'BAD'
load("@clpool//tools/build_defs:memory_test.bzl", "clpool_memory_test")

clpool_memory_test(
    name = "decimal_capacity",
    binary = "//mesh",
    capacity = "2GB",
)
BAD
# The README's recipe: its one-line .bazelrc, no ~/.bazelrc. On the command line, what a user's
# recipe need not have: a disk cache of its own so that a second run does not rebuild clpool's
# tools, whatever PATH the shell has (--incompatible_strict_action_env: the shell's PATH is
# otherwise part of every action's cache key, as clpool's own .bazelrc says).
user_bazel() { env -u CC -u CXX bazel --nohome_rc --output_base="$work/bazel_out" "$@"; }
trap 'user_bazel shutdown >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
flags=(--disk_cache="${HOME}/.cache/clpool-memory-test-disk" --incompatible_strict_action_env --jobs=2
       --test_output=errors)
# shellcheck source=tools/dev/testing/test_lib.sh
source "$repo/tools/dev/testing/test_lib.sh"  # fail, finish
ok() { echo "memory_test_test: ok: $1"; }
bad() { fail "memory_test_test: $1"; }
cd "$ws"

user_bazel test "${flags[@]}" //:tile_cache_memory_test > "$work/pass.log" 2>&1 \
  && ok "tile_cache_memory_test passes" || { tail -40 "$work/pass.log" >&2; bad "tile_cache_memory_test"; }
testlogs="$(user_bazel info bazel-testlogs 2>/dev/null)"

for t in tile_cache_oom_test:"ran out of device memory on a mockcl device of 256MiB, nvidia profile":out_of_memory \
         tile_cache_over_limit_test:"peak device memory, 176 MiB (184549376 bytes), is above its limit of 128MiB (134217728 bytes) by 50331648 bytes":peak; do
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

# A user's C program: built without C++ flags (no warning), its arguments verbatim, a test with no
# device allocation passing with a note, a static function's site explained, a log with nothing
# but the test's own lines.
user_bazel test "${flags[@]}" //mesh:no_allocation_test > "$work/mesh.log" 2>&1 \
  && ok "mesh's no_allocation_test passes" || { tail -40 "$work/mesh.log" >&2; bad "mesh's no_allocation_test"; }
grep -q "valid for C++/ObjC++ but not for C" "$work/mesh.log" && bad "mesh.c was compiled with a C++ flag" \
  || ok "mesh.c compiled without C++ flags"
log="$testlogs/mesh/no_allocation_test/test.log"
for want in "mesh: argument [two words]" "mesh: argument [it's]" 'mesh: argument [$HOME]' \
            'mesh: argument [$(location :mesh)]' \
            "clpool_memory_test: PASS: mesh made no device allocation through the OpenCL ICD loader"; do
  grep -qF -- "$want" "$log" && ok "no_allocation_test: $want" || { cat "$log" >&2; bad "no_allocation_test lacks: $want"; }
done
grep -qE "linux-sandbox|src/main/tools/" "$log" && bad "sandbox lines in the test log" || ok "a clean test log"
if user_bazel test "${flags[@]}" //mesh:over_limit_test > "$work/mesh_limit.log" 2>&1; then
  bad "mesh's over_limit_test passed"
else
  log="$testlogs/mesh/over_limit_test/test.log"
  grep -qE '^  1\. 0x[0-9a-f]+ \(.*/mesh\)$' "$log" && ok "over_limit_test names the static function by its offset" \
    || { cat "$log" >&2; bad "over_limit_test's site"; }
  grep -qF "(a site named 0x... is a call made in a native function without a symbol" "$log" \
    && ok "over_limit_test says why" || bad "over_limit_test: no note on the unnamed site"
  grep -qF "are in bazel-testlogs/mesh/over_limit_test/test.outputs/outputs.zip" "$log" \
    && ok "over_limit_test says where its outputs are" || bad "over_limit_test: outputs' place"
  grep -qF "clpool_memory_test: FAIL: mesh's peak device memory, 3 MiB (3145728 bytes), is above its limit of 2MiB (2097152 bytes) by 1048576 bytes" "$log" \
    && ok "over_limit_test states the peak and the excess" || bad "over_limit_test: the peak"
fi
# With --runs_per_test each run's outputs are in a folder of its own.
user_bazel test "${flags[@]}" --runs_per_test=2 //mesh:over_limit_test > "$work/runs.log" 2>&1
grep -qF "are in bazel-testlogs/mesh/over_limit_test/run_2_of_2/test.outputs/outputs.zip" \
  "$testlogs/mesh/over_limit_test/run_2_of_2/test.log" && [[ -f "$testlogs/mesh/over_limit_test/run_2_of_2/test.outputs/outputs.zip" ]] \
  && ok "runs_per_test: each run's outputs named" || bad "runs_per_test: outputs' place"

# Values with blanks reach clpool whole: a size it reads, a profile it refuses in its own words.
user_bazel test "${flags[@]}" //mesh:spaced_sizes_test > "$work/spaced.log" 2>&1 \
  && grep -qF "PASS: mesh fits a mockcl device of 64 MiB, nvidia profile: peak device memory 3 MiB (3145728 bytes), not above its limit of 3 MiB" \
    "$testlogs/mesh/spaced_sizes_test/test.log" \
  && ok "capacity = \"64 MiB\", limit = \"3 MiB\"" || { tail -20 "$work/spaced.log" >&2; bad "sizes with a blank"; }
user_bazel test "${flags[@]}" //mesh:spaced_profile_test > "$work/spaced_profile.log" 2>&1
grep -qF "clpool_memory_test: FAIL: profile 'nvidia --frames': no such built-in profile" "$testlogs/mesh/spaced_profile_test/test.log" \
  && ok "profile = \"nvidia --frames\" refused in clpool's words" || bad "a profile with a blank"

# Wrong types, a library, shard_count: refused naming the attribute.
for t in "bad_profile:clpool_memory_test(name = \"t\"): profile = None: give a string such as \"nvidia\" (a profile)" \
         "bad_points:clpool_oom_sweep_test(name = \"t\"): points = None: give a string such as \"all\"" \
         "bad_binary:clpool_memory_test(name = \"t\"): binary = \"//bad_binary:lib\" has no program to run" \
         "bad_shards:clpool_memory_test(name = \"t\"): shard_count = 2: a memory test is one run"; do
  package="${t%%:*}"
  user_bazel build "${flags[@]}" "//$package:t" > "$work/$package.log" 2>&1 && bad "//$package:t built"
  grep -qF -- "${t#*:}" "$work/$package.log" && ok "//$package:t refused: ${t#*:}" \
    || { grep -E "ERROR|Error" "$work/$package.log" | head -5 >&2; bad "//$package:t's message"; }
done

# bazel coverage runs (the offline stand-in of Bazel's lcov merger) and writes coverage.dat.
user_bazel coverage "${flags[@]}" //mesh:trivial_test > "$work/coverage.log" 2>&1 \
  && [[ -f "$testlogs/mesh/trivial_test/coverage.dat" ]] \
  && grep -qF "coverage merging is not available offline" "$testlogs/mesh/trivial_test/test.log" \
  && ok "bazel coverage runs" || { tail -20 "$work/coverage.log" >&2; bad "bazel coverage"; }

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
  log="$testlogs/tile_cache_oom_sweep_test/shard_1_of_3/test.log"
  grep -qF "are in bazel-testlogs/tile_cache_oom_sweep_test/shard_1_of_3/test.outputs/outputs.zip" "$log" \
    && ok "the sweep's shard says where its outputs are" || bad "the sweep's outputs' place"
  grep -q "/sandbox/" "$testlogs"/tile_cache_oom_sweep_test/shard_*/test.log && bad "a sandbox path in the sweep's logs" \
    || ok "no sandbox path in the sweep's logs"
  replay="$(grep -m1 '^      replay: ' "$log" | sed 's/^      replay: //')"
  [[ "$replay" == "OCL_ICD_VENDORS=bazel-bin/external/clpool/mockcl/libmockcl.so OCL_ICD_PLATFORM_SORT=none bazel-bin/external/clpool/tools/record/clpool sweep "* ]] \
    && (eval "$replay" > "$work/replayed.log" 2>&1; [[ $? == 1 ]]) && grep -q "^runs: 1 of 1 " "$work/replayed.log" \
    && ok "the sweep's replay command runs from the workspace after the test" \
    || { echo "$replay" >&2; cat "$work/replayed.log" >&2; bad "the sweep's replay command"; }
  rm -rf "$ws"/clpool-replay-*
fi
# --test_filter: one point of the sweep, in the shard that has it.
user_bazel test "${flags[@]}" --test_filter=alloc:2 //:tile_cache_oom_sweep_test > "$work/filter.log" 2>&1
grep -q "^runs: 1 of 1 " "$testlogs/tile_cache_oom_sweep_test/shard_1_of_3/test.log" \
  && grep -q "^runs: 0 of 0 " "$testlogs/tile_cache_oom_sweep_test/shard_2_of_3/test.log" \
  && ok "--test_filter=alloc:2 runs one point" || { tail -20 "$work/filter.log" >&2; bad "--test_filter"; }

# clpool's own check, not a copy in the rule: the test fails before the program runs.
if user_bazel test "${flags[@]}" //bad:decimal_capacity > "$work/bad.log" 2>&1; then
  bad "a capacity of 2GB was accepted"
else
  grep -qF "clpool_memory_test: FAIL: capacity: '2GB' is ambiguous: decimal units are not accepted; write 2GiB" \
    "$testlogs/bad/decimal_capacity/test.log" \
    && ok "capacity = \"2GB\" is refused in clpool's words" || { cat "$work/bad.log" >&2; bad "the 2GB message"; }
fi
finish
