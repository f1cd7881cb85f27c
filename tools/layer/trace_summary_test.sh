#!/usr/bin/env bash
# trace_summary's command line: --help is help (exit 0), bad usage exits 2, a trace is summarised.
set -u
source "$(dirname "$0")/../testing/test_lib.sh" || exit 1  # fail, die, finish
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
finish
