#!/bin/bash
# The example library's suite under clpool's pytest plugin (README.md, "Use it in CI"): with the
# buggy imagelib the plugin fails the three tests, names each site and writes each page; with the
# fixed one the same suite passes, and so does its OOM sweep; clpool_replay --diff of the two
# session traces names the site that grew and fails its gate.
#   example_test.sh CORE_SO PACKAGE_INIT_PY LAYER_SO LIBMOCKCL_SO CLPOOL_REPLAY EXAMPLE_TEST_PY [PYOPENCL]
# EXAMPLE_TEST_PY is examples/ci/python/tests/test_imagelib.py; PYOPENCL as in run_plugin_test.sh.
set -uo pipefail
# From Bazel's runfiles root, where sh_test starts (python/plugin_tests.bzl).
# shellcheck source=python/tests/python_env.sh
source python/tests/python_env.sh
core="$(realpath "$1")"
pkg="$(dirname "$(realpath "$2")")"
export LIBCLPOOL_LAYER_SO="$(realpath "$3")"
export LIBMOCKCL_SO="$(realpath "$4")"
export CLPOOL_REPLAY="$(realpath "$5")"
example="$(dirname "$(dirname "$(realpath "$6")")")"
pyopencl_site=""
[[ -n "${7:-}" ]] && pyopencl_site="$(pyopencl_site_of "$7")"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
clpool_site "$core" "$pkg" "$tmp/site"
export PYTHONPATH="${pyopencl_site:+$pyopencl_site:}$tmp/site:$tmp/project" PYTHONDONTWRITEBYTECODE=1
clpool_caches "$tmp"
unset OCL_ICD_VENDORS MOCKCL_DEVICES MOCKCL_BACKING OPENCL_LAYERS
# Its tests check what kernels computed.
clpool_sanitizer_env "$core" pocl
/usr/bin/python3 -c 'import pyopencl; print("PyOpenCL", pyopencl.VERSION_TEXT, "from", pyopencl.__file__)'
# fail and finish: tools/dev/testing/test_lib.sh (sourced by python_env.sh).
ok() { echo "ok: $1"; }
has() {  # has NAME FILE REGEX
  if grep -qE -- "$3" "$2"; then ok "$1"; else fail "$1"; fi
}

# One checkout at a time, at one path: the project as a user has it, before and after the fixes.
run_suite() {  # run_suite VERSION
  rm -rf "$tmp/project"
  mkdir -p "$tmp/project/tests"
  cp "$example/$1/imagelib.py" "$tmp/project/"
  cp "$example/tests/"*.py "$tmp/project/tests/"
  (cd "$tmp/project" && /usr/bin/python3 -m pytest -p clpool.pytest_plugin --clpool-device nvidia:4GiB \
     --clpool-artifacts "$tmp/art-$1" -p no:cacheprovider tests > "$tmp/$1.txt" 2>&1)
}

run_suite buggy
rc=$?
cat "$tmp/buggy.txt"
[[ $rc -eq 1 ]] && ok "buggy: exit 1" || fail "buggy: exit $rc"
out="$tmp/buggy.txt"
has "buggy: three failed" "$out" '^=+ 3 failed, 1 passed'
has "the leak" "$out" '^clpool: 2 MiB \(2097152 bytes\) of device memory the test allocated is still allocated after it returned, above the limit_device_leaks limit of 1 MiB'
has "the leak's site" "$out" '^  1\. thumbnail \(imagelib\.py:[0-9]+\) ← test_thumbnails \(tests/test_imagelib\.py:[0-9]+\)$'
has "the peak" "$out" '^clpool: peak device memory 64 MiB \(67108864 bytes\) is above the limit_device_memory limit of 16 MiB'
has "the peak's site" "$out" '^  1\. smooth_all \(imagelib\.py:[0-9]+\) ← test_smooth_all \(tests/test_imagelib\.py:[0-9]+\)$'
has "the out-of-memory" "$out" '^clpool: out of device memory: a request of 1 GiB \(1073741824 bytes\) failed at first use by clEnqueueMigrateMemObjects$'
has "on the 2 GiB card" "$out" '^  device +2 GiB \(2147483648 bytes\), nvidia profile \(device_capacity marker\)$'
has "the out-of-memory's site" "$out" "^  failing request's site +enlarge \(imagelib\.py:[0-9]+\) ← test_enlarge_a_large_image \(tests/test_imagelib\.py:[0-9]+\)$"
has "the summary" "$out" '^ +1\.06 GiB +[0-9.]+ [KMG]?i?B +[0-9]+ +tests/test_imagelib\.py::test_enlarge_a_large_image$'
for t in thumbnails:thumbnail smooth_all:smooth_all enlarge_a_large_image:enlarge; do
  page="$tmp/art-buggy/tests%2Ftest_imagelib.py%3A%3Atest_${t%%:*}/device.html"
  if [[ -s "$page" ]] && grep -q "${t#*:}" "$page"; then ok "page of test_${t%%:*} names ${t#*:}"; else fail "page $page"; fi
done
[[ ! -e "$tmp/art-buggy/tests%2Ftest_imagelib.py%3A%3Atest_enlarge_small" ]] && ok "no page for a passing test" || fail "a passing test's page"

run_suite fixed
rc=$?
cat "$tmp/fixed.txt"
[[ $rc -eq 0 ]] && ok "fixed: exit 0" || fail "fixed: exit $rc"
has "fixed: all pass" "$tmp/fixed.txt" '^=+ 4 passed'

# The fixed imagelib's OOM sweep (python/README.md, "An OOM sweep of a test suite"): each
# allocation and first use of its enlarge tests failing in turn, under pytest-xdist: all handled.
(cd "$tmp/project" && /usr/bin/python3 -m pytest -p clpool.pytest_plugin --clpool-device nvidia:4GiB \
   --clpool-oom-sweep -n 2 -p no:cacheprovider -k enlarge tests > "$tmp/sweep.txt" 2>&1)
rc=$?
cat "$tmp/sweep.txt"
[[ $rc -eq 0 ]] && ok "sweep: exit 0" || fail "sweep: exit $rc"
has "sweep: every run handled" "$tmp/sweep.txt" \
  '^clpool oom sweep: [1-9][0-9]* runs: crashed 0, hung 0, leaked 0, unhandled 0, handled [1-9][0-9]*, not reached 0'

"$CLPOOL_REPLAY" --diff "$tmp/art-fixed/session.trace" "$tmp/art-buggy/session.trace" --no-pool \
  --max-growth 5% --no-progress > "$tmp/diff.txt" 2>&1
rc=$?
cat "$tmp/diff.txt"
[[ $rc -eq 1 ]] && ok "diff: the gate fails (exit 1)" || fail "diff: exit $rc"
grep -A1 "^sites whose memory grew most" "$tmp/diff.txt" | grep -qE '^  1\. enlarge \(.*/project/imagelib\.py:[0-9]+\)$' \
  && ok "diff: enlarge grew most" || fail "diff: enlarge grew most"
finish
