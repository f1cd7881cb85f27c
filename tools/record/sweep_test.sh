#!/usr/bin/env bash
# clpool sweep end to end on mockcl: a C program and a Python one with one way each of meeting an
# out-of-memory, every verdict (handled, recovered, crashed at the failure and later, hung, leaked,
# silent), the reports (text, --json, --html), shards whose union is the whole sweep, --max-runs,
# --only, Ctrl-C, a program that makes no allocation or fails without any fault, and every bad
# input as one usage error (exit 2).
#   sweep_test.sh CLPOOL SWEEP_VICTIM SWEEP_VICTIM_PY SAME_OUTPUT LIBMOCKCL_SO
set -u
source "$(dirname "$0")/../dev/testing/test_lib.sh" || exit 1  # fail, die, finish
CLPOOL="$(realpath "$1")"
VICTIM="$(realpath "$2")"
VICTIM_PY="$(realpath "$3")"
SAME="$(realpath "$4")"
MOCKCL="$(realpath "$5")"
T="${TEST_TMPDIR:-$(mktemp -d)}"
cd "$T" || exit 1
export OCL_ICD_VENDORS="$MOCKCL" POCL_CACHE_DIR="$T/pocl-cache"
unset OPENCL_LAYERS
[[ -n "${ASAN_OPTIONS:-}" ]] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
n=0

# sweep WANT_RC ARGS...: runs clpool sweep into a fresh folder; its output in $out.
sweep() {
  local want="$1"
  shift
  n=$((n + 1))
  out="$("$CLPOOL" sweep --out "$T/s$n" "$@" 2>&1)"
  rc=$?
  [[ $rc == "$want" ]] || { fail "clpool sweep $* -> exit $rc, want $want"; echo "$out" | tail -20; }
}
has() { [[ "$out" == *"$1"* ]] || { fail "output lacks '$1'"; echo "$out" | head -30; }; }
counts() { has "crashed $1, hung $2, leaked $3, silent $4, handled $5, not reached $6"; }

echo "=== the C program, one mode at a time (3 allocations and 3 first uses each)"
sweep 0 -- "$VICTIM" handles
has "profile nvidia: 6 failure points (3 allocations, 3 first uses)"
counts 0 0 0 0 6 0
has "alloc:1 (1 MiB buffer): exit 1: reported"
has "make_filled ("
sweep 0 -- "$VICTIM" recovers
counts 0 0 0 0 6 0
has "exit 0: recovered"
# A program that fails before any allocation in the sweep's runs (a lock the fault-free run left,
# as hashcat's session lock when runs share a directory): not reached, and said why.
rm -f "$T/victim.lock"
sweep 0 -j 2 -- sh -c "[ -e '$T/victim.lock' ] && exit 7; touch '$T/victim.lock'; exec '$VICTIM' handles"
counts 0 0 0 0 0 6
has "(exit 7); this run made no device allocation at all, so it failed for a reason of its own: see its stderr (runs at once, -j, share the working directory, HOME and the program's files)"
sweep 1 -- "$VICTIM" crashes
counts 6 0 0 0 0 0
if [[ -n "${ASAN_OPTIONS:-}" ]]; then
  # Built with the sanitizers, the program ends with UBSan's report (a null argument to memset)
  # and exit 1, not a signal: still crashed, with the report's line.
  has "UndefinedBehaviorSanitizer: "
  has "sweep_victim.c:"
  has ": runtime error: null pointer passed as argument 1"
  has "(exit 1) after the failure"
else
  has "signal 11 (SIGSEGV) after the failure"
  if command -v gdb >/dev/null; then has "native: #1"; has "in make_filled"; fi
fi
has "replay: clpool sweep --profile nvidia --out $T/s$n/replay-alloc-1 --force --only alloc:1 -- $VICTIM crashes"
# The replay line runs as printed, twice, into its own folder: the sweep's runs stay.
replay_line="$(grep -m1 -o "replay: clpool sweep .*alloc:1 -- .*" <<<"$out")"
for _ in 1 2; do
  eval "\"\$CLPOOL\"${replay_line#replay: clpool}" >/dev/null 2>&1
  rc=$?
  [[ $rc == 1 ]] || fail "the replay line: exit $rc, want 1: $replay_line"
done
[[ $(ls "$T/s$n/runs" | wc -l) == 6 && -d "$T/s$n/replay-alloc-1/runs/alloc-1" ]] ||
  fail "the replay line changed the sweep's runs: $(ls "$T/s$n/runs" "$T/s$n/replay-alloc-1/runs")"
if [[ -n "${ASAN_OPTIONS:-}" ]]; then
  sweep 1 -- "$VICTIM" uses_freed  # AddressSanitizer's report ends it, exit 1: crashed
  counts 6 0 0 0 0 0
  has "AddressSanitizer: heap-use-after-free"
  has "sanitizer: #0"
  has "in main"
else
  sweep 0 -- "$VICTIM" uses_freed  # unseen without ASan: the program reports and exits 1
  counts 0 0 0 0 6 0
fi
sweep 1 -- "$VICTIM" crashes_later
counts 6 0 0 0 0 0
sweep 1 --timeout 1 -j 3 -- "$VICTIM" hangs
counts 0 6 0 0 0 0
has "no end after 1 s (--timeout)"
# Stopped before it could meet its point (a timeout shorter than its start-up): still hung, and a
# note says the fault-free run itself took longer than --timeout.
sweep 1 --timeout 0.001 -- "$VICTIM" hangs
counts 0 6 0 0 0 0
has "no end after 0.001 s (--timeout)"
has "more than --timeout 0.001 s: runs as slow are stopped and counted as hung"
sweep 1 -- "$VICTIM" leaks
counts 0 0 4 0 2 0
has "alloc:3 (3 MiB buffer): exit 1 holding 3145728 bytes of device memory, 0 without the failure"
# The same through _exit: no exit handlers, so no count at exit from the layer; its trace's count
# says the same (it was handled, never checked, before).
sweep 1 -- "$VICTIM" leaks_at_exit_
counts 0 0 4 0 2 0
has "0 bytes held at exit, by its trace: no exit handlers ran)"
has "alloc:3 (3 MiB buffer): exit 1 (no exit handlers ran: its trace's count) holding 3145728 bytes of device memory, 0 without the failure"
sweep 0 -- "$VICTIM" silent
counts 0 0 0 0 6 0  # without --check, exit 0 is recovered
sweep 0 --check "$SAME" -- "$VICTIM" silent
counts 0 0 0 6 0 0
has "exit 0, and --check says its output differs from the fault-free run's"
sweep 0 --profile exact -- "$VICTIM" handles
has "profile exact: 3 failure points (3 allocations, 0 first uses)"

echo "=== the reports"
sweep 1 --json "$T/r.json" --html "$T/r.html" -- "$VICTIM" leaks
/usr/bin/python3 - "$T/r.json" <<'PY' || fail "--json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema_version"] == 1 and j["tool"] == "clpool sweep", j
assert len(j["points"]) == 6 and len(j["runs"]) == 6, j
v = sorted(r["verdict"] for r in j["runs"])
assert v == ["handled", "handled", "leaked", "leaked", "leaked", "leaked"], v
leak = [r for r in j["runs"] if r["point"] == "alloc:3"][0]
assert leak["live_at_exit_bytes"] == 3145728 and leak["exit_code"] == 1 and leak["signal"] is None, leak
assert j["fault_free"]["live_at_exit_bytes"] == 0, j["fault_free"]
assert leak["site"].startswith("make_filled (") and leak["replay"].endswith("leaks"), leak
PY
grep -q "<table>" "$T/r.html" && grep -q "leaked" "$T/r.html" || fail "--html"
# The headline's lines are lines in the page, not escaped newlines.
! grep -q 'x0A' "$T/r.html" && grep -q "^profile nvidia: 6 failure points" "$T/r.html" || fail "--html: the headline's lines"
# A report that cannot be written is refused before any run, not after them all.
sweep 2 --json "$T/no/such/dir/r.json" -- "$VICTIM" handles
has "--json: cannot create '$T/no/such/dir/r.json'"
[[ "$out" != *"fault-free"* && ! -e "$T/s$n" ]] || fail "--json in a missing directory made --out or ran the program"
# Nor is an earlier sweep replaced (--force) when a report cannot be written, or --out a report.
keep="$T/s$((n - 1))"
before="$(ls -R "$keep")"
out="$("$CLPOOL" sweep --force --out "$keep" --html "$T/no/such/r.html" -- "$VICTIM" handles 2>&1)"
[[ $? == 2 && "$(ls -R "$keep")" == "$before" ]] || fail "--force with a bad --html changed $keep: $out"
sweep 2 --json "$T/s$((n + 1))/" -- "$VICTIM" handles
has "--json: '$T/s$n/' is --out, the sweep's folder"
# A report inside --out, which the sweep makes.
sweep 0 --json "$T/s$((n + 1))/r.json" -- "$VICTIM" handles
/usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$T/s$n/r.json" || fail "--json inside --out"
sweep 0 --json - -- "$VICTIM" handles
[[ "$out" == "{"* ]] || fail "--json - printed more than the JSON"

echo "=== shards: their union is the whole sweep, each point once"
for k in 1 2 3; do
  sweep 0 --shard "$k/3" --json "$T/shard$k.json" -- "$VICTIM" handles
done
sweep 0 --json "$T/whole.json" -- "$VICTIM" handles
/usr/bin/python3 - "$T" <<'PY' || fail "the shards' union is not the whole sweep"
import json, sys
d = sys.argv[1]
runs = lambda f: [r["point"] for r in json.load(open(f"{d}/{f}"))["runs"]]
shards = [runs(f"shard{k}.json") for k in (1, 2, 3)]
union = sorted(p for s in shards for p in s)
assert union == sorted(runs("whole.json")) and len(union) == len(set(union)) == 6, (shards, runs("whole.json"))
PY
sweep 0 --max-runs 2 --seed 3 -- "$VICTIM" handles
has "runs: 2 of 2"
has "left out: 4 points (--max-runs 2: 2 of 6 points, evenly from the 1st (--seed 3))"
sweep 1 --only first-use:2 -- "$VICTIM" leaks
has "runs: 1 of 1"
has "first-use:2 (2 MiB, clEnqueueMapBuffer): exit 1 holding 1048576 bytes"
# Its replay line is itself (the same --out): running it again does not nest folders.
has "replay: clpool sweep --profile nvidia --out $T/s$n --force --only first-use:2 -- $VICTIM leaks"
# A point the program does not have (a replay line from another build): refused, naming what it has.
sweep 2 --only alloc:99 -- "$VICTIM" handles
has "clpool sweep: error: --only alloc:99: the fault-free run has no such point (it has alloc:1..3 and first-use:1..3)"
[[ ! -e "$T/s$n" ]] || fail "--only alloc:99 left its new --out behind: $(ls -A "$T/s$n")"
# ... and into an earlier sweep's folder (--force): the folder stays, empty of runs.
sweep 0 --only alloc:1 -- "$VICTIM" handles
"$CLPOOL" sweep --out "$T/s$n" --force --only alloc:99 -- "$VICTIM" handles >/dev/null 2>&1
[[ $? == 2 && -d "$T/s$n" && ! -e "$T/s$n/fault-free" && ! -e "$T/s$n/runs" ]] ||
  fail "--only alloc:99 over an earlier sweep: $(ls -A "$T/s$n")"
sweep 0 --only alloc:2 --shard 2/3 -- "$VICTIM" handles  # there, in another shard: no run, no error
has "runs: 0 of 0"

echo "=== Ctrl-C: the runs done are reported, the rest counted"
# interrupted SIGNAL NAME READY ARGS...: clpool sweep --out $T/NAME ARGS in the background; once
# the shell command READY succeeds (at most 10 s), SIGNAL to it; its exit in $rc, output in $out.
interrupted() {
  local sig=$1 name=$2 ready=$3 pid
  shift 3
  "$CLPOOL" sweep --out "$T/$name" "$@" > "$T/$name.txt" 2>&1 &
  pid=$!
  for _ in $(seq 100); do eval "$ready" && break; sleep 0.1; done
  kill "-$sig" "$pid"
  wait "$pid"
  rc=$?
  out="$(cat "$T/$name.txt")"
}
interrupted INT int '[[ -d "$T/int/runs/alloc-1" ]] && sleep 0.5' --timeout 60 -- "$VICTIM" hangs
[[ $rc == 130 ]] || fail "interrupted: exit $rc, want 130"
has "interrupted: 6 of 6 runs remain"
# Only the run that started has a folder.
[[ $(ls "$T/int/runs" | wc -l) == 1 ]] || fail "interrupted: run folders $(ls "$T/int/runs")"
[[ -z "$(pgrep -f "sweep_victim hangs")" ]] || fail "a run outlived the interrupted sweep"
# A fault-free run that never ends: SIGTERM stops it (exit 128 + 15), and the program with it.
# A sleep of its own length (another test's is not this one's), found by pgrep as itself (^: not
# clpool, whose own command line names it too).
secs=$((100000 + RANDOM))
interrupted TERM int2 'pgrep -f "^sleep $secs\$" >/dev/null' -- /bin/sh -c "exec sleep $secs"
[[ $rc == 143 ]] || fail "SIGTERM in the fault-free run: exit $rc, want 143"
has "clpool sweep: interrupted during the fault-free run; nothing swept"
[[ -z "$(pgrep -f "^sleep $secs\$")" ]] || { fail "the fault-free run outlived the sweep"; pkill -f "^sleep $secs\$"; }

echo "=== programs with nothing to sweep"
sweep 0 -- /bin/true
has "0 failure points: the program made no device allocation; nothing to sweep"
sweep 2 -- "$VICTIM" nonsense
has "clpool sweep: error: the program fails without any fault injected: it exits 2"
# Two processes that allocate: each would fail its own Nth allocation in one run. Refused.
sweep 2 -- /bin/sh -c '"$0" handles && "$0" handles' "$VICTIM"
has "the program allocates device memory in more than one process (alloc 1 came again after alloc 3)"

echo "=== what the program says is not a sanitizer's report unless it has the form of one"
sweep 0 -- /bin/sh -c '"$0" recovers; rc=$?; echo "solver: runtime error: retrying smaller" >&2; exit $rc' "$VICTIM"
counts 0 0 0 0 6 0

echo "=== a replay line's words: a path with a space and a control byte, as bash reads it back"
mkdir -p "$T/d ir"
odd="$T/d ir/vic"$'\t'"tim"
cp "$VICTIM" "$odd"
sweep 1 -- "$odd" crashes
has "-- \$'$T/d ir/vic\\x09tim' crashes"
replay_line="$(grep -m1 -o "replay: clpool sweep .*alloc:1 -- .*" <<<"$out")"
eval "\"\$CLPOOL\"${replay_line#replay: clpool}" >/dev/null 2>&1
[[ $? == 1 ]] || fail "the replay line of a program named with a tab: $replay_line"

echo "=== bad input: one line, exit 2, nothing run"
for c in "--shard 3/2|--shard: 3/2: K must be from 1 to N" "-j 0|-j: 0 is not a number of runs at once" \
         "--timeout 0|--timeout: '0' is not a number of seconds above 0" "--timeout 1e300|--timeout: '1e300' is more than a week" "--points some|--points: 'some' is not alloc" \
         "--check $T/nope|--check: cannot run '$T/nope': no such program" "--only alloc:0|--only: 'alloc:0' is not a point" \
         "--profile exact --points first-use|--points first-use: the exact profile's device fails at creation" \
         "--profile amd|--profile: profile 'amd': no such built-in profile" "--shard 1/0|--shard: 1/0: K must be from 1 to N" \
         "--tiemout 3|unknown option '--tiemout'; did you mean --timeout?" "--max-runs 0|--max-runs: must be at least 1" \
         "--seed 3|--seed picks where --max-runs starts its even sample; without --max-runs every point runs" \
         "--only alloc:1 --points alloc|--only runs the one point it names; it takes no --points" \
         "--only alloc:1 --max-runs 1|--only runs the one point it names; it takes no --max-runs" \
         "--only alloc:1 --seed 2|--only runs the one point it names; it takes no --seed"; do
  args="${c%%|*}"
  # shellcheck disable=SC2086
  sweep 2 $args -- "$VICTIM" handles
  has "clpool sweep: error: ${c#*|}"
  [[ ! -e "$T/s$n/fault-free" ]] || fail "$args: the program ran"
done
sweep 2
has "no program to run"
mkdir -p "$T/mine" && echo precious > "$T/mine/file"
out="$("$CLPOOL" sweep --out "$T/mine" -- "$VICTIM" handles 2>&1)"
[[ $? == 2 && "$out" == *"exists and is not a sweep's folder"* && -e "$T/mine/file" ]] || fail "--out on a folder that is not a sweep's"
out="$("$CLPOOL" sweep --out "$T/s1" -- "$VICTIM" handles 2>&1)"
[[ $? == 2 && "$out" == *"holds an earlier sweep: pass --force"* ]] || fail "--out on an earlier sweep without --force"
out="$("$CLPOOL" sweep --force --out "$T/s1" -- "$VICTIM" handles 2>&1)"
[[ $? == 0 ]] || fail "--force over an earlier sweep"

echo "=== the Python program (--until-free: PyOpenCL retries a failed request once)"
preload_env "$CLPOOL"
if ((${#preload_env[@]})); then
  echo "(the Python cases need Debian's uninstrumented python3 to load the sanitized layer and mock:"
  echo " they run in the default build, as the other Python tests do)"
else
  # The victim's lines, found in it: the buffer's creation, its first call, the entry, the crash.
  line_of() { grep -n -m1 -F "$1" "$VICTIM_PY" | cut -d: -f1; }
  alloc_line="$(line_of "b = cl.Buffer(")"
  call_line="$(line_of "held[i] = make_filled(n, i + 1)")"
  entry_line="$(line_of "sys.exit(main())")"
  crash_line="$(line_of "ctypes.memset(0, 1, 1)")"
  sweep 0 --until-free -- /usr/bin/python3 "$VICTIM_PY" handles
  counts 0 0 0 0 6 0
  has "make_filled ($VICTIM_PY:$alloc_line) ← main ($VICTIM_PY:$call_line) ← <module> ($VICTIM_PY:$entry_line)"
  sweep 1 --until-free -- /usr/bin/python3 "$VICTIM_PY" crashes
  counts 6 0 0 0 0 0
  has "python: File \"$VICTIM_PY\", line $crash_line in main"
  sweep 1 --until-free --timeout 2 -j 3 -- /usr/bin/python3 "$VICTIM_PY" hangs
  counts 0 6 0 0 0 0
  sweep 1 --until-free -- /usr/bin/python3 "$VICTIM_PY" leaks
  counts 0 0 4 0 2 0
  # What only the uncaught exception's traceback holds (sys.last_traceback) is not a leak.
  sweep 0 --until-free -- /usr/bin/python3 "$VICTIM_PY" raises
  counts 0 0 0 0 6 0
  sweep 0 -- /usr/bin/python3 "$VICTIM_PY" handles
  has "exit 0: recovered"  # without --until-free, PyOpenCL's retry gets the memory
fi
finish
