#!/usr/bin/env bash
# --trials end to end: on each boundary trace (testdata/boundary), the simulated device and mockcl
# (both with the nvidia profile) agree trial by trial within 4 MiB of the minimum capacity, and the
# trials' clean boundary is the minimum capacity --min-capacity finds; the text and table forms;
# every bad --trials, compare_trials.py and clpool_synth_trace input exits 2 with one line.
#   trials_test.sh CLPOOL_REPLAY LIBMOCKCL_SO COMPARE_TRIALS_PY CLPOOL_SYNTH_TRACE TRACE...
set -u
source "$(dirname "$0")/../dev/testing/test_lib.sh" || exit 1  # fail, die, finish, expect_run
REPLAY="$(realpath "$1")"
export LIBMOCKCL_SO="$(realpath "$2")"
COMPARE="$(realpath "$3")"
SYNTH="$(realpath "$4")"
shift 4
T="${TEST_TMPDIR:-$(mktemp -d)}"
export MOCKCL_BACKING=none
(($# == 8)) || die "want the 8 boundary traces, got $#"

json_field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

for trace in "$@"; do
  name=$(basename "$trace" .trace)
  "$REPLAY" --no-progress "$trace" --no-pool --min-capacity --granule 64KiB --format json="$T/$name.min.json" >/dev/null 2>&1 ||
    { fail "$name: --min-capacity exit $?"; continue; }
  P=$(json_field "$T/$name.min.json" 'd["results"][0]["min_capacity"]["capacity"]')
  range="$((P - 4194304)):$((P + 4194304)):64KiB"
  for d in sim mockcl; do
    "$REPLAY" --no-progress "$trace" --no-pool --device $d --trials "$range" --format json="$T/$name.$d.json" >/dev/null 2>&1
    rc=$?
    ((rc == 1)) || fail "$name on $d: --trials exit $rc, want 1 (trials below the boundary run out)"
  done
  expect_run 0 "nopool: 129 of 129 trials agree; clean from sim $P, mockcl $P bytes" \
    python3 "$COMPARE" sim="$T/$name.sim.json" mockcl="$T/$name.mockcl.json"
done

trace=$1
P=$(json_field "$T/$(basename "$trace" .trace).min.json" 'd["results"][0]["min_capacity"]["capacity"]')
# The text report: a summary, where it turns clean, one line per trial.
expect_run 1 "trials: 3 capacities from" "$REPLAY" --no-progress "$trace" --no-pool --trials "$((P - 65536)):$((P + 65536)):64KiB"
grep -q "clean from .* up, out of memory below" <<<"$expect_out" || fail "text: no boundary line"
[[ $(grep -c "bytes): clean$" <<<"$expect_out") == 2 ]] || fail "text: want 2 clean trials"
grep -qE "bytes\): out of memory at event [0-9]+ \(" <<<"$expect_out" || fail "text: no failing trial line"
# The table with two configurations: a row, then each configuration's trials.
expect_run 1 "trials clean" "$REPLAY" --no-progress "$trace" --compare nopool pool:lb=4 --trials "$P:$P:64KiB"
grep -q "^pool:lb=4 trials: 1 capacity, " <<<"$expect_out" || fail "table: no trials of pool:lb=4"
# JSON: each trial's capacity, verdict and first failing event.
"$REPLAY" --no-progress "$trace" --no-pool --trials "$((P - 65536)):$P:64KiB" --json > "$T/two.json"
[[ $(json_field "$T/two.json" '[t["ok"] for t in d["results"][0]["trials"]]') == "[False, True]" ]] || fail "json: verdicts"
[[ $(json_field "$T/two.json" 'd["results"][0]["trials"][0]["oom"]["event_index"] >= 0') == True ]] || fail "json: oom event"
# With --write-trace too: the trace is written and the trials still run.
expect_run 1 "trials: 2 capacities" "$REPLAY" --no-progress "$trace" --no-pool --trials "$((P - 65536)):$P:64KiB" --write-trace "$T/copy.trace"
[[ -s "$T/copy.trace" ]] || fail "--write-trace with --trials: no trace written"
# Without --trials, no "trials" key.
"$REPLAY" --no-progress "$trace" --no-pool --capacity "$P" --json > "$T/none.json"
[[ $(json_field "$T/none.json" '"trials" in d["results"][0]') == False ]] || fail "json: trials key without --trials"

# Bad --trials: exit 2, one line, before any replay.
bad() { EXPECT_ONE_ERROR_LINE=1 expect_run 2 "$1" "$REPLAY" --no-progress "$trace" --trials "$2"; }
bad "--trials: '1MiB:2MiB' is not LO:HI:STEP" 1MiB:2MiB
bad "--trials: 'a:b:c:d' is not LO:HI:STEP" a:b:c:d
bad "--trials HI" 1MiB::64KiB
bad "--trials: HI (1048576) is below LO (2097152)" 2MiB:1MiB:64KiB
bad "--trials STEP: must be positive" 1MiB:2MiB:0
bad "--trials STEP: '64KB'" 1MiB:2MiB:64KB
bad "--trials LO: must be positive" 0:2MiB:1MiB
bad "--trials: 1048577 trials; at most 10000" 1MiB:2MiB:1
EXPECT_ONE_ERROR_LINE=1 expect_run 2 "standard input can be read only once; --min-capacity, --trials" \
  "$REPLAY" --no-progress - --trials 1MiB:3MiB:1MiB < "$trace"

# compare_trials.py's bad input.
"$REPLAY" --no-progress "$trace" --no-pool --trials "$P:$((P + 65536)):64KiB" --json > "$T/other.json"
cmp_bad() { EXPECT_ONE_ERROR_LINE=1 expect_run 2 "$1" python3 "$COMPARE" "${@:2}"; }
cmp_bad "give two reports" a="$T/two.json"
cmp_bad "is not LABEL=REPORT.json" "$T/two.json" b="$T/two.json"
cmp_bad "$T/gone.json: No such file or directory" a="$T/two.json" b="$T/gone.json"
cmp_bad "$T/none.json: has no trials" a="$T/two.json" b="$T/none.json"
cmp_bad "nopool: the two reports' trials are at different capacities" a="$T/two.json" b="$T/other.json"
echo "{" > "$T/broken.json"
cmp_bad "$T/broken.json: not JSON" a="$T/two.json" b="$T/broken.json"
echo "[]" > "$T/list.json"
cmp_bad "$T/list.json: not a clpool_replay JSON report" a="$T/two.json" b="$T/list.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["results"][0]["trials"][0]["ok"]; json.dump(d, open(sys.argv[2], "w"))' "$T/two.json" "$T/nook.json"
cmp_bad "$T/nook.json: nopool: a trial without a capacity, a verdict or its failing event" a="$T/two.json" b="$T/nook.json"
# A difference is listed, exit 1.
python3 - "$T/two.json" "$T/flip.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["results"][0]["trials"][1]
t["ok"] = False
t["oom"] = {"event_index": 7}
json.dump(d, open(sys.argv[2], "w"))
PY
expect_run 1 "(" python3 "$COMPARE" a="$T/two.json" b="$T/flip.json"
grep -q "1 of 2 trials agree" <<<"$expect_out" || fail "compare: the count"
grep -qE "^  $P B \([0-9.]+ MiB\): a clean; b OOM at event 7$" <<<"$expect_out" || fail "compare: the differing trial"

# clpool_synth_trace's size range.
EXPECT_ONE_ERROR_LINE=1 expect_run 2 "--min-size-bits (20) is above --max-size-bits (10)" \
  "$SYNTH" "$T/s.trace" --min-size-bits 20 --max-size-bits 10
EXPECT_ONE_ERROR_LINE=1 expect_run 2 "--max-size-bits" "$SYNTH" "$T/s.trace" --max-size-bits 41
"$SYNTH" "$T/s.trace" --events 200 --live 1000 --min-size-bits 10 --max-size-bits 12 --seed 3 || fail "synth"
awk '$5 == "alloc" && ($7 < 1024 || $7 >= 8192) { bad = 1 } END { exit bad }' "$T/s.trace" ||
  fail "synth: a size outside [2^10, 2^13)"
finish
