#!/bin/bash
# The test clpool_oom_sweep_test (oom_sweep.bzl) generates: clpool sweep on a program, this
# shard's points when Bazel shards the test, the reports where Bazel keeps a test's outputs.
#   oom_sweep_test.sh CLPOOL LAYER_SO LIBMOCKCL_SO|- BINARY [SWEEP FLAGS...] -- [ARGS...]
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
while [[ $# -gt 0 && "$1" != "--" ]]; do flags+=("$1"); shift; done
[[ "${1:-}" == "--" ]] && shift
out="${TEST_UNDECLARED_OUTPUTS_DIR:-${TEST_TMPDIR:-$(mktemp -d)}}"
mkdir -p "$out"
if [[ "$mockcl" != "-" ]]; then
  export OCL_ICD_VENDORS="$(realpath "$mockcl")" OCL_ICD_PLATFORM_SORT=none
fi
# Bazel's test sharding: this shard's points, and the file that says the test knows sharding.
shard=()
if [[ -n "${TEST_TOTAL_SHARDS:-}" && "${TEST_TOTAL_SHARDS}" -gt 1 ]]; then
  shard=(--shard "$((TEST_SHARD_INDEX + 1))/$TEST_TOTAL_SHARDS")
fi
[[ -n "${TEST_SHARD_STATUS_FILE:-}" ]] && touch "$TEST_SHARD_STATUS_FILE"
exec "$clpool" sweep --layer "$layer" --out "$out/sweep" --force --json "$out/sweep.json" \
  --html "$out/sweep.html" "${shard[@]}" "${flags[@]}" -- "$binary" "$@"
