#!/usr/bin/env bash
# Keeps the README's main job (tools/main.sh) true: runs its two commands on the shipped,
# layer-recorded trace with the built clpool_replay and checks the lines the README quotes.
set -u
BIN="$1"
TRACE="$2"
MAIN="$3"
T="${TEST_TMPDIR:-/tmp}"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# main.sh must still run these commands on this trace.
for f in "pyopencl_layer.trace" "--device mockcl --capacity 128MiB --semantics deferred --svg" \
         "--compare nopool pool:lb=4 pool:lb=4,trim-ratio=0.25"; do
  grep -qF -- "$f" "$MAIN" || fail "tools/main.sh no longer contains '$f'"
done

out="$("$BIN" "$TRACE" --device mockcl --capacity 128MiB --semantics deferred --svg "$T/oom.svg" --no-progress 2>&1)"
rc=$?
[[ $rc == 1 ]] || fail "replay exit $rc, want 1 (reproduced out-of-memory)"
for line in "device: mockcl, 128 MiB (134217728 bytes), deferred allocation" \
            "result: OUT OF MEMORY at event 591 (seq 591, line 594): alloc of 16 MiB (16777216 bytes), id 297" \
            "deferred allocation failed at first use" \
            "held by the pool          126.70 MiB (132851075 bytes)" \
            "hit rate                  86.2% (256 hits, 41 misses)"; do
  [[ $out == *"$line"* ]] || fail "replay output lacks '$line'"
done
[[ -s $T/oom.svg ]] && grep -q "<svg" "$T/oom.svg" || fail "no SVG written"

out="$("$BIN" "$TRACE" --device mockcl --semantics deferred --min-capacity --no-progress \
        --compare nopool pool:lb=4 pool:lb=4,trim-ratio=0.25 2>&1)"
rc=$?
[[ $rc == 0 ]] || fail "--min-capacity exit $rc, want 0"
[[ $out == *"minimum capacity  78 MiB    246 MiB                     88 MiB"* ]] ||
  fail "min-capacity table changed: $out"

if ((fails)); then echo "$fails failures"; echo "$out"; exit 1; fi
echo "all passed"
