#!/usr/bin/env bash
# `clpool record` end to end, over POCL (the system's ICDs) and over mockcl: layer_driver (a plain
# OpenCL program) is recorded, the summary printed, the exit status passed on (0, 3, a signal),
# the budget enforced as the layer does; and every bad input exits 2 with a message naming the
# setting, without running the program and without touching a file.
#   clpool_record_test.sh CLPOOL LAYER_DRIVER LIBMOCKCL_SO LAYER_SO TRACE_SUMMARY SWEEP_VICTIM
set -u
source "$(dirname "$0")/../dev/testing/test_lib.sh" || exit 1  # fail, die, finish
CLPOOL="$(realpath "$1")"
DRIVER="$(realpath "$2")"
MOCKCL="$(realpath "$3")"
LAYER="$(realpath "$4")"
SUMMARY="$(realpath "$5")"
VICTIM="$(realpath "$6")"
T="${TEST_TMPDIR:-$(mktemp -d)}"
cd "$T" || exit 1
export POCL_CACHE_DIR="$T/pocl-cache"
unset OPENCL_LAYERS
# POCL's idle worker threads crash LeakSanitizer's exit-time tracer (as in layer_test).
[[ -n "${ASAN_OPTIONS:-}" ]] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"

# rec WANT_RC ARGS...: runs clpool record; its stderr+stdout in $out.
rec() {
  local want="$1"
  shift
  out="$("$CLPOOL" record "$@" 2>&1)"
  rc=$?
  [[ $rc == "$want" ]] || { fail "clpool record $* -> exit $rc, want $want"; echo "$out" | tail -5; }
}
has() { [[ "$out" == *"$1"* ]] || { fail "output lacks '$1'"; echo "$out" | tail -8; }; }

for icd in pocl mockcl; do
  echo "=== over $icd"
  if [[ $icd == mockcl ]]; then export OCL_ICD_VENDORS="$MOCKCL"; else unset OCL_ICD_VENDORS; fi
  d="$T/$icd"
  mkdir -p "$d"

  echo "--- a recording: trace written, summarised on stderr, exit 0"
  rec 0 --out "$d/life.trace" -- "$DRIVER" lifecycle
  has "clpool record: trace $d/life.trace"
  has "alloc.sub: 1"
  has "live_at_end: 0"
  has "meta.source: layer"
  has "clpool record: exit status 0"
  # A relative profile file is the one where clpool record started, wherever the program goes.
  printf 'name = mine\noom_at = creation\n' >"$T/mine.profile"
  rec 0 --force --budget 1GiB --profile mine.profile --out "$d/cd.trace" -- /bin/sh -c 'cd / && exec "$0" lifecycle' "$DRIVER"
  has "clpool record: exit status 0"
  rm "$T/mine.profile"
  # The user's CLPOOL_LAYER_REPORT is passed on: the layer writes its report there.
  CLPOOL_LAYER_REPORT="$d/life.report" rec 0 --force --out "$d/life2.trace" -- "$DRIVER" lifecycle
  grep -q "^exit live_blocks 0 live_bytes 0$" "$d/life.report" || fail "no report at $d/life.report"
  # Stacks by default (--stacks all): version 3 (sites and the program's releases), each alloc
  # names a defined stack.
  [[ "$(head -1 "$d/life.trace")" == "clpool-trace 3" ]] || fail "no version-3 header in $d/life.trace"
  grep -q '^# stacks: all$' "$d/life.trace" || fail "no '# stacks: all' in $d/life.trace"
  grep -Eq ' alloc .* 0x[0-9a-f]+ [0-9]+$' "$d/life.trace" || fail "no alloc with a stack id in $d/life.trace"
  grep -q '^frame .* native ' "$d/life.trace" || fail "no native frame in $d/life.trace"
  grep -q ' lifecycle' "$d/life.trace" || grep -q 'main' "$d/life.trace" || fail "the driver's frames are not named"

  echo "--- --stacks none: a version-3 trace without sites"
  rec 0 --stacks none --force --out "$d/life.trace" -- "$DRIVER" lifecycle
  [[ "$(head -1 "$d/life.trace")" == "clpool-trace 3" ]] || fail "--stacks none: not version 3"
  ! grep -q '^stack ' "$d/life.trace" || fail "--stacks none wrote stacks"
  rec 2 --stacks sometimes --out "$d/x.trace" -- "$DRIVER" lifecycle
  has "--stacks: 'sometimes' is not none, native, python or all"
  rec 0 --force --out "$d/life.trace" -- "$DRIVER" lifecycle
  # '-' is no standard output: refused before the program runs (it wrote ./- and summarised stdin).
  rec 2 --out - -- "$DRIVER" lifecycle < /dev/null
  has "--out: '-' is not standard output here"
  rec 2 --budget -- "$DRIVER" lifecycle
  has "--budget: needs a value"
  rec 127 -- ""
  has "cannot run '': the program's name is empty"
  [[ ! -e ./- ]] || fail "--out - wrote a file named '-'"

  echo "--- an existing trace is replaced only with --force"
  before="$(cat "$d/life.trace")"
  rec 2 --out "$d/life.trace" -- "$DRIVER" lifecycle
  has "--out: \"$d/life.trace\" exists: pass --force"
  [[ "$(cat "$d/life.trace")" == "$before" ]] || fail "the trace changed without --force"
  rec 0 --force --out "$d/life.trace" -- "$DRIVER" lifecycle
  has "alloc.sub: 1"

  echo "--- several OpenCL processes: one whole trace each, none mixed or lost"
  rec 0 --out "$d/seq.trace" -- sh -c '"$0" lifecycle && "$0" lifecycle' "$DRIVER"
  has "the program ran 1 more OpenCL process(es)"
  rec 0 --out "$d/par.trace" -- sh -c '"$0" lifecycle & "$0" lifecycle & "$0" lifecycle & wait' "$DRIVER"
  has "the program ran 2 more OpenCL process(es)"
  for t in "$d"/seq.trace "$d"/seq.trace.* "$d"/par.trace "$d"/par.trace.*; do
    "$SUMMARY" "$t" >/dev/null 2>&1 || fail "$t is not a whole trace"
    [[ "$t" != "$d"/par.trace.* || "$out" == *"records to \"$t\""* ]] || fail "$t is not named"
  done
  [[ "$(ls "$d" | grep -c '^seq\.trace')" == 2 && "$(ls "$d" | grep -c '^par\.trace')" == 3 ]] ||
    fail "not one trace per process: $(ls "$d")"
  # A second process whose launcher closed the errors file's descriptor, the number reused by a
  # file of its own: the layer leaves that file alone and says where it records on stderr.
  printf 'precious data\n' > "$d/victim.txt"
  rec 0 --out "$d/closed.trace" -- sh -c '"$0" lifecycle &&
    n=${CLPOOL_LAYER_ERRORS#/dev/fd/}; eval "exec $n>&- $n<\"\$1\""; exec "$0" lifecycle' \
    "$DRIVER" "$d/victim.txt"
  [[ "$(cat "$d/victim.txt")" == "precious data" ]] || fail "the layer wrote into the program's file"
  has "clpool_layer: note: process "
  has "closed.trace\" is another process's trace"

  echo "--- the program's status: 3, and a signal as 128+N; the trace is still there"
  rec 3 --out "$d/three.trace" -- sh -c '"$0" lifecycle && exit 3' "$DRIVER"
  has "clpool record: exit status 3"
  has "alloc.sub: 1"
  rec 143 --out "$d/term.trace" -- sh -c '"$0" lifecycle && kill -TERM $$' "$DRIVER"
  has "killed by signal 15"
  has "alloc.sub: 1"

  echo "--- a trace the layer cannot finish (the file may not grow: a full disk) is an error, not"
  echo "    exit 0; a program's own failure keeps its status"
  out="$( (ulimit -f 1; trap '' XFSZ; "$CLPOOL" record --out "$d/full.trace" -- "$DRIVER" lifecycle) 2>&1)"
  rc=$?
  [[ $rc == 74 ]] || fail "an incomplete trace: exit $rc, want 74"
  has "clpool record: error: the trace is incomplete: the layer could not write to the trace file"
  has "File too large"
  out="$( (ulimit -f 1; trap '' XFSZ; "$CLPOOL" record --force --out "$d/full.trace" -- sh -c '"$0" lifecycle; exit 5' "$DRIVER") 2>&1)"
  rc=$?
  [[ $rc == 5 ]] || fail "an incomplete trace of a failing program: exit $rc, want 5"
  has "the trace is incomplete"
  mkdir -p "$d/tmp"
  TMPDIR="$d/tmp" rec 0 --force --out "$d/life.trace" -- "$DRIVER" lifecycle
  [[ -z "$(ls -A "$d/tmp")" ]] || fail "clpool record left a file in TMPDIR: $(ls -A "$d/tmp")"
  out="$(CLPOOL_LAYER_ERRORS=/tmp/mine "$CLPOOL" record --out "$d/y.trace" -- "$DRIVER" lifecycle 2>&1)"
  [[ $? == 2 ]] || fail "CLPOOL_LAYER_ERRORS in the environment was not refused"
  has "CLPOOL_LAYER_ERRORS is set in the environment; clpool record sets it"

  echo "--- clpool record killed: SIGTERM and SIGINT go on to the program; with SIGKILL the"
  echo "    program dies too (it ran on alone); the trace stays readable either way"
  for sig in TERM INT KILL; do
    rm -f "$d/killed.trace" "$d/killed.out"
    # A script's background job starts with SIGINT ignored, which clpool record keeps (below):
    # started as from a terminal, with every signal at its default.
    env --default-signal "$CLPOOL" record --out "$d/killed.trace" -- "$DRIVER" end_wait >"$d/killed.out" 2>&1 &
    rpid=$!
    for _ in $(seq 300); do grep -q recorded "$d/killed.out" 2>/dev/null && break; sleep 0.1; done
    child="$(pgrep -P "$rpid")"
    [[ -n "$child" ]] || fail "SIG$sig: no program under clpool record"
    kill "-$sig" "$rpid"
    wait "$rpid" 2>/dev/null
    krc=$?
    [[ $krc == $((128 + $(kill -l "$sig"))) ]] || fail "SIG$sig: clpool record exited $krc"
    gone=0
    for _ in $(seq 50); do
      # Gone, or a zombie waiting for a reaper: either way it no longer runs.
      state="$(awk '{print $3}' "/proc/$child/stat" 2>/dev/null)"
      [[ -z "$state" || "$state" == Z ]] && { gone=1; break; }
      sleep 0.1
    done
    [[ $gone == 1 ]] || { fail "SIG$sig: the program ($child) outlived clpool record"; kill -9 "$child"; }
    out="$("$SUMMARY" "$d/killed.trace" 2>&1)" || fail "SIG$sig: the trace is not readable: $out"
    has "alloc.buffer: "
  done

  echo "--- --budget fails allocations as the layer does (layer_driver checks each answer)"
  rec 0 --out "$d/budget.trace" --budget 1MiB -- "$DRIVER" budget
  has "first_alloc_failed: seq 2 size 1 kind buffer"
  has "meta.budget: 1048576"
  rec 0 --out "$d/first_use.trace" --budget=8MiB --profile=nvidia -- "$DRIVER" first_use
  has "meta.budget: 8388608"
  # Without the budget the same scenario fails: the driver expects refusals.
  rec 1 --out "$d/no_budget.trace" -- "$DRIVER" first_use
done
unset OCL_ICD_VENDORS

echo "=== signals sent to clpool reach the program"
"$CLPOOL" record --out "$T/sleep.trace" -- sleep 30 2>"$T/sleep.err" &
pid=$!
sleep 0.5
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[[ $rc == 143 ]] || fail "SIGTERM to clpool: exit $rc, want 143"
grep -q "sleep was killed by signal 15" "$T/sleep.err" || { fail "sleep not killed"; cat "$T/sleep.err"; }

echo "=== OPENCL_LAYERS: the user's layers kept, the clpool layer last (outermost)"
rec 0 --out "$T/env.trace" -- sh -c 'echo "$OPENCL_LAYERS $CLPOOL_LAYER_TRACE" >"$0"' "$T/env.txt"
[[ "$(cat "$T/env.txt")" == "$LAYER $T/env.trace" ]] || fail "environment: $(cat "$T/env.txt")"
OPENCL_LAYERS=/opt/other/liba.so:/opt/b.so rec 0 --out "$T/env.trace" --force -- \
  sh -c 'echo "$OPENCL_LAYERS" >"$0"' "$T/env.txt"
[[ "$(cat "$T/env.txt")" == "/opt/other/liba.so:/opt/b.so:$LAYER" ]] || fail "OPENCL_LAYERS: $(cat "$T/env.txt")"
# A relative --out is the caller's, even if the program changes directory before its first
# OpenCL call.
mkdir -p "$T/elsewhere"
rec 0 --out rel.trace -- sh -c 'cd "$0" && exec "$1" lifecycle' "$T/elsewhere" "$DRIVER"
has "clpool record: trace rel.trace"
has "alloc.sub: 1"
[[ -s "$T/rel.trace" && ! -e "$T/elsewhere/rel.trace" ]] || fail "relative --out not taken from the caller's directory"
rec 0 --out "$T/layer.trace" --layer "$LAYER" -- "$DRIVER" lifecycle
has "alloc.sub: 1"

echo "=== bad input: exit 2, a message naming the setting, nothing run, no file touched"
echo "a,b,c" >"$T/log.csv"
printf 'clpool-trace 1\n# source: layer\n' >"$T/old.trace"
ln -sfn "$T/no/such/x.trace" "$T/dangling.trace"
ln -sf x.trace "$T/report-link"
cp "$(command -v touch)" "$T/touch-copy"
cp "$T/touch-copy" "$T/touch-copy.orig"
snapshot() { ls -la "$T" | grep -v ' \.\.\?$'; md5sum "$T/log.csv" "$T/old.trace" "$T/touch-copy"; }
before="$(snapshot)"
marker="$T/ran"
run_marker=(-- touch "$marker")
bad() {  # bad MESSAGE ARGS...: clpool record ARGS exits 2 saying MESSAGE
  local message="$1"
  shift
  rec 2 "$@"
  has "$message"
  [[ ! -e "$marker" ]] || { fail "the program ran for: $*"; rm -f "$marker"; }
}
bad "--budget: '2GB' is ambiguous: decimal units are not accepted; write 2GiB" --budget 2GB --out "$T/x.trace" "${run_marker[@]}"
bad "--budget: '0' is zero" --budget 0 --out "$T/x.trace" "${run_marker[@]}"
bad "--budget: needs a value" --out "$T/x.trace" --budget
bad "--budget 2 MiB is not more than the headroom of profile 'nvidia', 2688 KiB" --budget 2MiB --profile nvidia --out "$T/x.trace" "${run_marker[@]}"
bad "--profile: profile 'nvidai': no such built-in profile" --budget 1GiB --profile nvidai --out "$T/x.trace" "${run_marker[@]}"
bad "--profile: " --budget 1GiB --profile "$T/log.csv" --out "$T/x.trace" "${run_marker[@]}"
bad "--profile: needs --budget" --profile nvidia --out "$T/x.trace" "${run_marker[@]}"
bad "no program to run" --out "$T/x.trace"
bad "no program to run" --out "$T/x.trace" --
bad "--out: \"$T/log.csv\" exists and is not a trace the layer wrote" --out "$T/log.csv" "${run_marker[@]}"
bad "--out: \"$T/log.csv\" exists and is not a trace the layer wrote" --force --out "$T/log.csv" "${run_marker[@]}"
bad "--out: \"$T/old.trace\" exists: pass --force" --out "$T/old.trace" "${run_marker[@]}"
bad "--out: \"$T\" is not a regular file" --out "$T" "${run_marker[@]}"
bad "--out: cannot create \"$T/no/such/x.trace\"" --out "$T/no/such/x.trace" "${run_marker[@]}"
bad "--out: cannot create \"$T/dangling.trace\" (a symbolic link to \"$T/no/such/x.trace\") in \"$T/no/such\": No such file or directory" --out "$T/dangling.trace" "${run_marker[@]}"
bad "unknown option '--bugdet'; did you mean --budget?" --bugdet 1GiB --out "$T/x.trace" "${run_marker[@]}"
bad "unknown option '--frobnicate' (see clpool record --help)" --frobnicate "${run_marker[@]}"
bad "--force takes no value" --force=yes "${run_marker[@]}"
bad "--out: given twice" --out "$T/x.trace" --out "$T/y.trace" "${run_marker[@]}"
bad "--layer: \"$T/nope.so\" is not a file" --layer "$T/nope.so" --out "$T/x.trace" "${run_marker[@]}"
# Only a library exporting the layer entry points is a layer (issue 21): the program is not run.
bad "--layer: '/etc/passwd' is not a loadable library (" --layer /etc/passwd --out "$T/x.trace" "${run_marker[@]}"
libm="$(/sbin/ldconfig -p 2>/dev/null | awk '/libm\.so\.6 /{print $NF; exit}')"
[[ -n "$libm" ]] || libm=/lib/x86_64-linux-gnu/libm.so.6
bad "--layer: '$libm' is not an OpenCL layer: it does not export clGetLayerInfo, clInitLayer" --layer "$libm" --out "$T/x.trace" "${run_marker[@]}"
CLPOOL_LAYER_BUDGET=1GiB bad "CLPOOL_LAYER_BUDGET is set in the environment" --out "$T/x.trace" "${run_marker[@]}"
CLPOOL_LAYER_TRACE="$T/x.trace" bad "CLPOOL_LAYER_TRACE is set in the environment" --out "$T/x.trace" "${run_marker[@]}"
CLPOOL_LAYER_FAIL_NHT=3 bad "CLPOOL_LAYER_FAIL_NHT" --out "$T/x.trace" "${run_marker[@]}"
CLPOOL_LAYER_FAIL_NTH=x bad "CLPOOL_LAYER_FAIL_NTH" --out "$T/x.trace" "${run_marker[@]}"
OPENCL_LAYERS="$LAYER" bad "OPENCL_LAYERS already loads" --out "$T/x.trace" "${run_marker[@]}"
# A report the layer could not open would hide every platform: refused before the program runs.
CLPOOL_LAYER_REPORT="$T/no/such/r" bad "CLPOOL_LAYER_REPORT \"$T/no/such/r\" cannot be created in $T/no/such: No such file or directory (the layer writes its report there; fix or unset it)" --out "$T/x.trace" "${run_marker[@]}"
CLPOOL_LAYER_REPORT="$T/dangling.trace" bad "CLPOOL_LAYER_REPORT \"$T/dangling.trace\" cannot be created in $T/no/such: No such file or directory" --out "$T/x.trace" "${run_marker[@]}"
CLPOOL_LAYER_REPORT="$T" bad "CLPOOL_LAYER_REPORT \"$T\" is a directory" --out "$T/x.trace" "${run_marker[@]}"
# The layer appends only to a report: never to another file (an earlier trace, a source file).
CLPOOL_LAYER_REPORT="$T/old.trace" bad "CLPOOL_LAYER_REPORT \"$T/old.trace\" exists and is not a report the layer wrote: not appending to it (the layer writes its report there; fix or unset it)" --out "$T/x.trace" "${run_marker[@]}"
# The report is one of clpool record's outputs: never the trace, nor a file it reads.
CLPOOL_LAYER_REPORT="$T/x.trace" bad "CLPOOL_LAYER_REPORT: '$T/x.trace' is also the --out output; give them different files" --out "$T/x.trace" "${run_marker[@]}"
CLPOOL_LAYER_REPORT="$T/./x.trace" bad "CLPOOL_LAYER_REPORT: '$T/./x.trace' is also the --out output" --out "$T/x.trace" "${run_marker[@]}"
CLPOOL_LAYER_REPORT="$T/report-link" bad "CLPOOL_LAYER_REPORT: '$T/report-link' is also the --out output" --out "$T/x.trace" "${run_marker[@]}"
CLPOOL_LAYER_REPORT="$T/touch-copy" bad "CLPOOL_LAYER_REPORT \"$T/touch-copy\" exists and is not a report the layer wrote" --out "$T/x.trace" -- "$T/touch-copy" "$marker"
cmp -s "$T/touch-copy" "$T/touch-copy.orig" || fail "CLPOOL_LAYER_REPORT naming the program changed it"
out="$("$CLPOOL" recrod -- true 2>&1)"; rc=$?
[[ $rc == 2 && "$out" == "clpool: error: unknown command 'recrod'; did you mean record? (see clpool --help)" ]] ||
  fail "clpool recrod: exit $rc: $out"
out="$("$CLPOOL" 2>&1)"; rc=$?
[[ $rc == 2 && "$out" == *"usage: clpool COMMAND"* ]] || fail "clpool alone: exit $rc: $out"
[[ "$(snapshot)" == "$before" ]] || { fail "bad input touched files"; diff <(echo "$before") <(snapshot); }

echo "=== a program that cannot be run: 127"
rec 127 --out "$T/x.trace" -- "$T/no-such-program"
has "cannot run '$T/no-such-program'"
rec 127 --out "$T/x.trace" -- no-such-program-in-path
has "no such program in PATH"
# There but not executable: said so, not "no such program" (issue 21).
printf '#!/bin/sh\necho hi\n' >"$T/not-exec.sh"
chmod 644 "$T/not-exec.sh"
rec 127 --out "$T/x.trace" -- "$T/not-exec.sh"
has "cannot run '$T/not-exec.sh': '$T/not-exec.sh' is not executable (Permission denied)"
mkdir -p "$T/bin-noexec"
cp "$T/not-exec.sh" "$T/bin-noexec/only-here"
PATH="$T/bin-noexec:$PATH" rec 127 --out "$T/x.trace" -- only-here
has "cannot run 'only-here': '$T/bin-noexec/only-here' is not executable"
rec 127 --out "$T/x.trace" -- "$T/bin-noexec"
has "is a directory"
[[ ! -e "$T/x.trace" ]] || fail "a trace was left for a program that never ran"

echo "=== signals ignored where clpool record started stay ignored in the program"
# nohup, or a script's background job: SIGHUP and SIGINT ignored. The program inherits that as it
# would without clpool (it reset them to the default, so a SIGHUP at logout killed the recording).
ign() { grep '^SigIgn:' /proc/self/status | awk '{ print substr($2, length($2)) }'; }
export -f ign
plain="$( (trap '' HUP INT; exec bash -c ign) )"
recorded="$( (trap '' HUP INT; exec "$CLPOOL" record --out "$T/ign.trace" -- bash -c ign) 2>/dev/null)"
[[ -n "$plain" && "$recorded" == "$plain" ]] && echo "ok: ignored signals kept ($plain)" ||
  fail "the program's ignored signals: '$recorded', without clpool '$plain'"
recorded="$("$CLPOOL" record --out "$T/ign.trace" --force -- bash -c ign 2>/dev/null)"
[[ "$recorded" == "$(bash -c ign)" ]] || fail "signals not ignored became ignored: '$recorded'"

echo "=== a program that dies of its out-of-memory keeps its sites"
# sweep_victim crashes writes through the NULL mapping of the buffer the budget refused: the
# layer's exit handler never runs, yet the trace names the native frames of every allocation up
# to the failure (named as the failure was recorded, not at exit).
# (Under AddressSanitizer the write is its SEGV report, and it exits 1.)
crash_rc=139
[[ -n "${ASAN_OPTIONS:-}" ]] && crash_rc=1
OCL_ICD_VENDORS="$MOCKCL" MOCKCL_BACKING=none rec "$crash_rc" --budget 2MiB --profile exact --out "$T/crash.trace" -- "$VICTIM" crashes
grep -aq "^frame [0-9]* native 0 [^ ]*sweep_victim make_filled$" "$T/crash.trace" ||
  { fail "the crashed program's trace does not name make_filled"; grep -a '^frame' "$T/crash.trace" | head -5; }
grep -aq "^frame [0-9]* native 0 [^ ]*sweep_victim main$" "$T/crash.trace" || fail "nor main"
# Started by a relative path, the program's own frames still name its file by its whole path (dladdr
# gives argv[0], which says nothing from another directory; addr2line -e needs the file).
(cd "$(dirname "$VICTIM")" && OCL_ICD_VENDORS="$MOCKCL" MOCKCL_BACKING=none "$CLPOOL" record --budget 2MiB --profile exact --out "$T/relpath.trace" -- ./sweep_victim handles >/dev/null 2>&1)
grep -aq "^frame [0-9]* native 0 $VICTIM make_filled$" "$T/relpath.trace" ||
  { fail "a program started as ./sweep_victim is not named by its path"; grep -a "^frame" "$T/relpath.trace" | head -3; }

echo "=== help"
out="$("$CLPOOL" --help)" && [[ "$out" == *"record"* ]] || fail "clpool --help"
out="$("$CLPOOL" record --help)" && [[ "$out" == *"--budget SIZE"*"Exit status"* ]] || fail "clpool record --help"

finish
