#!/usr/bin/env bash
# hit_loop: a pair count runs; anything else is refused with exit status 2 and a message.
set -u
bin="$1"
fail() { echo "FAIL: $*"; exit 1; }
out=$("$bin" 10) || fail "hit_loop 10 exited $?"
[[ "$out" == "10 pairs, handle sum "* ]] || fail "hit_loop 10 printed: $out"
out=$("$bin" 0) || fail "hit_loop 0 exited $?"
[[ "$out" == "0 pairs, handle sum 0" ]] || fail "hit_loop 0 printed: $out"
for bad in -1 abc 12x "" 99999999999999999999999 "1 2"; do
  # shellcheck disable=SC2086
  err=$("$bin" $bad 2>&1 >/dev/null); rc=$?
  if [[ "$bad" == "" ]]; then err=$("$bin" "" 2>&1 >/dev/null); rc=$?; fi
  [[ $rc == 2 ]] || fail "hit_loop '$bad' exited $rc, want 2"
  [[ "$err" == *"usage: hit_loop"* ]] || fail "hit_loop '$bad' printed: $err"
done
echo PASS
