#!/usr/bin/env bash
# Outputs never destroy inputs (issue 17): every output flag refuses the input under any spelling,
# and a writer killed mid-write leaves the previous output intact.
set -u
source "$(dirname "$0")/../dev/testing/test_lib.sh" || exit 1  # fail, die, finish
REPLAY="$(realpath "$1")"
SYNTH="$(realpath "$2")"
EX="$(realpath "$3")"   # the examples directory
T="${TEST_TMPDIR:-/tmp}/no_clobber"
rm -rf "$T" && mkdir -p "$T/sub"

# refused FLAG INPUT OUTPUT ARGS...: exit 2, one line naming FLAG, INPUT byte-identical.
refused() {
  local flag="$1" input="$2" output="$3"
  shift 3
  local before after err rc
  before="$(sha256sum < "$input")"
  err="$("$REPLAY" --no-progress "$@" 2>&1 >/dev/null)"
  rc=$?
  after="$(sha256sum < "$input")"
  [[ $rc == 2 ]] || { fail "$* -> exit $rc, want 2 ($err)"; return; }
  [[ "$err" == *"$flag: '$output' is the same file as the input"* ]] || { fail "$*: message '$err'"; return; }
  [[ "$(printf '%s\n' "$err" | wc -l)" == 1 ]] || { fail "$*: more than one line: $err"; return; }
  [[ "$before" == "$after" ]] || { fail "$*: the input changed"; return; }
  echo "ok: refused $*"
}

cp "$EX/fragmentation.trace" "$T/in.trace"
cp "$EX/rmm_log.csv" "$T/in.csv"
ln "$T/in.trace" "$T/hard.trace"
ln -s "$T/in.trace" "$T/soft.trace"
ln "$T/in.csv" "$T/hard.csv"
ln -s in.csv "$T/soft.csv"
cd "$T/sub"
for out in "$T/in.trace" ../in.trace "$T/hard.trace" "$T/soft.trace"; do
  refused --write-trace "$T/in.trace" "$out" "$T/in.trace" --write-trace "$out"
  refused --write-trace "$T/in.trace" "$out" "$T/in.trace" --write-trace "$out" --write-format binary --capacity 1GiB
  refused --svg "$T/in.trace" "$out" "$T/in.trace" --capacity 1GiB --svg "$out"
  refused --svg "$T/in.trace" "$out" "$T/in.trace" --min-capacity --svg "$out"
done
for out in "$T/in.csv" ../in.csv "$T/hard.csv" "$T/soft.csv"; do
  refused --write-trace "$T/in.csv" "$out" --rmm-csv "$T/in.csv" --write-trace "$out"
  refused --svg "$T/in.csv" "$out" --rmm-csv "$T/in.csv" --capacity 1GiB --svg "$out"
done
# The input named through the link, the output by its own name.
refused --write-trace "$T/in.trace" "$T/in.trace" "$T/soft.trace" --write-trace "$T/in.trace"
# The report appended to the input it reads.
before="$(sha256sum < "$T/in.trace")"
err="$("$REPLAY" --no-progress "$T/in.trace" --capacity 1GiB --json 2>&1 >>"$T/in.trace")"
rc=$?
[[ $rc == 2 && "$err" == *"standard output is the same file as the input"* && "$before" == "$(sha256sum < "$T/in.trace")" ]] \
  && echo "ok: stdout >> input refused" || fail "stdout >> input: exit $rc, '$err'"
# --svg and --write-trace on one file.
err="$("$REPLAY" --no-progress "$T/in.trace" --capacity 1GiB --svg "$T/both" --write-trace "$T/both" 2>&1)"
[[ $? == 2 && "$err" == *"also the --write-trace output"* ]] && echo "ok: one file for two outputs refused" \
  || fail "two outputs on one file: '$err'"
# Every input, not only the trace (issue 21): the --profile file and the --mockcl-so library, by
# every spelling, against --svg and --write-trace.
cp "$EX/../../../device_model/profiles/nvidia.profile" "$T/keep.profile" 2>/dev/null \
  || printf 'name = kept\noom_at = creation\n' >"$T/keep.profile"
printf 'not really a library\n' >"$T/m.so"
ln -s "$T/keep.profile" "$T/link.profile"
ln "$T/m.so" "$T/hard.so"
for out in "$T/keep.profile" ../keep.profile "$T/link.profile"; do
  refused --svg "$T/keep.profile" "$out" "$T/in.trace" --capacity 1GiB --profile ../keep.profile --svg "$out"
  refused --write-trace "$T/keep.profile" "$out" "$T/in.trace" --profile "$T/keep.profile" --write-trace "$out"
done
for out in "$T/m.so" ../m.so "$T/hard.so"; do
  refused --svg "$T/m.so" "$out" "$T/in.trace" --capacity 1GiB --device mockcl --mockcl-so ../m.so --svg "$out"
  refused --write-trace "$T/m.so" "$out" "$T/in.trace" --device mockcl --mockcl-so "$T/m.so" --write-trace "$out"
done
cd "$T"

# Outputs that are not regular files are written as they are, not replaced.
"$REPLAY" --no-progress "$T/in.trace" --write-trace /dev/null && [[ -c /dev/null ]] \
  && echo "ok: --write-trace /dev/null" || fail "--write-trace /dev/null"
n="$("$REPLAY" --no-progress "$T/in.trace" --write-trace /dev/stdout | head -1)"
[[ "$n" == "clpool-trace 1" ]] && echo "ok: --write-trace /dev/stdout" || fail "--write-trace /dev/stdout: '$n'"

# killed WHAT OUTPUT CMD...: runs CMD in the background, SIGKILLs it once its temporary file has
# data, and checks OUTPUT still holds "old output".
killed() {
  local what="$1" output="$2"
  shift 2
  printf 'old output\n' > "$output"
  "$@" & local pid=$!
  local dir base i
  dir="$(dirname "$output")"; base="$(basename "$output")"
  for ((i = 0; i < 2000; i++)); do
    if compgen -G "$dir/.$base.tmp*" >/dev/null && [[ -n "$(find "$dir" -maxdepth 1 -name ".$base.tmp*" -size +64k)" ]]; then
      break
    fi
    sleep 0.01
  done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid"
  local rc=$?
  [[ $rc == 137 ]] || { fail "$what: finished (exit $rc) before it could be killed; make the trace larger"; return; }
  [[ "$(cat "$output")" == "old output" ]] || { fail "$what: killed mid-write, the old output changed"; return; }
  echo "ok: $what killed mid-write, old output intact"
}

"$SYNTH" "$T/big.trace" --events 1000000 || fail "synth"
killed "clpool_synth_trace" "$T/synth_out.trace" "$SYNTH" "$T/synth_out.trace" --events 1000000
killed "--write-trace" "$T/conv.trace" "$REPLAY" --no-progress "$T/big.trace" --write-trace "$T/conv.trace"
# The next run is not disturbed by the temp file the killed one left, and completes the output.
"$REPLAY" --no-progress "$T/big.trace" --write-trace "$T/conv.trace" --write-format binary || fail "rerun after kill"
"$REPLAY" --no-progress "$T/conv.trace" --capacity 1TiB >/dev/null && echo "ok: rerun after kill wrote a whole trace" \
  || fail "the trace written after the kill does not replay"

# The synthesiser refuses a directory and a missing directory with one line.
err="$("$SYNTH" "$T" --events 10 2>&1)"; rc=$?
[[ $rc == 2 && "$err" == *"Is a directory"* ]] && echo "ok: synth to a directory" || fail "synth to a directory: $rc '$err'"

finish
