#!/usr/bin/env bash
# hit_loop: a pair count runs; anything else is refused with exit status 2 and a message.
set -u
source "$(dirname "$0")/../testing/test_lib.sh" || exit 1  # fail, die, finish
bin="$1"
expect_runs() {  # expect_runs PAIRS OUTPUT_PREFIX
  local out
  out=$("$bin" "$1") || die "hit_loop $1 exited $?"
  [[ "$out" == "$2"* ]] || die "hit_loop $1 printed: $out"
}
expect_refused() {  # expect_refused ARG...
  local err rc
  err=$("$bin" "$@" 2>&1 >/dev/null)
  rc=$?
  [[ $rc == 2 ]] || die "hit_loop $* exited $rc, want 2"
  [[ "$err" == *"usage: hit_loop"* ]] || die "hit_loop $* printed: $err"
}
expect_runs 10 "10 pairs, handle sum "
expect_runs 0 "0 pairs, handle sum 0"
expect_refused -1
expect_refused abc
expect_refused 12x
expect_refused ""
expect_refused 99999999999999999999999
expect_refused 1 2
echo PASS
