#!/usr/bin/env bash
# tools/main.sh --help explains itself without running anything (no setup, no bazel); a bad
# argument exits 2.
set -u
source "$(dirname "$0")/dev/testing/test_lib.sh" || exit 1  # fail, die, finish
MAIN="$1"
# A bazel that records being called: --help must not reach it.
mkdir -p "$TEST_TMPDIR/bin"
printf '#!/bin/sh\ntouch "%s/bazel-called"\nexit 3\n' "$TEST_TMPDIR" >"$TEST_TMPDIR/bin/bazel"
chmod +x "$TEST_TMPDIR/bin/bazel"
export PATH="$TEST_TMPDIR/bin:$PATH"
out="$(bash "$MAIN" --help 2>&1)"; rc=$?
[[ $rc == 0 ]] || fail "--help exited $rc"
[[ "$out" == *"usage: tools/main.sh"* && "$out" == *"Exit status"* ]] || fail "--help said: $out"
[[ "$out" != *"clpool setup"* ]] || fail "--help ran setup"
out="$(bash "$MAIN" --frobnicate 2>&1)"; rc=$?
[[ $rc == 2 && "$out" == *"unknown argument '--frobnicate'"* ]] || fail "--frobnicate: exit $rc: $out"
[[ ! -e "$TEST_TMPDIR/bazel-called" ]] || fail "bazel was run"
finish
