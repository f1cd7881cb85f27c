#!/usr/bin/env bash
# Keeps the README's main job (tools/main.sh) true: runs its two commands on the shipped,
# layer-recorded trace with the built clpool_replay and checks the lines the README quotes.
set -u
source "$(dirname "$0")/../dev/testing/test_lib.sh" || exit 1  # fail, die, finish
BIN="$1"
TRACE="$2"
MAIN="$3"
T="${TEST_TMPDIR:-/tmp}"

# main.sh must still run these commands on this trace.
for f in "pyopencl_layer.trace" "--device mockcl --capacity 128MiB --semantics deferred --svg" \
         "--compare nopool pool:lb=4 pool:lb=4,trim-ratio=0.25 pool:lb=4,alloc=immediate"; do
  grep -qF -- "$f" "$MAIN" || fail "tools/main.sh no longer contains '$f'"
done

out="$("$BIN" "$TRACE" --device mockcl --capacity 128MiB --semantics deferred --svg "$T/oom.svg" --no-progress 2>&1)"
rc=$?
[[ $rc == 1 ]] || fail "replay exit $rc, want 1 (reproduced out-of-memory)"
for line in "device: mockcl, 128 MiB (134217728 bytes), deferred allocation, nvidia profile" \
            "result: OUT OF MEMORY at event 371 (seq 371, line 374): alloc of 13 MiB (13631488 bytes), id 187" \
            "deferred allocation failed at first use" \
            "active (requested)        1 MiB (1048576 bytes)" \
            "held by the pool          83.01 MiB (87037962 bytes)" \
            "lost to page rounding     27.93 MiB (29288439 bytes)" \
            "hit rate                  82.3% (153 hits, 33 misses)" \
            "allocator calls           33 allocations, 0 frees, 1 failed" \
            "device used / capacity    112 MiB / 128 MiB (134217728 bytes), 13.38 MiB (14024704 bytes) free to the program + 2.62 MiB (2752512 bytes) the driver's headroom" \
            "  + 2.62 MiB (2752512 bytes)    the driver's headroom, never handed out (nvidia profile)" \
            "  + 13.38 MiB (14024704 bytes)  free to the program"$'\n' \
            "  = 128 MiB (134217728 bytes)   capacity" \
            "the failing request needs 14 MiB (14680064 bytes) on the device" \
            "(still committed: the pool never saw a failure; one whose allocator commits at once, alloc=immediate, frees them and retries)"; do
  [[ $out == *"$line"* ]] || fail "replay output lacks '$line'"
done
[[ -s $T/oom.svg ]] && grep -q "<svg" "$T/oom.svg" || fail "no SVG written"

out="$("$BIN" "$TRACE" --device mockcl --semantics deferred --min-capacity --no-progress \
        --compare nopool pool:lb=4 pool:lb=4,trim-ratio=0.25 pool:lb=4,alloc=immediate 2>&1)"
rc=$?
[[ $rc == 0 ]] || fail "--min-capacity exit $rc, want 0"
[[ $out == *"minimum capacity  89 MiB    289 MiB                    115 MiB                    103 MiB"* ]] ||
  fail "min-capacity table changed: $out"

if ((fails)); then echo "$fails failures"; echo "$out"; exit 1; fi
echo "all passed"
