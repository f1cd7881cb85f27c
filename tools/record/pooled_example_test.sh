#!/usr/bin/env bash
# The second recorded example (tools/replay/examples/pyopencl_pooled*): both shipped traces parse
# strictly, and the replay the README shows gives its figures, with the "recorded below a pool"
# warning for the layer's trace of the pooled program and not for the application-level trace.
#   pooled_example_test.sh CLPOOL_REPLAY TRACE_SUMMARY EXAMPLES_DIR
set -u
source "$(dirname "$0")/../dev/testing/test_lib.sh" || exit 1  # fail, die, finish
REPLAY="$1"
SUMMARY="$2"
EX="$3"
warning="the trace seems to be recorded below a memory pool"

for t in pyopencl_pooled_layer pyopencl_pooled_app; do
  "$SUMMARY" "$EX/$t.trace" >/dev/null || fail "$t.trace does not parse"
done
out="$("$SUMMARY" "$EX/pyopencl_pooled_app.trace")"
[[ "$out" == *"meta.source: clpool.record"* && "$out" == *"live_at_end: 0"* ]] || fail "app trace: $out"
out="$("$SUMMARY" "$EX/pyopencl_pooled_layer.trace")"
[[ "$out" == *"meta.source: layer"* ]] || fail "layer trace: $out"

out="$("$REPLAY" --no-progress "$EX/pyopencl_pooled_layer.trace" --min-capacity --compare nopool pool:lb=4 2>&1)"
[[ "$out" == *"$warning"* ]] || { fail "no pool warning on the layer trace"; echo "$out"; }
[[ "$out" == *"minimum capacity  139 MiB    139 MiB"* ]] || { fail "layer trace figures"; echo "$out"; }
out="$("$REPLAY" --no-progress "$EX/pyopencl_pooled_app.trace" --min-capacity --compare nopool pool:lb=4 2>&1)"
[[ "$out" != *"$warning"* ]] || { fail "pool warning on the application-level trace"; echo "$out"; }
[[ "$out" == *"minimum capacity  47 MiB    139 MiB"* ]] || { fail "app trace figures"; echo "$out"; }
finish
