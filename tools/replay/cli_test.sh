#!/usr/bin/env bash
# clpool_replay's command line is kind to mistakes: a mistyped flag gets "did you mean", paths are
# taken from where `bazel run` started, --device mockcl leaves no temporary directory behind, and
# --svg says where the picture went and which replay it shows.
set -u
source "$(dirname "$0")/../dev/testing/test_lib.sh" || exit 1  # fail, die, finish
BIN="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
EX="$(cd "$2" && pwd)"
T="${TEST_TMPDIR:-$(mktemp -d)}"

# run RC ARGS...: runs the binary into $out/$rc and checks the exit code.
run() {
  local want="$1"
  shift
  out="$("$BIN" --no-progress "$@" 2>&1)"
  rc=$?
  [[ "$rc" == "$want" ]] || { fail "clpool_replay $* -> exit $rc, want $want"; echo "$out" | head -5; }
}

echo "--- a mistyped flag: one line, a suggestion, exit 2"
run 2 "$EX/fragmentation.trace" --capcity 1GiB
[[ "$out" == "clpool_replay: error: unknown option '--capcity'; did you mean --capacity? (see --help)" ]] ||
  fail "--capcity: got '$out'"
run 2 "$EX/fragmentation.trace" --capacity 1GiB --min-capcity=yes
[[ "$out" == *"did you mean --min-capacity?"* && $(wc -l <<<"$out") == 1 ]] || fail "--min-capcity: got '$out'"
run 2 "$EX/fragmentation.trace" --capacity 1GiB --frobnicate
[[ "$out" == "clpool_replay: error: unknown option '--frobnicate' (see --help)" ]] ||
  fail "--frobnicate: got '$out'"

echo "--- CLI11's mistakes in the tool's words: one line, exit 2 (common/cli11.h)"
run 2 "$EX/fragmentation.trace" --capacity 1GiB --capacity 2GiB
[[ "$out" == "clpool_replay: error: --capacity: given twice" ]] || fail "--capacity twice: got '$out'"
run 2 "$EX/fragmentation.trace" --capacity 1GiB --compare
[[ "$out" == "clpool_replay: error: --compare: needs a value" ]] || fail "bare --compare: got '$out'"
run 2 "$EX/fragmentation.trace" "$EX/fragmentation.trace" --capacity 1GiB
[[ "$out" == "clpool_replay: error: unexpected argument '$EX/fragmentation.trace' (see --help)" ]] ||
  fail "a second trace: got '$out'"
run 2 "$EX/fragmentation.trace" --capacity ""
[[ "$out" == "clpool_replay: error: --capacity: needs a value" ]] || fail "--capacity '': got '$out'"
run 2 "$EX/fragmentation.trace" --capacity 1GiB --svg ""
[[ "$out" == "clpool_replay: error: --svg: needs a value" ]] || fail "--svg '': got '$out'"
run 2 "$EX/fragmentation.trace" --capacity 1GiB --leading-bits 99
[[ "$out" == "clpool_replay: error: --leading-bits: '99' is not a number from 0 to 12" ]] ||
  fail "--leading-bits 99: got '$out'"
run 2 "$EX/fragmentation.trace" --capacity 1GiB --json=x.json
[[ "$out" == "clpool_replay: error: --json takes no value (given 'x.json')" ]] || fail "--json=x.json: got '$out'"
run 2 "$EX/fragmentation.trace" --capacity 1GiB --compare pool nopool pool:lb=4
[[ "$out" == "clpool_replay: error: --compare: 'pool:lb=4' is the same as 'pool' (pool:lb=4)" ]] ||
  fail "--compare pool nopool pool:lb=4: got '$out'"
run 2 "$EX/fragmentation.trace" --capacity 1GiB --no-pool --compare pool
[[ "$out" == "clpool_replay: error: --no-pool excludes --compare (see --help)" ]] || fail "--no-pool --compare: got '$out'"

echo "--- a capacity not above the profile's headroom: refused, naming both (issue 21)"
printf 'name = roomy\nheadroom = 256MiB\n' >"$T/roomy.profile"
run 2 "$EX/fragmentation.trace" --capacity 128MiB --profile "$T/roomy.profile"
[[ "$out" == "clpool_replay: error: --capacity 128 MiB is not more than the headroom of profile 'roomy', 256 MiB: nothing would be usable (give a larger capacity or another profile)" ]] ||
  fail "headroom >= capacity: got '$out'"
run 2 "$EX/fragmentation.trace" --capacity 256MiB --profile "$T/roomy.profile"
[[ "$out" == *"--capacity 256 MiB is not more than the headroom"* ]] || fail "headroom == capacity: got '$out'"

echo "--- relative paths under bazel run are the user's (BUILD_WORKING_DIRECTORY)"
mkdir -p "$T/wd/sub" "$T/elsewhere"
cp "$EX/fragmentation.trace" "$T/wd/sub/x.trace"
cd "$T/elsewhere"
run 2 sub/x.trace --capacity 2GiB
BUILD_WORKING_DIRECTORY="$T/wd" run 0 sub/x.trace --capacity 2GiB --svg out.svg --write-trace sub/copy.trace
[[ -s "$T/wd/out.svg" && -s "$T/wd/sub/copy.trace" ]] || fail "outputs not in BUILD_WORKING_DIRECTORY"
[[ ! -e "$T/elsewhere/out.svg" ]] || fail "out.svg written to the process's directory"
[[ "$out" == *"clpool_replay: --svg: wrote $T/wd/out.svg: the replay at --capacity, pool:lb=4 on 2 GiB"* ]] || fail "--svg message: $out"
BUILD_WORKING_DIRECTORY="$T/wd" run 0 "$T/wd/sub/x.trace" --capacity 2GiB
cd "$T"

echo "--- --svg with --min-capacity says where and which replay"
run 0 "$EX/fragmentation.trace" --profile exact --min-capacity --granule 64MiB --svg "$T/min.svg"
[[ -s "$T/min.svg" ]] || fail "no $T/min.svg"
[[ "$out" == *"clpool_replay: --svg: wrote $T/min.svg: the failing replay one granule below the minimum capacity, pool:lb="*" on "*" MiB"* ]] ||
  { fail "--svg message"; echo "$out"; }

echo "--- progress: none on a stderr that is not a terminal; --progress forces whole lines with the overall count"
search=("$EX/fragmentation.trace" --profile exact --min-capacity --granule 64MiB --compare nopool pool)
quiet_out="$("$BIN" "${search[@]}" 2>"$T/quiet.err")"
[[ ! -s "$T/quiet.err" ]] || { fail "progress written to a non-terminal stderr"; head -3 "$T/quiet.err"; }
loud_out="$("$BIN" "${search[@]}" --progress 2>"$T/loud.err")"
[[ "$loud_out" == "$quiet_out" ]] || fail "--progress changed stdout"
grep -q $'\r' "$T/loud.err" && fail "--progress into a file drew in place (carriage returns)"
lines=$(grep -c '^clpool_replay: progress: ' "$T/loud.err")
[[ $lines == $(wc -l <"$T/loud.err") && $lines -ge 4 ]] || { fail "progress lines"; cat "$T/loud.err"; }
# Every replay's start is a line; the last is the last replay of the last configuration.
[[ "$(tail -1 "$T/loud.err")" == *"pool:lb=4 min-capacity replay "*"; replay $lines of $lines, config 2 of 2, ETA "* ]] ||
  { fail "last progress line: $(tail -1 "$T/loud.err")"; }
grep -q "nopool min-capacity replay 2; replay 2 of ~[0-9]*, config 1 of 2, ETA [0-9]" "$T/loud.err" ||
  { fail "no overall count and ETA in the first configuration"; head -3 "$T/loud.err"; }
run 2 "$EX/fragmentation.trace" --capacity 1GiB --progress
[[ "$out" == *"--no-progress excludes --progress"* ]] || fail "--progress with --no-progress: $out"

echo "--- --device mockcl leaves no mockcl-vendors-* directory, whatever the exit"
V="$T/vendors"
mkdir -p "$V"
count() { find "$V" -maxdepth 1 -name 'mockcl-vendors-*' | wc -l; }
{ cat "$EX/fragmentation.trace"; echo "999999 0 0 1 frobnicate 1 2 buffer 0x1"; } >"$T/bad.trace"
export TMPDIR="$V" TEST_TMPDIR="$V"
run 0 "$EX/pyopencl_pocl.trace" --device mockcl --profile exact --capacity 128MiB
[[ "$out" == *"device: mockcl"* ]] || fail "mockcl run did not say its device: $out"
[[ $(count) == 0 ]] || fail "a clean exit left $(count) vendor directories"
run 1 "$EX/pyopencl_pocl.trace" --device mockcl --profile exact --capacity 1MiB
[[ $(count) == 0 ]] || fail "an out-of-memory exit left $(count) vendor directories"
run 2 "$T/bad.trace" --device mockcl --profile exact --capacity 4GiB
[[ "$out" == *"frobnicate"* ]] || fail "the bad trace was not refused for its bad line: $out"
[[ $(count) == 0 ]] || fail "a bad-input exit left $(count) vendor directories"
run 2 "$EX/pyopencl_pocl.trace" --device mockcl --mockcl-so "$EX/rmm_log.csv" --capacity 1MiB
[[ $(count) == 0 ]] || fail "a refused --mockcl-so left $(count) vendor directories"

echo "--- --device mockcl puts its vendors directory under TMPDIR (not TEST_TMPDIR) when it is set"
mkdir -p "$T/other"
TMPDIR="$T/no-such-dir" TEST_TMPDIR="$T/other" run 2 "$EX/pyopencl_pocl.trace" --device mockcl --capacity 1MiB
[[ "$out" == *"cannot create a temporary directory from $T/no-such-dir/mockcl-vendors-XXXXXX"* ]] ||
  fail "TMPDIR not honoured: $out"
[[ $(find "$T/other" -name 'mockcl-vendors-*' | wc -l) == 0 ]] || fail "a directory went under TEST_TMPDIR"

echo "--- --format: one writer per format, text on standard output unless another is there"
F="$EX/fragmentation.trace"
run 1 "$F" --capacity 1GiB --format json
[[ "$out" == "{"* && "$out" == *'"exit_code": 1'* ]] || fail "--format json: $out"
[[ "$out" == "$("$BIN" --no-progress "$F" --capacity 1GiB --json 2>&1)" ]] || fail "--format json differs from --json"
run 1 "$F" --capacity 1GiB --format svg="$T/f.svg" --format json="$T/f.json"
[[ "$out" == *"configuration pool:lb=4"* && "$out" == *"OUT OF MEMORY"* ]] || fail "text not on stdout: $out"
[[ "$out" == *"--format svg: wrote $T/f.svg: the replay at --capacity"* ]] || fail "svg note: $out"
[[ "$(head -c 4 "$T/f.svg")" == "<svg" && "$(head -c 1 "$T/f.json")" == "{" ]] || fail "--format files"
run 1 --format svg "$F" --capacity 1GiB
[[ "$out" == "<svg"* && "$out" != *"configuration pool"* ]] || fail "--format svg on standard output: ${out:0:200}"
run 2 "$F" --capacity 1GiB --format pdf
[[ "$out" == "clpool_replay: error: --format pdf: unknown format 'pdf' (known: html, json, svg, text)" ]] || fail "unknown format: $out"
run 2 "$F" --capacity 1GiB --format json --format text
[[ "$out" == *"--format json and --format text would all write to standard output"* ]] || fail "two on stdout: $out"
run 2 "$F" --capacity 1GiB --format svg=
[[ "$out" == *"'svg=' names no file"* ]] || fail "empty file: $out"
run 2 "$F" --capacity 1GiB --format json="$F"
[[ "$out" == *"--format json"* && "$(head -c 5 "$F")" != "{" ]] || fail "--format onto the trace: $out"
run 2 "$F" --capacity 1GiB --format svg="$T/same" --format json="$T/same"
[[ "$out" == *"is also the --format svg output"* ]] || fail "two formats, one file: $out"
printf 'name = mine\n' > "$T/mine.profile"
run 2 "$F" --capacity 1GiB --profile "$T/mine.profile" --svg "$T/mine.profile"
[[ "$out" == *"--svg"* && "$(cat "$T/mine.profile")" == "name = mine" ]] || fail "--svg onto --profile: $out"

echo "--- a trace opened more than once: a directory, a FIFO refused before anything opens it (no wait)"
mkfifo "$T/pipe.trace"
out="$(timeout 20 "$BIN" --no-progress "$T/pipe.trace" --capacity 1GiB 2>&1)"; rc=$?
[[ $rc == 2 && "$out" == "clpool_replay: error: $T/pipe.trace: is a FIFO (a named pipe): it can be read only once, and the replay reads its trace more than once; give a file" ]] ||
  fail "a FIFO: exit $rc: $out"
run 2 "$T" --capacity 1GiB
[[ "$out" == "clpool_replay: error: $T: is a directory, not a trace" ]] || fail "a directory: $out"
run 2 --diff "$T/pipe.trace" "$EX/fragmentation.trace"
[[ "$out" == *"pipe.trace: is a FIFO"* ]] || fail "--diff of a FIFO: $out"

echo "--- a version-3 trace: --frees-at, the report names the rule (FORMAT.md 'Two moments of a free')"
# Two 1 MiB blocks: the program releases the first before the second, waits, releases the second;
# the recording driver freed both at the end.
V3="$T/v3.trace"
printf '%s\n' 'clpool-trace 3' '0 0 0 0 alloc 1 1048576 buffer 0' '1 0 0 0 release 1 1048576 buffer 0' \
  '2 0 0 0 alloc 2 1048576 buffer 0' '3 0 0 1 wait 0 0 buffer 0' '4 0 0 0 release 2 1048576 buffer 0' \
  '5 0 0 0 free 1 1048576 buffer 0' '6 0 0 0 free 2 1048576 buffer 0' > "$V3"
for rule_peak in "release:1 MiB" "wait:2 MiB" "driver:2 MiB"; do
  rule="${rule_peak%%:*}"
  run 0 "$V3" --capacity 1GiB --no-pool --profile exact --frees-at "$rule"
  [[ "$out" == *"frees at                  "*"(--frees-at $rule); the trace has 2 releases and 1 wait"$'\n'* ]] ||
    fail "--frees-at $rule: no rule line: $out"
  [[ "$out" == *"peak active               ${rule_peak#*:} ("* ]] || fail "--frees-at $rule: peak: $out"
  [[ "$out" == *"7 (2 alloc, 2 free, 0 alloc_failed, 2 release, 1 wait)"* ]] || fail "counts: $out"
done
run 0 "$V3" --capacity 1GiB --no-pool --profile pocl
[[ "$out" == *"frees at                  the program's next wait after its release"*"(what the pocl profile predicts: its commands finish when the program waits; --frees-at to choose)"* ]] ||
  fail "pocl default: $out"
run 0 "$V3" --capacity 1GiB --no-pool --json
got="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["replay"]["frees_at"])' <<<"$out")"
[[ "$got" == "{'given': False, 'moment': 'release', 'releases_in_trace': 2, 'releases_replayed': 2, 'waits_in_trace': 1, 'waits_replayed': 1}" ]] ||
  fail "json: $got"
# Counts say their scope: an out-of-memory at the second alloc (1 MiB free: with frees at the
# driver, the first block is still live) has seen 1 of the trace's 2 releases and none of its wait.
run 1 "$V3" --capacity 1MiB --no-pool --profile exact --semantics immediate --frees-at driver
[[ "$out" == *"; releases up to the failure: 1 of 2; waits up to the failure: 0 of 1"$'\n'* ]] ||
  fail "counts up to the failure: $out"
run 1 "$V3" --capacity 1MiB --no-pool --profile exact --semantics immediate --frees-at driver --json
got="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["replay"]["frees_at"])' <<<"$out")"
[[ "$got" == "{'given': True, 'moment': 'driver', 'releases_in_trace': 2, 'releases_replayed': 1, 'waits_in_trace': 1, 'waits_replayed': 0}" ]] ||
  fail "json up to the failure: $got"
run 0 "$V3" --min-capacity --granule 1MiB --no-pool --profile exact --frees-at driver
[[ "$out" == *"frees at"*"--frees-at driver"* && "$out" == *"minimum capacity: 2 MiB"* ]] || fail "min-capacity: $out"
run 0 "$V3" --min-capacity --granule 1MiB --compare nopool pool --profile exact
[[ "$out" == *$'\nfrees at the program\'s release'* ]] || fail "--compare table: $out"
run 2 "$V3" --capacity 1GiB --frees-at later
[[ "$out" == *"--frees-at"*"later"* && $(wc -l <<<"$out") == 1 ]] || fail "--frees-at later: $out"
run 0 "$EX/fragmentation.trace" --capacity 8GiB --frees-at release
[[ "$out" != *"frees at"* ]] || fail "a version-1 trace names a rule: $out"
# --write-trace keeps version 3.
run 0 "$V3" --write-trace "$T/v3b.trace" --write-format binary
run 0 "$T/v3b.trace" --capacity 1GiB --no-pool --profile exact --frees-at release
[[ "$out" == *"peak active               1 MiB ("* ]] || fail "binary copy of v3: $out"
# ... and version 4 its first_uses comment, with events or none.
printf 'clpool-trace 4\n# first_uses: buffer\n' >"$T/empty4.trace"
printf '0 0 0 0 alloc 1 4096 buffer 0\n1 0 0 0 use 1 4096 buffer 0\n' | cat "$T/empty4.trace" - >"$T/one4.trace"
for v4 in empty4 one4; do
  run 0 "$T/$v4.trace" --capacity 1GiB --write-trace "$T/$v4.copy.trace"
  [[ "$(head -1 "$T/$v4.copy.trace")" == "clpool-trace 4" ]] && grep -qx "# first_uses: buffer" "$T/$v4.copy.trace" ||
    fail "--write-trace of $v4: $(cat "$T/$v4.copy.trace")"
done
# A block freed before any use is held by the pool with nothing on the device: neither committed
# in "held in other bins" nor in the sum's held bytes, and said so.
printf '%s\n' 'clpool-trace 4' '# first_uses: buffer' '0 0 0 0 alloc 9 41943040 buffer 0' '1 0 0 0 free 9 0 buffer 0' \
  '2 0 0 0 alloc 1 73400320 buffer 0' '3 0 0 0 use 1 73400320 buffer 0' '4 0 0 0 alloc 2 52428800 buffer 0' \
  '5 0 0 0 use 2 52428800 buffer 0' >"$T/held_unused.trace"
run 1 "$T/held_unused.trace" --capacity 100MiB --profile exact --semantics deferred
[[ "$out" == *"when the request arrived (none of it committed: no command used it)"* &&
  "$out" == *"+ 0 bytes                     freed blocks the pool held"* &&
  "$out" == *"and 42.00 MiB (44040191 bytes) in freed blocks the pool holds that no command used"* ]] ||
  fail "a held block never used: $out"
# A first use the recorded run was refused too (the layer's failure comment after the use).
for id in 1 2; do
  printf '%s\n' 'clpool-trace 4' '# first_uses: buffer' '0 0 0 0 alloc 1 4194304 buffer 0' '1 0 0 0 use 1 4194304 buffer 0' \
    "# failure: first use of id $id (4194304 bytes) by clEnqueueFillBuffer: status -4 from the layer" \
    '2 0 0 0 free 1 4194304 buffer 0' >"$T/refused$id.trace"
  run 1 "$T/refused$id.trace" --capacity 2MiB --no-pool --profile exact --semantics deferred
  want="recorded run              also failed here (the trace's failure comment: this first use refused)"
  if [[ $id == 1 ]]; then
    [[ "$out" == *"$want"* ]] || fail "a recorded refusal of the failing use: $out"
  else
    [[ "$out" != *"recorded run"* ]] || fail "another block's refusal taken for this one's: $out"
  fi
done
# ... also after more comments than the 256 the reader keeps (before it, 300 failure comments naming
# block 7, which follow its alloc, not a use of it).
{
  printf '%s\n' 'clpool-trace 4' '# first_uses: buffer' '0 0 0 0 alloc 7 1048576 buffer 0'
  for _ in $(seq 300); do
    echo '# failure: first use of id 7 (1048576 bytes) by clEnqueueFillBuffer: status -4 from the layer'
  done
  printf '%s\n' '1 0 0 0 free 7 1048576 buffer 0' '2 0 0 0 alloc 1 4194304 buffer 0' '3 0 0 0 use 1 4194304 buffer 0' \
    "# failure: first use of id 1 (4194304 bytes) by clEnqueueFillBuffer: status -4 from the layer" \
    '4 0 0 0 free 1 4194304 buffer 0'
} >"$T/refused_late.trace"
run 1 "$T/refused_late.trace" --capacity 2MiB --no-pool --profile exact --semantics deferred
[[ "$out" == *"$want"* ]] || fail "a recorded refusal after 300 comments: $out"

echo "--- a size refusal (-61) in the recorded run: counted, never replayed, at any capacity"
printf '%s\n' 'clpool-trace 1' '0 0 0 0 alloc_failed 1 16777216 buffer 0x1' \
  '# failure: seq 0 status -61 (CL_INVALID_BUFFER_SIZE) from the layer: above CL_DEVICE_MAX_MEM_ALLOC_SIZE, 8388608 bytes' \
  '1 0 0 0 alloc 2 1048576 buffer 0x1' '2 0 0 0 free 2 1048576 buffer 0x1' >"$T/size_refusal.trace"
run 0 "$T/size_refusal.trace" --capacity 8MiB
[[ "$out" == *"events replayed           3 (1 alloc, 1 free, 0 alloc_failed, 1 size refusal (CL_INVALID_BUFFER_SIZE: not replayed))"* &&
  "$out" == *"peak active               1 MiB (1048576 bytes)"* ]] || fail "a size refusal at 8 MiB: $out"
run 0 "$T/size_refusal.trace" --min-capacity --no-pool --profile exact
[[ "$out" == *"minimum capacity: 1 MiB (1048576 bytes)"* ]] || fail "a size refusal in --min-capacity: $out"
run 0 "$T/size_refusal.trace" --write-trace "$T/size_refusal.bin" --write-format binary
run 0 "$T/size_refusal.bin" --capacity 8MiB
[[ "$out" == *"1 size refusal ("* ]] || fail "a size refusal converted to binary: $out"
run 0 "$T/size_refusal.trace" --capacity 64MiB --format json
[[ "$out" == *'"recorded_size_refusals": 1'* && "$out" == *'"recorded_failures_that_fit": 0'* ]] ||
  fail "a size refusal in JSON: $out"

echo "--- --site-frames N: a whole number from 1 to 64, else one line and exit 2"
for v in x 0 -3 2.5 65; do
  run 2 "$EX/growing_cache_layer.trace" --capacity 32MiB --site-frames "$v"
  [[ "$out" == "clpool_replay: error: --site-frames: '$v' is not a whole number of frames from 1 to 64 (see --help)" ]] ||
    fail "--site-frames $v: $out"
done
run 1 "$EX/growing_cache_layer.trace" --capacity 32MiB --site-frames 2
[[ "$out" == *"1. ResultCache.remember (tools/replay/examples/growing_cache.py:30) from serve (tools/replay/examples/growing_cache.py:40)"* ]] ||
  fail "--site-frames 2: $out"

finish
