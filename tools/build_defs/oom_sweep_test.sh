#!/bin/bash
# The test clpool_oom_sweep_test (oom_sweep.bzl) generates: clpool sweep on a program, this
# shard's points when Bazel shards the test, the point --test_filter names if any, the reports
# where Bazel keeps a test's outputs.
#   oom_sweep_test.sh CLPOOL LAYER_SO LIBMOCKCL_SO|- BINARY [SWEEP FLAGS...] -- [ARGS...]
# A flag written ATTRIBUTE=--FLAG (profile=--profile nvidia) came from the rule's attribute: clpool
# sweep's refusal of its value names the attribute.
set -uo pipefail
if [[ $# -lt 4 ]]; then
  echo "oom_sweep_test.sh: usage: CLPOOL LAYER_SO LIBMOCKCL_SO|- BINARY [SWEEP FLAGS...] -- [ARGS...]" >&2
  exit 2
fi
clpool="$(realpath "$1")"
layer="$(realpath "$2")"
mockcl="$3"
binary="$(realpath "$4")"
shift 4
flags=()
names=(-e '')  # sed expressions: a flag's name in clpool sweep's messages -> the attribute's
while [[ $# -gt 0 && "$1" != "--" ]]; do
  if [[ "$1" == *=--* ]]; then
    names+=(-e "s/^clpool sweep: error: ${1#*=}\\b/clpool_oom_sweep_test: FAIL: ${1%%=*}/")
    flags+=("${1#*=}")
  else
    flags+=("$1")
  fi
  shift
done
[[ "${1:-}" == "--" ]] && shift
out="${TEST_UNDECLARED_OUTPUTS_DIR:-${TEST_TMPDIR:-$(mktemp -d)}}"
mkdir -p "$out"

# Bazel's test filter (--test_filter=alloc:3) names the one point to run, as --only does; it
# takes no --points (a point is of one kind).
if [[ -n "${TESTBRIDGE_TEST_ONLY:-}" ]]; then
  kept=()
  for ((i = 0; i < ${#flags[@]}; i++)); do
    if [[ "${flags[$i]}" == --points ]]; then ((i++)); else kept+=("${flags[$i]}"); fi
  done
  flags=("${kept[@]}" --only "$TESTBRIDGE_TEST_ONLY")
  names+=(-e "s/^clpool sweep: error: --only\\b/clpool_oom_sweep_test: FAIL: --test_filter/")
fi
# A value clpool sweep refuses fails the test before the program runs, in the attribute's name:
# clpool sweep reads every flag before --help.
if ! said="$("$clpool" sweep "${flags[@]}" --help -- true 2>&1 >/dev/null)"; then
  sed "${names[@]}" <<< "$said"
  exit 2
fi

# The paths a user has after the test, from the workspace's root: bazel-bin/... for what Bazel
# built (the layer is one of its outputs: its path's head is Bazel's bin folder), the runs' folders
# relative to the outputs, the outputs zip in bazel-testlogs (memory_test.sh says why), and a
# replay's --out a new folder of the workspace's root, clpool-replay-POINT (clpool sweep makes one
# folder, not its parents). The run itself keeps the real ones.
shown="$out"
if [[ -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" && "$out" == */testlogs/*/test.outputs ]]; then
  shown="bazel-testlogs/${out##*/testlogs/}/outputs.zip"
  # bazel run: the files stay beside the zip, in the workspace's bazel-testlogs.
  [[ -n "${BUILD_WORKSPACE_DIRECTORY:-}" ]] && shown="bazel-testlogs/${out##*/testlogs/}"
fi
bin=""
if [[ "$layer" == */bin/external/*/tools/layer/libclpool_layer.so ]]; then
  bin="${layer%/external/*/tools/layer/libclpool_layer.so}"
elif [[ "$layer" == */bin/tools/layer/libclpool_layer.so ]]; then
  bin="${layer%/tools/layer/libclpool_layer.so}"
fi
user_path() {  # user_path PATH: PATH as a user reaches it after the test
  if [[ -n "$bin" && "$1" == "$bin/"* ]]; then echo "bazel-bin/${1#"$bin/"}"; else echo "$1"; fi
}
replay="$(user_path "$clpool") sweep"
if [[ "$mockcl" != "-" ]]; then
  export OCL_ICD_VENDORS="$(realpath "$mockcl")" OCL_ICD_PLATFORM_SORT=none
  replay="OCL_ICD_VENDORS=$(user_path "$OCL_ICD_VENDORS") OCL_ICD_PLATFORM_SORT=none $replay"
fi
user_paths() {  # each line of standard input with the user's paths
  local line
  while IFS= read -r line; do
    line="${line//"$out/sweep/replay-"/clpool-replay-}"
    line="${line//"--out $out/sweep "/--out clpool-sweep }"
    line="${line//"$out/"/}"
    [[ -n "$bin" ]] && line="${line//"$bin/"/bazel-bin/}"
    line="${line/#"      replay: clpool sweep"/"      replay: $replay"}"
    line="${line//"<code>clpool sweep "/"<code>$replay "}"
    printf '%s\n' "$line"
  done
}

# Bazel's test sharding: this shard's points, and the file that says the test knows sharding.
shard=()
if [[ -n "${TEST_TOTAL_SHARDS:-}" && "${TEST_TOTAL_SHARDS}" -gt 1 ]]; then
  shard=(--shard "$((TEST_SHARD_INDEX + 1))/$TEST_TOTAL_SHARDS")
fi
[[ -n "${TEST_SHARD_STATUS_FILE:-}" ]] && touch "$TEST_SHARD_STATUS_FILE"
"$clpool" sweep --layer "$layer" --out "$out/sweep" --force --json "$out/sweep.json" \
  --html "$out/sweep.html" "${shard[@]}" "${flags[@]}" -- "$binary" "$@" 2>&1 | user_paths | sed "${names[@]}"
status=${PIPESTATUS[0]}
if [[ -s "$out/sweep.html" ]]; then
  user_paths < "$out/sweep.html" > "$out/sweep.html.user" && mv "$out/sweep.html.user" "$out/sweep.html"
fi
if [[ -s "$out/sweep.json" ]]; then
  echo "clpool_oom_sweep_test: the report sweep.json, the page sweep.html and each run's trace and output (sweep/runs/) are in $shown"
fi
exit $status
