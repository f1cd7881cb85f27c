#!/usr/bin/env bash
# run_cts.sh's usage errors (exit 2, naming the setting) and its skip path (no CTS sources:
# one "skipped" line, exit 0, nothing built). Needs no CTS, CMake or OpenCL.
set -uo pipefail
script="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh  # fail, finish, expect_match; from the runfiles root

# expect STATUS PATTERN ARGS...: run the script with ARGS (and CLPOOL_CTS_SRC unset), check the
# exit status and that a line of its output (stdout and stderr) matches PATTERN; the output is
# left in $tmp/out.
run_cts() { env -u CLPOOL_CTS_SRC bash "$script" "$@"; }
expect() {
  expect_match "$1" "$2" run_cts "${@:3}"
  printf '%s\n' "$expect_out" >"$tmp/out"
}

expect 2 "unknown argument '--bogus'" --bogus
expect 2 "unknown argument 'api'" api
expect 2 "--cts-src needs a value" --cts-src
expect 2 "--device 'gpu' is not pocl, mockcl or both" --device gpu
expect 2 "--tests: 'image' is not one of" --tests api,image
expect 2 "--tests is empty" --tests ""
expect 2 "--image-args: 'a;b' is not a CTS image option" --image-args "small_images a;b"
expect 2 "--image-args needs a value" --image-args
expect 2 "--timeout '0' is not a positive" --timeout 0
expect 2 "--budget 'x' is not a positive" --budget x
expect 2 "--jobs '-1' is not a positive" --jobs -1
mkdir "$tmp/not-cts"
expect 2 "is not an OpenCL-CTS checkout" --cts-src "$tmp/not-cts" --out "$tmp/out-dir"
[[ -e "$tmp/out-dir" ]] && fail "a refused checkout created --out"
expect 0 "^Usage: tools/dev/cts/run_cts.sh" --help

# The skip path: no sources given, or given and absent. Exactly one line, nothing built.
expect 0 "^run_cts.sh: skipped: no OpenCL-CTS sources \(give --cts-src" --out "$tmp/out-dir"
[[ $(wc -l <"$tmp/out") == 1 ]] || fail "skip printed more than one line"
expect 0 "^run_cts.sh: skipped: no OpenCL-CTS sources at '$tmp/absent'" --cts-src "$tmp/absent" --out "$tmp/out-dir"
[[ $(wc -l <"$tmp/out") == 1 ]] || fail "skip printed more than one line"
got=0
CLPOOL_CTS_SRC="$tmp/absent" bash "$script" --out "$tmp/out-dir" >"$tmp/out" 2>&1 || got=$?
if [[ "$got" != 0 ]] || ! grep -q "skipped: no OpenCL-CTS sources at '$tmp/absent'" "$tmp/out"; then
  fail "CLPOOL_CTS_SRC=absent: exit $got: $(cat "$tmp/out")"
fi
[[ -e "$tmp/out-dir" ]] && fail "the skip path created --out"

finish
