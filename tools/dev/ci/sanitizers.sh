#!/usr/bin/env bash
# The sanitizer and fuzzing part of CI (called by tools/test.sh / .ci/run):
#
#   tools/dev/ci/sanitizers.sh [FUZZ_SECONDS] [FUZZ_JOBS]
#
#   1. bazel test --config=asan --build_tests_only //...    the full suite under ASan + UBSan (g++)
#   2. bazel test --config=tsan --build_tests_only --test_tag_filters=concurrency //...
#                                                           only the tests tagged "concurrency"
#   3. tools/dev/fuzz/fuzz.sh all FUZZ_SECONDS FUZZ_JOBS   a bounded smoke of every fuzzer
#      (default 30 s each, 2 at a time; CI gives 15), clang 14 + libFuzzer + ASan + UBSan: the eight
#      fuzzers of //fuzz (pool_ops, pool_ops_deep, pool_ops_high_lb, config_parsers, trace_parsers,
#      kernel_signature, pool_mockcl, svm_ordering), found by their "fuzzer" tag: 4 x FUZZ_SECONDS
#      plus the build
#
# Every step runs even if an earlier one fails; the exit status is 1 if any failed. Prints how long
# each step took (figures measured on the 2-core development machine are in fuzz/README.md).
# SKIP_ASAN=1, SKIP_TSAN=1, SKIP_FUZZ=1 leave a step out.
set -uo pipefail

fuzz_seconds=${1:-30}
fuzz_jobs=${2:-2}
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"

failed=()
summary=()

step() {
  local name=$1
  shift
  local start=$SECONDS
  echo "==== sanitizers.sh: $name: $*" >&2
  if "$@"; then
    summary+=("PASS  $name ($((SECONDS - start)) s)")
  else
    summary+=("FAIL  $name ($((SECONDS - start)) s)")
    failed+=("$name")
  fi
}

# CLPOOL_TEST_FLAGS: extra flags for both bazel test steps (tools/test.sh sets --config=ci in CI).
# CLPOOL_BEP_DIR (tools/test.sh sets it): the ASan run's build event file goes there, asan.json.
# shellcheck disable=SC2086
# tools/dev/ci/bazel_test.sh: bazel test, tried once more when the build (not a test) fails.
# --build_tests_only: what no test runs (the benchmarks, the fuzzers' libFuzzer binaries, built
# by step 3 with clang) is not built again under ASan.
[[ "${SKIP_ASAN:-0}" == 1 ]] || step asan bash tools/dev/ci/bazel_test.sh --config=asan --build_tests_only ${CLPOOL_TEST_FLAGS:-} \
  ${CLPOOL_BEP_DIR:+--build_event_json_file=$CLPOOL_BEP_DIR/asan.json} //...
[[ "${SKIP_TSAN:-0}" == 1 ]] ||
  step tsan bash tools/dev/ci/bazel_test.sh --config=tsan ${CLPOOL_TEST_FLAGS:-} --build_tests_only \
    --test_tag_filters=concurrency,-no_tsan //...
[[ "${SKIP_FUZZ:-0}" == 1 ]] || step fuzz-smoke tools/dev/fuzz/fuzz.sh all "$fuzz_seconds" "$fuzz_jobs"

echo "==== sanitizers.sh summary" >&2
printf '%s\n' "${summary[@]}" >&2
[[ ${#failed[@]} -eq 0 ]]
