#!/usr/bin/env bash
# real_program.sh's own behaviour, with no program run: bad usage exits 2, a program that is not
# installed is "skipped: PROGRAM not installed" (exit 0), and piglit_compare.py passes the expected
# differences and fails on any other, or on an expected one that is gone. launch_latency.sh's bad
# usage exits 2 with its reason.
#   real_program_script_test.sh REAL_PROGRAM_SH PIGLIT_COMPARE_PY LAUNCH_LATENCY_SH
source "$(dirname "$0")/../testing/test_lib.sh" || exit 1  # fail, die, finish
script="$1" compare="$2" latency="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
touch "$tmp/libmockcl.so"

set +e
bash "$script" >/dev/null 2>&1
[[ $? == 2 ]] || fail "no arguments: not exit 2"
bash "$script" doom "$tmp/libmockcl.so" >/dev/null 2>&1
[[ $? == 2 ]] || fail "an unknown program: not exit 2"
bash "$script" clpeak "$tmp/nothing.so" >/dev/null 2>&1
[[ $? == 2 ]] || fail "a missing libmockcl.so: not exit 2"
got="$(bash "$latency" 2>&1)"
[[ $? == 2 && "$got" == *"no libmockcl.so at ''"* ]] || fail "launch_latency.sh, no arguments: '$got'"
got="$(bash "$latency" "$tmp/nothing.so" 2>&1)"
[[ $? == 2 && "$got" == *"no libmockcl.so at '$tmp/nothing.so'"* ]] ||
  fail "launch_latency.sh, a missing libmockcl.so: '$got'"
for runs in 0 -3 x 1.5; do
  got="$(bash "$latency" "$tmp/libmockcl.so" "$runs" 2>&1)"
  [[ $? == 2 && "$got" == *"RUNS '$runs' is not a positive number"* ]] ||
    fail "launch_latency.sh, RUNS $runs: '$got'"
done
# A PATH without the program (only what the script needs before its check).
mkdir -p "$tmp/bin"
ln -s "$(command -v dirname)" "$tmp/bin/dirname"
bash_path="$(command -v bash)"
got="$(PATH="$tmp/bin" "$bash_path" "$script" hashcat "$tmp/libmockcl.so" 2>&1)"
status=$?
[[ $status == 0 && "$got" == "skipped: hashcat not installed (apt-get install -y hashcat)" ]] ||
  fail "hashcat missing: status $status, '$got'"

# piglit results: POCL's and mockcl's, as piglit writes them (results.json.bz2).
results() {  # folder test=result...
  local folder="$1"
  shift
  mkdir -p "$folder"
  /usr/bin/python3 - "$folder" "$@" <<'PY'
import bz2, json, sys
tests = {kv.split("=")[0]: {"result": kv.split("=")[1]} for kv in sys.argv[2:]}
with bz2.open(sys.argv[1] + "/results.json.bz2", "wt") as f:
    json.dump({"tests": tests}, f)
PY
}
printf '# comment\na@b\tfail\tpass\tPOCL aborts it\n' > "$tmp/expected.tsv"
results "$tmp/pocl" a@b=fail c@d=pass e@f=skip
results "$tmp/same" a@b=pass c@d=pass e@f=skip
results "$tmp/other" a@b=pass c@d=fail e@f=skip
results "$tmp/gone" a@b=fail c@d=pass e@f=skip
out="$(/usr/bin/python3 "$compare" "$tmp/pocl" "$tmp/same" "$tmp/expected.tsv")"
[[ $? == 0 && "$out" == *"mockcl: 3 tests, 2 pass, 1 skip"* && "$out" == *"expected: a@b"* ]] ||
  fail "an expected difference: $out"
out="$(/usr/bin/python3 "$compare" "$tmp/pocl" "$tmp/other" "$tmp/expected.tsv")"
[[ $? == 1 && "$out" == *"FAIL: c@d: POCL pass, mockcl fail"* ]] || fail "an unexpected difference: $out"
out="$(/usr/bin/python3 "$compare" "$tmp/pocl" "$tmp/gone" "$tmp/expected.tsv")"
[[ $? == 1 && "$out" == *"FAIL: a@b: expected to differ"* ]] || fail "an expected difference gone: $out"
finish
