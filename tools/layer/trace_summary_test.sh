#!/usr/bin/env bash
# trace_summary's command line: --help is help (exit 0), bad usage exits 2, a trace is summarised.
set -u
source "$(dirname "$0")/../dev/testing/test_lib.sh" || exit 1  # fail, die, finish
BIN="$1"
TRACE="$2"
check() {  # check WANT_RC FRAGMENT ARGS...
  local want="$1" fragment="$2" out rc
  shift 2
  out="$("$BIN" "$@" 2>&1)"
  rc=$?
  [[ $rc == "$want" ]] || fail "trace_summary $* -> exit $rc, want $want: $out"
  [[ "$out" == *"$fragment"* ]] || fail "trace_summary $*: output lacks '$fragment': $out"
}
check 0 "usage: trace_summary TRACE" --help
check 0 "usage: trace_summary TRACE" -h
out="$("$BIN" --help 2>/dev/null)"
[[ "$out" == *"Exit status"* ]] || fail "--help does not go to stdout"
check 2 "usage: trace_summary TRACE"
check 2 "trace_summary: unknown option '--frobnicate'" --frobnicate
check 2 "usage: trace_summary TRACE" "$TRACE" "$TRACE"
check 0 "events: " "$TRACE"
check 1 "trace_summary: " /nonexistent/x.trace
# Version 3: the program's releases and waits, and the peak with each block free at its release
# (two 1 MiB blocks the driver freed together at the end; the program held one at a time).
v3="$TEST_TMPDIR/v3.trace"
printf '%s\n' 'clpool-trace 3' '0 0 0 0 alloc 1 1048576 buffer 0' '1 0 0 0 release 1 1048576 buffer 0' \
  '2 0 0 0 alloc 2 1048576 buffer 0' '3 0 0 0 release 2 1048576 buffer 0' '4 0 0 1 wait 0 0 buffer 0' \
  '5 0 0 0 free 1 1048576 buffer 0' '6 0 0 0 free 2 1048576 buffer 0' > "$v3"
out="$("$BIN" "$v3")"
for want in "peak_device_bytes: 2097152" "release: 2" "wait: 1" "peak_device_bytes_at_release: 1048576"; do
  [[ "$out" == *"$want"* ]] || fail "version 3 summary lacks '$want': $out"
done
[[ "$("$BIN" "$TRACE")" != *"release:"* ]] || fail "a version-1 summary has release lines"
# A first use the device refused (the layer's "failure" comment) is counted, and the first named.
fu="$TEST_TMPDIR/first_use.trace"
printf '%s\n' 'clpool-trace 3' '# source: layer' '0 0 0 0 alloc 1 1048576 buffer 0' '1 0 0 0 alloc 2 2097152 buffer 0' \
  '# failure: first use of id 2 (2097152 bytes) by clEnqueueFillBuffer: status -4 from the layer: budget 2097152 bytes, 1048576 committed (nvidia profile)' \
  '# failure: first use of id 2 (2097152 bytes) by clEnqueueWriteBuffer: status -4 from the layer: budget 2097152 bytes, 1048576 committed (nvidia profile)' \
  '2 0 0 0 free 2 2097152 buffer 0' '3 0 0 0 free 1 1048576 buffer 0' > "$fu"
out="$("$BIN" "$fu")"
for want in "alloc_failed: 0" "first_use_failed: 2" "first_first_use_failed: id 2 (2097152 bytes) by clEnqueueFillBuffer"; do
  [[ "$out" == *"$want"* ]] || fail "first-use summary lacks '$want': $out"
done
[[ "$out" != *"meta.failure"* ]] || fail "failure comments printed as metadata: $out"
[[ "$("$BIN" "$v3")" != *"first_use_failed"* ]] || fail "a trace without refused first uses has first_use_failed"
# More refusals than the 256 comments the reader keeps as metadata: every one is counted.
many="$TEST_TMPDIR/many.trace"
{
  printf '%s\n' 'clpool-trace 3' '0 0 0 0 alloc 1 2097152 buffer 0'
  for _ in $(seq 300); do
    echo '# failure: first use of id 1 (2097152 bytes) by clEnqueueFillBuffer: status -4 from the layer: budget 1 bytes, 0 committed (nvidia profile)'
  done
  echo '1 0 0 0 free 1 2097152 buffer 0'
} >"$many"
out="$("$BIN" "$many")"
[[ "$out" == *"first_use_failed: 300"$'\n'* ]] || fail "300 refusals: $out"
# Version 4: the first uses, and the peak with each buffer counted from its first use (1 MiB and
# 2 MiB buffers, never used at once; a 4 MiB one never used; SVM, not in first_uses, from its
# alloc). Tabs separate the comment's words as spaces do.
v4="$TEST_TMPDIR/v4.trace"
printf '%s\n' 'clpool-trace 4' $'# first_uses: \tbuffer' '0 0 0 0 alloc 1 1048576 buffer 0' \
  '1 0 0 0 alloc 2 2097152 buffer 0' '2 0 0 0 alloc 3 4194304 buffer 0' '3 0 0 0 alloc 4 65536 svm 0' \
  '4 0 0 0 use 1 1048576 buffer 0' '5 0 0 0 use 1 1048576 buffer 0' '6 0 0 0 free 1 1048576 buffer 0' \
  '7 0 0 0 use 2 2097152 buffer 0' '8 0 0 0 free 2 2097152 buffer 0' '9 0 0 0 free 3 4194304 buffer 0' > "$v4"
out="$("$BIN" "$v4")"
for want in "peak_device_bytes: 7405568" "use: 3" "peak_device_bytes_at_first_use: 2162688"; do
  [[ "$out" == *"$want"* ]] || fail "version 4 summary lacks '$want': $out"
done
[[ "$("$BIN" "$v3")" != *"at_first_use"* ]] || fail "a version-3 summary has a first-use peak"
# A first use the device refused (its failure comment right after it) takes nothing; the retry
# that the device took does.
refused="$TEST_TMPDIR/refused4.trace"
printf '%s\n' 'clpool-trace 4' '# first_uses: buffer' '0 0 0 0 alloc 1 8388608 buffer 0' '1 0 0 0 use 1 8388608 buffer 0' \
  '# failure: first use of id 1 (8388608 bytes) by clEnqueueFillBuffer: status -4 from the layer' \
  '2 0 0 0 alloc 2 1048576 buffer 0' '3 0 0 0 use 2 1048576 buffer 0' '4 0 0 0 free 2 1048576 buffer 0' \
  '5 0 0 0 free 1 8388608 buffer 0' > "$refused"
out="$("$BIN" "$refused")"
for want in "peak_device_bytes_at_first_use: 1048576" "first_use_failed: 1"; do
  [[ "$out" == *"$want"* ]] || fail "refused first use: lacks '$want': $out"
done
printf '%s\n' '6 0 0 0 alloc 3 4194304 buffer 0' '7 0 0 0 use 3 4194304 buffer 0' \
  '# failure: first use of id 3 (4194304 bytes) by clEnqueueFillBuffer: status -4 from the layer' \
  '8 0 0 0 use 3 4194304 buffer 0' '9 0 0 0 free 3 4194304 buffer 0' >> "$refused"
out="$("$BIN" "$refused")"
for want in "peak_device_bytes_at_first_use: 4194304" "first_use_failed: 2"; do
  [[ "$out" == *"$want"* ]] || fail "a refused first use retried: lacks '$want': $out"
done
finish
