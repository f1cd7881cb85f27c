#!/usr/bin/env bash
# Runs the clpool_replay binary: exit codes, bad values, every output mode.
set -u
BIN="$1"
EX="$2"   # the examples directory
LAYER_SO="$3"   # an ELF shared library that is not the mock
T="${TEST_TMPDIR:-/tmp}"
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh  # fail, finish, expect_run; from the runfiles root

# expect RC FRAGMENT ARGS...: runs the binary; checks the exit code and that stdout+stderr contain
# FRAGMENT. The cases reason in exact bytes, so they run with --profile exact unless they name one.
expect() {
  local profile=(--profile exact)
  [[ " ${*:3} " == *" --profile "* ]] && profile=()
  expect_run "$1" "$2" "$BIN" --no-progress "${profile[@]}" "${@:3}"
}

CSV="$EX/rmm_log.csv"
TR="$EX/fragmentation.trace"

# Help documents everything, including exit codes.
for f in --capacity --profile --semantics --no-pool --leading-bits --limit --trim-max-held --trim-ratio \
         --min-capacity --granule --compare --json --svg --rmm-csv --write-trace --write-format --device --mockcl-so --host-capacity --max-alloc "Exit codes"; do
  expect 0 "$f" --help
done

# --peak: what was live at the peak and at the end, and which sites held it (a trace with sites).
GCL="$EX/growing_cache_layer.trace"
expect 0 "at the peak (event 500): 43.00 MiB (45089028 bytes) live" "$GCL" --capacity 1GiB --no-pool --peak
expect 0 "sites holding the most device memory at the peak (live blocks):
  1. ResultCache.remember (tools/replay/examples/growing_cache.py:30)
     39 MiB (40894464 bytes) requested, 39 blocks" "$GCL" --capacity 1GiB --no-pool --peak
expect 0 "live at the end (event 559): 0 bytes in 0 blocks" "$GCL" --capacity 1GiB --no-pool --peak
out="$("$BIN" "$GCL" --capacity 1GiB --no-pool --peak --json --no-progress)"
/usr/bin/python3 -c '
import json, sys
r = json.loads(sys.stdin.read())["results"][0]["replay"]
assert r["peak_active_event"] == 500 and r["end_active_bytes"] == 0 and r["end_active_blocks"] == 0, r
assert r["peak_sites"][0]["site"].startswith("ResultCache.remember") and r["peak_sites"][0]["blocks"] == 39, r["peak_sites"][0]
assert r["end_sites"] == [], r["end_sites"]
' <<< "$out" && echo "ok: --peak --json" || { fail "--peak --json"; }
# Without --peak, no peak sites (one pass), but the JSON has the peak's event and the end.
out="$("$BIN" "$GCL" --capacity 1GiB --no-pool --json --no-progress)"
/usr/bin/python3 -c '
import json, sys
r = json.loads(sys.stdin.read())["results"][0]["replay"]
assert "peak_sites" not in r and r["peak_active_event"] == 500 and "end_active_bytes" in r, r
' <<< "$out" && echo "ok: --json without --peak" || { fail "--json without --peak"; }

# The README's first command: the recorded PyOpenCL trace runs out of memory on a 128 MiB deferred
# device, and not on an immediate one (the pool's retry rescues it).
PY="$EX/pyopencl_pocl.trace"
expect 1 "deferred allocation failed at first use" "$PY" --capacity 128MiB --semantics deferred
expect 0 "replayed cleanly" "$PY" --capacity 128MiB
# One spelling of each class of the shared size grammar (common/byte_size_test.cc).
expect 0 "replayed cleanly" "$PY" --capacity 128mib
expect 0 "replayed cleanly" "$PY" --capacity 128m
expect 0 "replayed cleanly" "$PY" --capacity 134217728B
expect 0 "minimum capacity" "$PY" --semantics deferred --min-capacity --compare nopool pool:lb=4 pool:lb=4,trim-ratio=0.25
# alloc=immediate: the pool's allocator commits each block at once, so on the deferred device its
# retry runs (82 MiB against the default pool's 244 MiB; an immediate device's pool needs 82 too).
expect 0 "244 MiB                     82 MiB" "$PY" --semantics deferred --min-capacity --compare pool:lb=4 pool:lb=4,alloc=immediate
expect 2 "configuration 'pool:alloc=deferred': alloc 'deferred' must be device or immediate" "$PY" --capacity 1GiB --compare pool:alloc=deferred

# A trace recorded below a pool (its sizes are PyOpenCL bin sizes) is named as such; the shipped
# layer-recorded trace (the application's own requests) is not.
{
  echo "clpool-trace 1"
  for i in $(seq 1 20); do echo "$((2*i)) 0 0 0 alloc $i 1114111 buffer 0"; echo "$((2*i+1)) 0 0 0 free $i 1114111 buffer 0"; done
} > "$T/pooled.trace"
expect 0 "20 of 20 allocations of 4 KiB or more in the trace have sizes a PyOpenCL-style pool rounds to" "$T/pooled.trace" --capacity 64MiB
out="$("$BIN" "$EX/pyopencl_layer.trace" --no-progress --capacity 1GiB 2>&1)"
[[ "$out" != *"recorded below a memory pool"* ]] && echo "ok: no pool warning on the application's trace" ||
  { fail "pool warning on the shipped trace"; }

# Profiles: nvidia is the default (deferred, pages); a profile is named in the report; a bad one is
# refused before any replay, naming the file, the line and the key.
LT="$EX/pyopencl_layer.trace"
out="$("$BIN" "$LT" --no-progress --semantics deferred --min-capacity --compare nopool pool:lb=4 2>&1)"
if [[ "$out" == *"nvidia profile"* && "$out" == *"89 MiB    289 MiB"* ]]; then echo "ok: default profile is nvidia"
else fail "the default profile is not nvidia's calibrated answer"; echo "$out"; fi
expect 1 "lost to page rounding     8.00 MiB (8388604 bytes)" "$LT" --profile nvidia --capacity 90832896 --no-pool
expect 1 "OUT OF MEMORY at event 1147" "$LT" --profile nvidia --capacity 90832896 --no-pool
expect 0 "exact profile" "$LT" --profile exact --capacity 90832896 --no-pool
expect 2 "no such built-in profile (exact, nvidia, pocl)" "$LT" --profile amd --capacity 1GiB
expect 2 "/no/such.profile: cannot be opened" "$LT" --profile /no/such.profile --capacity 1GiB
expect 2 "not a regular file" "$LT" --profile "$EX/" --capacity 1GiB
printf 'page = 2MiB\npack_limit = 4MiB\n' > "$T/big_pack.profile"
expect 2 "big_pack.profile:2: pack_limit: larger than page (shared requests live in one page; page: line 1)" "$LT" --profile "$T/big_pack.profile" --capacity 1GiB
printf 'name = mine\npage = 2 furlongs\n' > "$T/unit.profile"
expect 2 "unit.profile:2: page: '2 furlongs' has an unknown unit" "$LT" --profile "$T/unit.profile" --capacity 1GiB
printf 'name = mine\nheadroom = 1MiB\n' > "$T/mine.profile"
expect 1 "mine profile" "$LT" --profile "$T/mine.profile" --capacity 64MiB --no-pool

# Clean replay and reproduced out-of-memory.
expect 0 "replayed cleanly" "$TR" --capacity 2GiB
expect 1 "OUT OF MEMORY at event" "$TR" --capacity 1GiB
expect 0 "replayed cleanly" "$TR" --capacity 1GiB --no-pool
expect 0 "replayed cleanly" "$TR" --capacity 1GiB --leading-bits 8
expect 1 "first use" "$TR" --capacity 1100MiB --semantics deferred
expect 1 "pool limit reached" "$TR" --capacity 2GiB --limit 512MiB
expect 0 "replayed cleanly" "$TR" --capacity 2GiB --trim-max-held 0 --trim-ratio 0.5
expect 1 "OUT OF MEMORY" --rmm-csv "$CSV" --capacity 1GiB
expect 0 "minimum capacity: " "$TR" --min-capacity --granule 1MiB
# The figure is said once, in bytes too, not as "246 MiB = 246 MiB".
expect 0 "minimum capacity: 246 MiB (257949696 bytes)" "$EX/pyopencl_layer.trace" --min-capacity --semantics deferred
# A "none" in a --compare table is explained under it.
expect 1 "minimum capacity of pool:lb=4,limit=1MiB: none: " "$EX/pyopencl_layer.trace" --min-capacity --compare nopool pool:lb=4,limit=1MiB
expect 0 "minimum capacity" "$TR" --capacity 2GiB --min-capacity --compare nopool pool:lb=4 pool:lb=2,trim-ratio=0.5
expect 1 "OUT OF MEMORY" "$TR" --capacity 1GiB --compare nopool pool:lb=4
expect 0 "\"exit_code\": 0" "$TR" --capacity 2GiB --json
expect 1 "\"event_index\"" "$TR" --capacity 1GiB --json
cat "$TR" | "$BIN" --no-progress - --capacity 2GiB >/dev/null && echo "ok: stdin" || { fail "stdin"; }
a="$("$BIN" --no-progress --rmm-csv "$EX/rmm_log.csv" --capacity 1GiB --json | grep -v '"input"')"
b="$("$BIN" --no-progress --rmm-csv - --capacity 1GiB --json < "$EX/rmm_log.csv" | grep -v '"input"')"
[[ "$a" == "$b" ]] && echo "ok: --rmm-csv - reads stdin" || { fail "--rmm-csv -"; }

# Pictures.
expect 1 "OUT OF MEMORY" "$TR" --capacity 1GiB --svg "$T/oom.svg"
grep -q "OOM at event" "$T/oom.svg" && grep -q "</svg>" "$T/oom.svg" && echo "ok: svg" || { fail "svg"; }

# Conversion: the RMM CSV as a trace replays the same.
expect 0 "" --rmm-csv "$CSV" --write-trace "$T/rmm.trace"
a="$("$BIN" --no-progress --rmm-csv "$CSV" --capacity 1GiB --json | grep -v -e '"input"' -e '"line"')"
b="$("$BIN" --no-progress "$T/rmm.trace" --capacity 1GiB --json | grep -v -e '"input"' -e '"line"')"
[[ "$a" == "$b" ]] && echo "ok: converted trace replays identically" || { fail "converted replay differs"; }

# The binary form replays exactly like the text it was converted from.
expect 0 "" "$TR" --write-trace "$T/frag.bin" --write-format binary
a="$("$BIN" --no-progress "$TR" --capacity 1GiB --json | grep -v -e '"input"' -e '"line"')"
b="$("$BIN" --no-progress "$T/frag.bin" --capacity 1GiB --json | grep -v -e '"input"' -e '"line"')"
[[ "$a" == "$b" ]] && echo "ok: binary trace replays identically" || { fail "binary replay differs"; }
expect 2 "not in {text,binary}" "$TR" --write-trace "$T/x" --write-format xml

# Determinism: the same trace and configuration give identical reports.
a="$("$BIN" --no-progress "$TR" --capacity 1GiB --json)"
b="$("$BIN" --no-progress "$TR" --capacity 1GiB --json)"
[[ "$a" == "$b" ]] && echo "ok: deterministic" || { fail "reports differ"; }

# Bad values: each gets a clear error and exit code 2.
expect 2 "no input" --capacity 1GiB
expect 2 "--capacity is required" "$TR"
expect 2 "is negative" "$TR" --capacity -1GiB
expect 2 "must be positive" "$TR" --capacity 0
expect 2 "is not a number" "$TR" --capacity lots
expect 2 "--capacity: '4GB' is ambiguous: decimal units are not accepted; write 4GiB" "$TR" --capacity 4GB
expect 2 "unknown unit" "$TR" --capacity 4furlongs
expect 2 "--capacity: '18446744073709551615' is larger than the largest device, 2^62 bytes" "$TR" --capacity 18446744073709551615
expect 2 "whole number" "$TR" --capacity 1.5GiB
expect 2 "larger than 2^64" "$TR" --capacity 99999999999999999999
expect 2 "not in {immediate,deferred,host_oom}" "$TR" --capacity 1GiB --semantics lazy
expect 2 "'13' is not a number from 0 to 12" "$TR" --capacity 1GiB --leading-bits 13
expect 2 "--limit: 'x'" "$TR" --capacity 1GiB --limit x
expect 2 "must be positive" "$TR" --capacity 1GiB --limit 0
expect 2 "--trim-ratio" "$TR" --capacity 1GiB --trim-ratio -0.5
expect 2 "--trim-ratio" "$TR" --capacity 1GiB --trim-ratio nan
# --trim-ratio reads what trim-ratio= of --compare reads: decimal only, the whole text.
expect 2 "--trim-ratio: needs a value" "$TR" --capacity 1GiB --trim-ratio ""
for r in 0x1p-1 " 0.5" "0.5 " 0,5 inf; do
  expect 2 "--trim-ratio: '$r' must be a finite decimal number >= 0" "$TR" --capacity 1GiB --trim-ratio "$r"
  [[ "$r" == *,* ]] && continue  # in --compare a comma ends the option
  expect 2 "trim-ratio '$r' must be a finite number >= 0" "$TR" --capacity 1GiB --compare "pool:trim-ratio=$r"
done
expect 0 "replayed cleanly" "$TR" --capacity 2GiB --trim-ratio 1e-1
# --granule steps --min-capacity's search (and --diff's); with neither it would do nothing.
expect 2 "--granule is the step of --min-capacity's search" "$TR" --capacity 2GiB --granule 256KiB
expect 2 "--granule is the step" "$TR" --trials 1GiB:2GiB:512MiB --granule 256KiB
expect 0 "in steps of 256 KiB" --diff "$TR" "$TR" --granule 256KiB
expect 2 "must be positive" "$TR" --min-capacity --granule 0
expect 2 "--granule: 16777215 TiB is above 2^62 bytes" "$TR" --min-capacity --granule 16777215TiB
# A minimum capacity is written exactly: in bytes alone below a KiB, never rounded.
printf 'clpool-trace 1\n0 0 0 0 alloc 1 3 buffer 0\n' > "$T/three_bytes.trace"
expect 0 "minimum capacity: 3 bytes
  (granule 1 byte, " "$T/three_bytes.trace" --no-pool --min-capacity --granule 1
expect 0 "minimum capacity: 4194304 TiB = 4 EiB" "$TR" --min-capacity --granule 4194304TiB
expect 2 "--write-format needs --write-trace" "$TR" --capacity 1GiB --write-format binary
expect 2 "unknown option 'size'" "$TR" --capacity 1GiB --compare pool:size=3
expect 2 "excludes" "$TR" --capacity 1GiB --no-pool --compare nopool
expect 2 "cannot be combined" "$TR" --capacity 1GiB --no-pool --leading-bits 2
expect 2 "standard input can be read only once" - --min-capacity
expect 2 "--peak and --write-trace need a file" - --capacity 1GiB --peak < "$TR"
# The page reads the trace again: refused before the replay, not "nothing written" and exit 0.
expect 2 "--format html: the page reads the trace again, so it needs a clpool trace file, not standard input" \
  - --capacity 1GiB --html "$T/stdin.html" < "$TR"
expect 2 "--format html: the page reads the trace again, so it needs a clpool trace file (convert the RMM CSV with --write-trace first)" \
  --rmm-csv "$CSV" --capacity 1GiB --html "$T/csv.html"
[[ ! -e "$T/stdin.html" && ! -e "$T/csv.html" ]] || fail "a refused --html wrote a page"
expect 2 "cannot open" "$T/missing.trace" --capacity 1GiB
expect 2 "cannot open" --rmm-csv "$T/missing.csv" --capacity 1GiB

# Bad traces: file and line named, exit code 2.
printf 'clpool-trace 1\n0 0 0 0 alloc 1 10 buffer 0\n1 0 0 0 free 2 10 buffer 0\n' > "$T/unknown_free.trace"
expect 2 "unknown_free.trace:3: free of id 2, which is not live" "$T/unknown_free.trace" --capacity 1GiB
printf 'clpool-trace 1\n0 0 0 0 alloc 1 10 buffer 0\n1 0 0 0 alloc 1 10 buffer 0\n' > "$T/double_alloc.trace"
expect 2 "double_alloc.trace:3: alloc of id 1, which is already live" "$T/double_alloc.trace" --capacity 1GiB
printf 'clpool-trace 7\n' > "$T/v7.trace"
expect 2 "v7.trace:1: unknown trace version '7'" "$T/v7.trace" --capacity 1GiB
printf 'clpool-trace 1\n0 0 0 0 alloc 1 10 buffer 0\n1 0 0 0 alloc 2 1' > "$T/cut.trace"
expect 2 "cut.trace:3: truncated" "$T/cut.trace" --capacity 1GiB
printf '\x7fELF\x02\x01\x01garbage' > "$T/garbage.trace"
expect 2 "garbage.trace:1: " "$T/garbage.trace" --capacity 1GiB
printf 'clpool-trace 1\n0 0 0 0 alloc 1 -5 buffer 0\n' > "$T/neg.trace"
expect 2 "neg.trace:2: field size: '-5' is negative" "$T/neg.trace" --capacity 1GiB
printf 'clpool-trace 1\n0 0 0 0 alloc 1 9223372036854775808 buffer 0\n' > "$T/huge.trace"
expect 2 "above 2^62" "$T/huge.trace" --capacity 1GiB
printf 'Thread,Time,Action,Pointer,Size,Stream\n1,0,allocate,0x10,1,0\n1,0,free,0x20,1,0\n' > "$T/bad.csv"
expect 2 "bad.csv:3: free of pointer '0x20'" --rmm-csv "$T/bad.csv" --capacity 1GiB

# --device: sim and mockcl (the mock ICD found in the runfiles) agree; bad values are clear errors.
expect 1 "device: mockcl, 128 MiB" "$PY" --device mockcl --capacity 128MiB --semantics deferred
expect 1 "deferred allocation failed at first use" "$PY" --device mockcl --capacity 128MiB --semantics deferred
expect 0 "replayed cleanly" "$PY" --device mockcl --capacity 128MiB
expect 1 "at event 0 " "$PY" --device mockcl --capacity 1MiB
expect 1 "CL_OUT_OF_HOST_MEMORY" "$PY" --device mockcl --capacity 1MiB --semantics host_oom
expect 2 "--semantics" "$PY" --capacity 1MiB --semantics lazy
expect 2 "--device: 'gpu' is not sim, mockcl or opencl" "$PY" --device gpu --capacity 1GiB
expect 2 "--mockcl-so: no such file: /nonexistent/libmockcl.so" "$PY" --device mockcl --mockcl-so /nonexistent/libmockcl.so --capacity 1GiB
LIBMOCKCL_SO=/nonexistent/x.so expect 2 "LIBMOCKCL_SO: no such file: /nonexistent/x.so" "$PY" --device mockcl --capacity 1GiB
# A wrong library is refused before the ICD loader sees it, naming the flag or variable.
printf 'clpool-trace 1\n' > "$T/tiny.trace"
expect 2 "--mockcl-so: '/etc/passwd' is not an ELF shared library" "$PY" --device mockcl --mockcl-so /etc/passwd --capacity 1MiB
expect 2 "--mockcl-so: '$T/tiny.trace' is not an ELF shared library" "$PY" --device mockcl --mockcl-so "$T/tiny.trace" --capacity 1MiB
expect 2 "--mockcl-so: '$LAYER_SO' is not the mockcl ICD: it does not export clIcdGetPlatformIDsKHR" "$PY" --device mockcl --mockcl-so "$LAYER_SO" --capacity 1MiB
expect 2 "--mockcl-so: '$T' is a directory" "$PY" --device mockcl --mockcl-so "$T" --capacity 1MiB
LIBMOCKCL_SO=/etc/passwd expect 2 "LIBMOCKCL_SO: '/etc/passwd' is not an ELF shared library" "$PY" --device mockcl --capacity 1MiB
LIBMOCKCL_SO="$LAYER_SO" expect 2 "LIBMOCKCL_SO: '$LAYER_SO' is not the mockcl ICD" "$PY" --device mockcl --capacity 1MiB
# MOCKCL_* left in the environment neither fault the replay nor refuse the platform.
MOCKCL_FAULTS=nth:clCreateBuffer:1 expect 0 "replayed cleanly" "$PY" --device mockcl --capacity 128MiB
MOCKCL_FAULTS=nth:clCreateBuffer:1 expect 0 "ignoring MOCKCL_FAULTS from the environment" "$PY" --device mockcl --capacity 128MiB
MOCKCL_SCHEDULE=deferred MOCKCL_DEVICES=nonsense MOCKCL_CALL_LOG=/nonexistent/log expect 0 "replayed cleanly" "$PY" --device mockcl --capacity 128MiB
MOCKCL_FAULTS=nth:clCreateBuffer:1 expect 1 "deferred allocation failed at first use" "$PY" --device mockcl --capacity 128MiB --semantics deferred
expect 2 "--mockcl-so needs --device mockcl" "$PY" --mockcl-so /nonexistent/libmockcl.so --capacity 1GiB

# host (ALLOC_HOST_PTR) blocks: charged to the host budget, not the device, on both devices.
printf 'clpool-trace 1\n0 0 0 0 alloc 1 3000 host 0x10\n1 0 0 0 alloc 2 1000 buffer 0x1\n2 0 0 0 free 1 3000 host 0x10\n3 0 0 0 free 2 1000 buffer 0x1\n' > "$T/host.trace"
for d in sim mockcl; do
  expect 0 "peak host (pinned)        2.93 KiB (3000 bytes) in 1 host block" "$T/host.trace" --device $d --no-pool --capacity 1000
  expect 1 "host-pinned budget exceeded" "$T/host.trace" --device $d --no-pool --capacity 1000 --host-capacity 2000
done
expect 2 "--host-capacity" "$T/host.trace" --capacity 1000 --host-capacity -5

# --max-alloc: on both devices, a request above it is refused for its size where the profile
# enforces it (exact, pocl), never where it does not (nvidia); the pool serves the bin that
# straddles it at the request's own size; bad values and a real device are refused.
printf 'clpool-trace 1\n0 0 0 0 alloc 1 3000 buffer 0x1\n1 0 0 0 free 1 3000 buffer 0x1\n2 0 0 0 alloc 2 5000 buffer 0x1\n3 0 0 0 free 2 5000 buffer 0x1\n' > "$T/max_alloc.trace"
for d in sim mockcl; do
  expect 1 "result: REFUSED FOR ITS SIZE at event 2 (seq 2, line 4): alloc of 4.88 KiB (5000 bytes), id 2" "$T/max_alloc.trace" --device $d --capacity 1MiB --max-alloc 4000
  expect 1 "CL_INVALID_BUFFER_SIZE: 5000 bytes is above the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE, 4000 bytes, which the profile enforces" "$T/max_alloc.trace" --device $d --capacity 1MiB --max-alloc 4000 --no-pool
  expect 1 "REFUSED FOR ITS SIZE                   REFUSED FOR ITS SIZE" "$T/max_alloc.trace" --device $d --capacity 1MiB --max-alloc 4000 --compare nopool pool
  expect 0 "max alloc 3.91 KiB (4000 bytes)" "$T/max_alloc.trace" --device $d --capacity 64MiB --max-alloc 4000 --profile nvidia
  # 3000 in its bin of 3071 bytes, held; 5000 at its own size (its bin, 5119, is above 5000)
  # and given back at its free: 8071 bytes at the peak, one free.
  expect 0 "peak managed              7.88 KiB (8071 bytes)" "$T/max_alloc.trace" --device $d --capacity 1MiB --max-alloc 5000
  expect 0 "allocator calls           2 allocations, 1 free, 0 failed" "$T/max_alloc.trace" --device $d --capacity 1MiB --max-alloc 5000
done
expect 0 "peak managed              8.00 KiB (8190 bytes)" "$T/max_alloc.trace" --capacity 1MiB
expect 1 "minimum capacity of pool:lb=4: none: a request is above the device's maximum allocation (event 2), which no capacity changes" "$T/max_alloc.trace" --min-capacity --max-alloc 4000 --compare nopool pool
out="$("$BIN" "$T/max_alloc.trace" --capacity 1MiB --max-alloc 4000 --json --no-progress --profile exact)"
/usr/bin/python3 -c '
import json, sys
r = json.loads(sys.stdin.read())["results"][0]["replay"]
assert r["max_alloc"] == 4000 and r["oom"]["refused_for_size"] is True, r
assert "capacity_sum" not in r["oom"], r["oom"]
' <<<"$out" || fail "--max-alloc JSON"
out="$("$BIN" "$T/max_alloc.trace" --capacity 1MiB --json --no-progress --profile exact)"
/usr/bin/python3 -c '
import json, sys
r = json.loads(sys.stdin.read())["results"][0]["replay"]
assert r["max_alloc"] is None and r["ok"], r
' <<<"$out" || fail "no --max-alloc JSON"
expect 1 "trials: 2 capacities from 1 MiB to 2 MiB in steps of 1 MiB: 0 clean, 0 out of memory, 2 refused for their size
  1 MiB (1048576 bytes): refused for its size at event 2 (4.88 KiB requested, above the device's maximum allocation)" "$T/max_alloc.trace" --trials 1MiB:2MiB:1MiB --max-alloc 4000
# --diff: a replay refused for its size stops there; the text says so, and the gate fails for the
# new trace (its figures would compare a cut-short replay).
{ cat "$T/max_alloc.trace"; printf '4 0 0 0 alloc 3 3000 buffer 0x1\n'; } > "$T/max_alloc_new.trace"
expect 1 "pool:lb=4: the new trace's event 2 is above the device's maximum allocation: its figures stop there" --diff "$T/max_alloc.trace" "$T/max_alloc_new.trace" --max-alloc 4000 --max-growth 5%
expect 1 "exceeded: pool:lb=4: the new trace's event 2 is above the device's maximum allocation" --diff "$T/max_alloc.trace" "$T/max_alloc_new.trace" --max-alloc 4000 --max-growth 5%
expect 0 "device: sim, immediate allocation, exact profile, max alloc 5000 B;" --diff "$T/max_alloc.trace" "$T/max_alloc_new.trace" --max-alloc 5000 --max-growth 500%
expect 2 "--max-alloc: must be positive, got '0'" "$T/max_alloc.trace" --capacity 1MiB --max-alloc 0
expect 2 "--max-alloc: '4000x' has an unknown unit" "$T/max_alloc.trace" --capacity 1MiB --max-alloc 4000x
expect 2 "--max-alloc: " "$T/max_alloc.trace" --capacity 1MiB --max-alloc 8EiB
expect 2 "--max-alloc needs --device sim or mockcl: a real device has its own CL_DEVICE_MAX_MEM_ALLOC_SIZE" "$T/max_alloc.trace" --capacity 1MiB --max-alloc 4000 --device opencl

# What the report says of the trace is of the whole trace, past the failure: its use events (the
# replay applied 2 of 4), and how it ended: a recorder's zero-filled tail with blocks live is noted.
{ printf 'clpool-trace 4\n# first_uses: buffer\n'
  printf '%s\n' "0 0 0 0 alloc 1 3000 buffer 0" "1 0 0 0 use 1 3000 buffer 0" \
    "2 0 0 0 alloc 2 3000 buffer 0" "3 0 0 0 use 2 3000 buffer 0" "4 0 0 0 alloc 3 10 buffer 0" \
    "5 0 0 0 use 3 10 buffer 0" "6 0 0 0 alloc 4 10 buffer 0" "7 0 0 0 use 4 10 buffer 0"
  head -c 300 /dev/zero; } > "$T/cut_off.trace"
expect 1 "first uses                the trace records them (buffer; 4 use events, 2 up to the failure)" "$T/cut_off.trace" --capacity 4000 --no-pool --semantics deferred
expect 0 "trace end                 cut off: the trace ends in the zero-filled rest of its recorder's file, not at the program's normal exit (it was killed, crashed or called _exit), with 4 blocks still live" "$T/cut_off.trace" --capacity 1MiB --no-pool --semantics deferred
out="$("$BIN" "$T/cut_off.trace" --capacity 4000 --no-pool --semantics deferred --profile exact --json --no-progress)"
/usr/bin/python3 -c '
import json, sys
r = json.loads(sys.stdin.read())["results"][0]["replay"]
assert r["first_uses"] == {"kinds": "buffer", "use_events": 2, "use_events_in_trace": 4}, r["first_uses"]
assert r["trace_cut_off"] is True and r["live_blocks_at_trace_end"] == 4, r
' <<<"$out" && echo "ok: the JSON counts the whole trace" || fail "whole-trace counts in the JSON: $out"
out="$("$BIN" "$EX/growing_cache_layer.trace" --capacity 1GiB --no-pool --no-progress)"
[[ $out != *"trace end"* ]] && echo "ok: a trace that ended normally has no note" || fail "trace end note on a normal trace"

# Counted words and one unit per line: "1 byte" beside "2 bytes", "1 valid event"; a file that
# cannot be opened has no line 0.
printf 'clpool-trace 1\n0 0 0 0 alloc 1 1 buffer 0\n1 0 0 0 alloc 2 2 buffer 0\n' > "$T/tiny.trace"
expect 1 "device used / capacity    1 byte / 2 bytes, 1 byte free to the program" "$T/tiny.trace" --capacity 2 --semantics immediate
expect 1 "; active 1 byte (1 rounded)" "$T/tiny.trace" --capacity 2 --semantics immediate
printf 'clpool-trace 1\n0 0 0 0 alloc 1 1 buffer 0\n1 0 0 0 alloc 1 1 buffer 0\n' > "$T/dup.trace"
expect 2 "clpool_replay: 1 valid event came before it" "$T/dup.trace" --capacity 1MiB
expect 2 "clpool_replay: error: $T/no-such.trace: cannot open: No such file or directory" "$T/no-such.trace" --capacity 1MiB

finish
echo "all passed"
