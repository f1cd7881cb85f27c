#!/usr/bin/env bash
# README.md's clpool sweep example, run as it is written there: the unchecked build of stage
# crashes at each failing map of a staging buffer (exit 1), the checked build handles every point
# (exit 0), and each report says so by site. compare_sweeps.py, which the GPU session uses to set
# a driver's sweep beside mockcl's, puts the two builds' JSON reports side by side.
#   stage_sweep_test.sh CLPOOL LIBMOCKCL_SO STAGE STAGE_UNCHECKED COMPARE_SWEEPS_PY
set -u
source "$(dirname "$0")/../../tools/dev/testing/test_lib.sh" || exit 1  # fail, finish
CLPOOL="$(realpath "$1")"
export OCL_ICD_VENDORS="$(realpath "$2")"
STAGE="$(realpath "$3")"
UNCHECKED="$(realpath "$4")"
COMPARE="$(realpath "$5")"
T="${TEST_TMPDIR:-$(mktemp -d)}"
export POCL_CACHE_DIR="$T/pocl-cache"
unset OPENCL_LAYERS
[[ -n "${ASAN_OPTIONS:-}" ]] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"

has() { [[ "$out" == *"$1"* ]] || fail "report lacks '$1'"; }

out="$("$CLPOOL" sweep --profile nvidia --out "$T/unchecked" --json "$T/unchecked.json" -- "$UNCHECKED" 2>&1)"
rc=$?
echo "$out"
[[ $rc == 1 ]] || fail "the unchecked build's sweep exited $rc, want 1"
has "8 failure points (4 allocations, 4 first uses)"
has "crashed 3, hung 0, leaked 0, silent 0, handled 5, not reached 0"
if [[ -n "${ASAN_OPTIONS:-}" ]]; then  # built with the sanitizers: UBSan's report ends it, exit 1
  has "stage.c:"
  has ": runtime error: null pointer passed as argument 1"
else
  has "signal 11 (SIGSEGV)"
fi
has "upload_chunk ("
has "replay: clpool sweep --profile nvidia --out $T/unchecked/replay-first-use-1 --force --only first-use:1 -- $UNCHECKED"

out="$("$CLPOOL" sweep --profile nvidia --only first-use:1 --out "$T/one" -- "$STAGE" 2>&1)"
rc=$?
echo "$out"
[[ $rc == 0 ]] || fail "the checked build's run of first-use:1 exited $rc, want 0"
has "first-use:1 (4 MiB, clEnqueueMapBuffer): exit 1: reported"

out="$("$CLPOOL" sweep --profile nvidia --out "$T/checked" --json "$T/checked.json" -- "$STAGE" 2>&1)"
rc=$?
echo "$out"
[[ $rc == 0 ]] || fail "the checked build's sweep exited $rc, want 0"
has "crashed 0, hung 0, leaked 0, silent 0, handled 8, not reached 0"

# The two builds' reports, point by point: the three first uses of a staging buffer differ.
out="$(python3 "$COMPARE" checked="$T/checked.json" unchecked="$T/unchecked.json" 2>&1)"
rc=$?
echo "$out"
[[ $rc == 1 ]] || fail "compare_sweeps.py on the two builds exited $rc, want 1"
has "3 of 8 points differ:"
has "| alloc:1 | buffer | handled, exit 1 | handled, exit 1 |"
grep -qE "^  first-use:1: checked handled, exit 1 \(exit 1: reported\); unchecked crashed, " <<<"$out" || fail "no first-use:1 line"
expect_run 0 "all 8 points agree" python3 "$COMPARE" a="$T/checked.json" b="$T/checked.json"
# Its bad input: exit 2, one line.
bad() { EXPECT_ONE_ERROR_LINE=1 expect_run 2 "$1" python3 "$COMPARE" "${@:2}"; }
bad "give two reports" a="$T/checked.json"
bad "is not LABEL=SWEEP.json" "$T/checked.json" b="$T/checked.json"
bad "$T/gone.json: No such file or directory" a="$T/checked.json" b="$T/gone.json"
echo '{"tool": "clpool_replay"}' > "$T/other.json"
bad "$T/other.json: not a clpool sweep JSON report" a="$T/checked.json" b="$T/other.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["runs"]=d["runs"][:2]; json.dump(d, open(sys.argv[2], "w"))' "$T/checked.json" "$T/two.json"
bad "the reports swept different points" a="$T/checked.json" b="$T/two.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["runs"][0]["verdict"]; json.dump(d, open(sys.argv[2], "w"))' "$T/checked.json" "$T/noverdict.json"
bad "b: a run without a point or a verdict" a="$T/checked.json" b="$T/noverdict.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["runs"].append(d["runs"][0]); json.dump(d, open(sys.argv[2], "w"))' "$T/checked.json" "$T/twice.json"
bad "appears twice" a="$T/checked.json" b="$T/twice.json"
# The same verdict, another way of ending (a signal, an exit code): a difference too.
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["runs"][0]["exit_code"]=3; json.dump(d, open(sys.argv[2], "w"))' "$T/checked.json" "$T/exit3.json"
expect_run 1 "1 of 8 points differ:" python3 "$COMPARE" a="$T/checked.json" b="$T/exit3.json"
finish
