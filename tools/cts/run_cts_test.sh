#!/usr/bin/env bash
# run_cts.sh's usage errors (exit 2, naming the setting) and its skip path (no CTS sources:
# one "skipped" line, exit 0, nothing built). Needs no CTS, CMake or OpenCL.
set -uo pipefail
script="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect STATUS PATTERN ARGS...: run the script with ARGS (and CLPOOL_CTS_SRC unset), check the
# exit status and that its output (stdout and stderr) matches PATTERN.
expect() {
  local want="$1" pattern="$2"
  shift 2
  local got=0
  env -u CLPOOL_CTS_SRC bash "$script" "$@" >"$tmp/out" 2>&1 || got=$?
  if [[ "$got" != "$want" ]] || ! grep -qE -- "$pattern" "$tmp/out"; then
    echo "FAIL: run_cts.sh $*: exit $got (want $want), output:" >&2
    sed 's/^/  | /' "$tmp/out" >&2
    echo "  (wanted it to match /$pattern/)" >&2
    failures=$((failures + 1))
  fi
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
[[ -e "$tmp/out-dir" ]] && { echo "FAIL: a refused checkout created --out" >&2; failures=$((failures + 1)); }
expect 0 "^Usage: tools/cts/run_cts.sh" --help

# The skip path: no sources given, or given and absent. Exactly one line, nothing built.
expect 0 "^run_cts.sh: skipped: no OpenCL-CTS sources \(give --cts-src" --out "$tmp/out-dir"
[[ $(wc -l <"$tmp/out") == 1 ]] || { echo "FAIL: skip printed more than one line" >&2; failures=$((failures + 1)); }
expect 0 "^run_cts.sh: skipped: no OpenCL-CTS sources at '$tmp/absent'" --cts-src "$tmp/absent" --out "$tmp/out-dir"
[[ $(wc -l <"$tmp/out") == 1 ]] || { echo "FAIL: skip printed more than one line" >&2; failures=$((failures + 1)); }
got=0
CLPOOL_CTS_SRC="$tmp/absent" bash "$script" --out "$tmp/out-dir" >"$tmp/out" 2>&1 || got=$?
if [[ "$got" != 0 ]] || ! grep -q "skipped: no OpenCL-CTS sources at '$tmp/absent'" "$tmp/out"; then
  echo "FAIL: CLPOOL_CTS_SRC=absent: exit $got: $(cat "$tmp/out")" >&2
  failures=$((failures + 1))
fi
[[ -e "$tmp/out-dir" ]] && { echo "FAIL: the skip path created --out" >&2; failures=$((failures + 1)); }

if [[ "$failures" -gt 0 ]]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "run_cts_test: all checks passed"
