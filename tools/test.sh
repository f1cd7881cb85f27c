#!/usr/bin/env bash
# The whole test suite: installs what is missing, then
#   0. tools/dev/lint/check_layering.sh       the package arrows of ARCHITECTURE.md (bazel query)
#      tools/dev/lint/function_length.py      no production function over 80 lines, no production
#                                             file over 500 (CONTRIBUTING.md)
#      tools/dev/lint/check_format.sh         every tracked file formatted (clang-format-14, black)
#                                             and clean (flake8)
#      fuzz/oss-fuzz/sources.sh --check       OSS-Fuzz's source lists are Bazel's (bazel query);
#                                             all four are fast, so they run first
#   1. bazel test //...                       every test, default toolchain (g++ 12); here and in
#                                             step 3 a failed build (not test) is tried once more
#                                             (tools/dev/ci/bazel_test.sh)
#   2. tools/install_test.sh                  install to a temporary prefix; build, link and run a
#                                             program with pkg-config and with CMake
#   2b. tools/build_defs/memory_test_test.sh the Bazel rule clpool_memory_test from a workspace of
#                                             its own: examples/ci/cc's tests pass and fail as
#                                             they should
#   3. tools/dev/ci/sanitizers.sh 15 2        the suite under ASan + UBSan (but the tests tagged
#                                             no_asan, CONTRIBUTING.md), the concurrency tests
#                                             under TSan, and a 15 s smoke of every fuzzer (longer
#                                             campaigns: tools/dev/fuzz/fuzz.sh)
#   4. tools/dev/cts/run_cts.sh               the Khronos OpenCL-CTS subset on POCL and on mockcl
#                                             when CLPOOL_CTS_SRC names a checkout (else one
#                                             "skipped" line; see tools/dev/cts/README.md)
#   5. python/pyopencl_suite/run_pyopencl_suite.sh
#                                             PyOpenCL's own tests with clpool's pool as every
#                                             array's allocator, on POCL, when CLPOOL_PYOPENCL_SRC
#                                             names a checkout (else one "skipped" line; see
#                                             python/README.md)
#   6. python/compat/ci_pyopencl2026_suite.sh   a strict share of PyOpenCL 2026.1.2's own tests
#                                             through clpool's pool on POCL and mockcl, when the
#                                             source archives are there (../shared/sources or
#                                             CLPOOL_PYOPENCL_SOURCES; else one "skipped" line)
#   7. tools/dev/real_programs/real_program.sh piglit
#                                             piglit's OpenCL api tests (42, about 25 s) on POCL
#                                             and on mockcl, test by test, when piglit is installed
#                                             (else one "skipped" line); the whole cl profile
#                                             (about 30 min here) is
#                                             //tools/dev/real_programs:piglit_test
#                                             (tools/dev/real_programs/README.md)
# Step 1 includes the Python battery on PyOpenCL 2026.1.2 (//python/compat) when those archives
# are there; otherwise it says "PyOpenCL 2026.1.2 tests skipped" with the reason, and under CI
# fails (steps 1 and 6: a CI machine must test both PyOpenCLs).
# Extra arguments go to step 1 (e.g. --test_output=all). QUICK=1 runs steps 0 and 1 only. Under CI
# (CI set, as .ci/run's environment has it) every test runs again instead of reusing a cached pass.
# At the end, passed or not, it prints each step's time and the ten slowest tests of steps 1 and
# 3's ASan run (tools/dev/ci/slowest_tests.py, from Bazel's build event files).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
steps=()
CLPOOL_BEP_DIR="$(mktemp -d "${TMPDIR:-/tmp}/clpool-test-bep.XXXXXX")"
export CLPOOL_BEP_DIR
finish() {
  local status=$?
  echo "tools/test.sh: the steps, in seconds (the whole run: $((SECONDS - start)) s):" >&2
  printf '  %s\n' "${steps[@]}" >&2
  /usr/bin/python3 tools/dev/ci/slowest_tests.py default="$CLPOOL_BEP_DIR/default.json" \
    asan="$CLPOOL_BEP_DIR/asan.json" >&2 2>/dev/null || true
  rm -rf "$CLPOOL_BEP_DIR"
  exit $status
}
trap finish EXIT
# step NAME COMMAND...: runs COMMAND, noting its time under NAME (and FAILED when it fails).
step() {
  local name=$1 t=$SECONDS
  shift
  if "$@"; then
    steps+=("$(printf '%5d  %s' $((SECONDS - t)) "$name")")
  else
    local rc=$?
    steps+=("$(printf '%5d  %s FAILED (exit %d)' $((SECONDS - t)) "$name" "$rc")")
    return "$rc"
  fi
}
step setup bash tools/setup.sh
if [[ -n "${CI:-}" ]]; then
  export CLPOOL_TEST_FLAGS="--config=ci ${CLPOOL_TEST_FLAGS:-}"
fi
step "0 check_layering.sh" bash tools/dev/lint/check_layering.sh
step "0 function_length.py" /usr/bin/python3 tools/dev/lint/function_length.py
step "0 check_format.sh" bash tools/dev/lint/check_format.sh
step "0 oss-fuzz sources" bash fuzz/oss-fuzz/sources.sh --check
# shellcheck disable=SC2086  # CLPOOL_TEST_FLAGS is a list of flags
step "1 bazel test //..." bash tools/dev/ci/bazel_test.sh ${CLPOOL_TEST_FLAGS:-} --build_event_json_file="$CLPOOL_BEP_DIR/default.json" //... "$@"
echo "tools/test.sh: default suite passed in $((SECONDS - start)) s" >&2
reason="$(cat "$(bazel info output_base 2>/dev/null)/external/pyopencl_2026/REASON" 2>/dev/null || true)"
if [[ -n "${reason//[[:space:]]/}" ]]; then
  if [[ -n "${CI:-}" ]]; then
    echo "tools/test.sh: error: PyOpenCL 2026.1.2 tests did not run under CI: $reason" >&2
    exit 1
  fi
  echo "tools/test.sh: PyOpenCL 2026.1.2 tests skipped: $reason" >&2
fi
if [[ "${QUICK:-0}" == 1 ]]; then
  exit 0
fi
step "2 install_test.sh" bash tools/install_test.sh
step "2b memory_test_test.sh" bash tools/build_defs/memory_test_test.sh
step "3 sanitizers.sh" bash tools/dev/ci/sanitizers.sh 15 2
step "4 run_cts.sh" bash tools/dev/cts/run_cts.sh
step "5 run_pyopencl_suite.sh" bash python/pyopencl_suite/run_pyopencl_suite.sh --device pocl --pool clpool
step "6 ci_pyopencl2026_suite.sh" bash python/compat/ci_pyopencl2026_suite.sh
# The default build's libmockcl.so, after the sanitizer builds of step 3.
step "7 piglit api" bash -c 'bazel build //mockcl:libmockcl.so &&
  PIGLIT_INCLUDE=api bash tools/dev/real_programs/real_program.sh piglit bazel-bin/mockcl/libmockcl.so'
echo "tools/test.sh: all steps passed in $((SECONDS - start)) s" >&2
