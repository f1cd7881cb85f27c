#!/usr/bin/env bash
# --device opencl on mockcl loaded as an ordinary ICD (OCL_ICD_VENDORS, MOCKCL_DEVICES; not through
# the control API), which enforces its memory: the answers equal --device mockcl's for the same
# profile, and the report names the device rather than a profile. POCL, which does not enforce,
# is refused. Every bad target, capacity or --profile is refused with exit 2 and a clear message.
set -u
BIN="$1"
SO="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
EX="$3"
T="${TEST_TMPDIR:-/tmp}"
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh  # fail, finish, expect_run, mockcl_icd; from the runfiles root
mockcl_icd "$T/icd" "$SO"
TR="$EX/pyopencl_layer.trace"

# real ARGS...: clpool_replay on the mock as a real device (a 1 GiB card, the profile in $PROFILE).
real() { OCL_ICD_VENDORS="$T/icd" MOCKCL_DEVICES="gpu-1g:profile=$PROFILE" "$BIN" --no-progress "$@" 2>&1; }
mock() { env -u MOCKCL_DEVICES "$BIN" --no-progress --device mockcl --mockcl-so "$SO" --profile "$PROFILE" "$@" 2>&1; }

same() {
  local what="$1"
  shift
  local a b
  # The header names the device (a real one by its name, the mock by its profile): the rest must agree.
  a="$(real "$TR" --device opencl "$@" | grep -v '^clpool_replay: device' | grep -v '^input ')"
  b="$(mock "$TR" "$@" | grep -v '^input ')"
  if [[ "$a" == "$b" && -n "$a" ]]; then echo "ok: $PROFILE $what"
  else fail "$PROFILE $what: opencl and mockcl differ"; diff <(echo "$a") <(echo "$b") | head -20; fi
}

for case in nvidia:128MiB exact:64MiB; do
  PROFILE="${case%%:*}"
  cap="${case#*:}"
  same "min capacity" --min-capacity --granule 2MiB --compare nopool pool:lb=4 pool:lb=4,trim-ratio=0.25
  # At a capacity where both run out of memory: the failing event and the pool's figures.
  a="$(real "$TR" --device opencl --capacity "$cap" --json)"
  b="$(mock "$TR" --capacity "$cap" --json)"
  for key in event_index requested_bytes rounded_bytes active_bytes held_bytes managed_bytes; do
    va="$(echo "$a" | grep -m1 "\"$key\"")"; vb="$(echo "$b" | grep -m1 "\"$key\"")"
    if [[ -n "$va" && "$va" == "$vb" ]]; then echo "ok: $PROFILE $cap $key"
    else fail "$PROFILE $cap $key: '$va' vs '$vb'"; fi
  done
done

# A device whose contexts take memory and which says how much is free (as NVIDIA's driver and NVML
# do; here mockcl's context_cost and AMD's free-memory query): the free memory is read with a
# context open, so the answers are the same as on a device whose contexts cost nothing.
PROFILE=nvidia
real() { OCL_ICD_VENDORS="$T/icd" MOCKCL_DEVICES="gpu-1g:profile=$PROFILE,context_cost=300m,free_query=amd" "$BIN" --no-progress "$@" 2>&1; }
same "min capacity, contexts taking 300 MiB" --min-capacity --granule 2MiB --compare nopool pool:lb=4
out="$(real "$TR" --device opencl --capacity 128MiB)"
for want in "clpool_replay: device mockcl / mockcl gpu-1g, 1073741824 bytes free at start (measured: CL_DEVICE_GLOBAL_FREE_MEMORY_AMD)" \
  "clpool_replay: device mockcl / mockcl gpu-1g, 759169024 bytes free with a context open (1073741824 before it; measured: CL_DEVICE_GLOBAL_FREE_MEMORY_AMD)" \
  "  free memory at start      724 MiB (759169024 bytes) (queried: CL_DEVICE_GLOBAL_FREE_MEMORY_AMD, with a context open (1073741824 before it: the context took 314572800))"; do
  [[ "$out" == *"$want"* ]] && echo "ok: context cost: '$want'" || { fail "context cost: no '$want' in:"; echo "$out" | head -12; }
done
expect_cost() {
  local out rc
  out="$(real "$TR" "$@")"; rc=$?
  [[ $rc == 2 && "$out" == *"more than the device has free with the replay's context open (759169024 bytes"* ]] &&
    echo "ok: context cost: $* refused" || { fail "context cost: $* -> exit $rc"; echo "$out" | head -5; }
}
expect_cost --device opencl --capacity 800MiB
real() { OCL_ICD_VENDORS="$T/icd" MOCKCL_DEVICES="gpu-1g:profile=$PROFILE" "$BIN" --no-progress "$@" 2>&1; }

# The device line says where free memory came from.
PROFILE=nvidia
out="$(real "$TR" --device opencl --capacity 512MiB)"
[[ "$out" == *"clpool_replay: device mockcl / mockcl gpu-1g, 1073741824 bytes free at start (as reported"* ]] &&
  echo "ok: device line" || { fail "device line:"; echo "$out" | head -3; }

# The report names the device, its driver, how free memory was known and where it runs out: no profile.
out="$(real "$TR" --device opencl --capacity 128MiB)"
for want in "device: opencl, 128 MiB (134217728 bytes), deferred allocation, mockcl / mockcl gpu-1g (measured, no profile)" \
  "  device                    mockcl / mockcl gpu-1g, driver " \
  "  free memory at start      1 GiB (1073741824 bytes) (assumed: CL_DEVICE_GLOBAL_MEM_SIZE" \
  "  out of memory at          first use (clEnqueueMigrateMemObjects: -4 CL_MEM_OBJECT_ALLOCATION_FAILURE)"; do
  [[ "$out" == *"$want"* ]] && echo "ok: report has '$want'" || { fail "report lacks '$want'"; }
done
[[ "$out" != *"nvidia profile"* ]] || { fail "the report names a profile"; }
out="$(real "$TR" --device opencl --capacity 128MiB --json)"
[[ "$out" == *'"profile": null'* && "$out" == *'"failure_point": "first use'* ]] && echo "ok: json" ||
  { fail "json:"; echo "$out" | head -5; }
# With the exact profile the mock refuses at creation: the default semantics follow the device.
PROFILE=exact
out="$(real "$TR" --device opencl --capacity 64MiB)"
[[ "$out" == *"immediate allocation"* && "$out" == *"out of memory at          creation (clCreateBuffer: -4"* ]] &&
  echo "ok: creation-time device" || { fail "creation-time device:"; echo "$out" | head -5; }
PROFILE=nvidia

# expect RC FRAGMENT ARGS...
expect() { expect_run "$1" "$2" real "$TR" "${@:3}"; }
expect 2 "names no platform" --device opencl: --capacity 64MiB
expect 2 "device index that is not a small whole number" --device opencl:0:x --capacity 64MiB
expect 2 "device index that is not a small whole number" --device opencl:0:-1 --capacity 64MiB
expect 2 "is not sim, mockcl or opencl" --device gpu --capacity 64MiB
expect 2 "--device opencl:PLATFORM 'nvidia': no platform name contains it (platforms: 0 'mockcl')" --device opencl:nvidia --capacity 64MiB
expect 2 "--device opencl:PLATFORM 7: no such platform (there are 1: 0 'mockcl')" --device opencl:7 --capacity 64MiB
expect 2 "--device opencl:PLATFORM:INDEX 3: no such device on platform 0 'mockcl' (it has 1, numbered from 0)" --device opencl:mock:3 --capacity 64MiB
expect 2 "more than the device has free" --device opencl --capacity 2GiB
expect 0 "replayed cleanly" --device opencl:MOCK:0 --capacity 1GiB
expect 2 "--mockcl-so needs --device mockcl" --device opencl --mockcl-so "$SO" --capacity 64MiB
expect 2 "--profile cannot be used with --device opencl" --device opencl --profile nvidia --capacity 64MiB
expect 2 "--profile cannot be used with --device opencl" --device opencl --profile exact --min-capacity

# --trials on a real device: each trial carries the device's own account of its start (its free
# memory query, and what a fill up to one byte over the capacity took), which on a device that
# commits whole 2 MiB pages is the capacity rounded down to a page, and in the text too.
real_free() { OCL_ICD_VENDORS="$T/icd" MOCKCL_DEVICES="gpu-1g:profile=nvidia,free_query=amd" "$BIN" --no-progress "$@"; }
real_free "$TR" --device opencl --no-pool --trials 100MiB:101MiB:512KiB --json > "$T/trials.json" 2>/dev/null
got="$(python3 -c 'import json,sys; print([(t["capacity"], t["device_free_bytes"], t["fill_accepted_bytes"] > 0, t["device_free_at_start_bytes"]) for t in json.load(open(sys.argv[1]))["results"][0]["trials"]])' "$T/trials.json")"
want="[(104857600, 104857600, True, 1073741824), (105381888, 104857600, True, 1073741824), (105906176, 104857600, True, 1073741824)]"
[[ "$got" == "$want" ]] && echo "ok: trials carry the device's free memory" || fail "trials on opencl: $got, want $want"
out="$(real_free "$TR" --device opencl --no-pool --trials 100MiB:100MiB:1MiB 2>/dev/null)"
[[ "$out" == *"100 MiB (104857600 bytes; the device said 104857600 free; a fill took "* ]] &&
  echo "ok: trials text names the device's free memory" || { fail "trials text:"; echo "$out" | head -5; }
# A range above what the device has free is refused before any replay.
expect_run 2 "--trials: 2 GiB is more than the device can offer" real "$TR" --device opencl --trials 1GiB:2GiB:1GiB

# A device that does not enforce its memory is refused before any replay, with what to do instead:
# POCL (its memory is the host's), for a replay and for a search alike.
if [[ -r /etc/OpenCL/vendors/pocl.icd ]]; then
  for args in "--capacity 64MiB --no-pool" "--min-capacity --compare nopool pool:lb=4"; do
    # shellcheck disable=SC2086
    out="$(OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd "$BIN" "$TR" --no-progress --device opencl $args 2>&1)"
    rc=$?
    if [[ $rc == 2 && "$out" == *"does not enforce its memory size"* && "$out" == *"Replay with --device sim or --device mockcl and a profile instead"* &&
          "$out" != *"replayed cleanly"* && "$out" != *"minimum capacity"* ]]; then echo "ok: POCL refused ($args)"
    else fail "POCL $args -> exit $rc:"; echo "$out" | head -5; fi
  done
else
  fail "no POCL ICD at /etc/OpenCL/vendors/pocl.icd"
fi
# --min-capacity cannot search above what the device has free.
out="$(OCL_ICD_VENDORS="$T/icd" MOCKCL_DEVICES="gpu-64m:profile=nvidia" "$BIN" "$TR" --no-progress --device opencl --min-capacity --compare pool:lb=4 2>&1)"
rc=$?
# Exit 1 (no capacity found) whichever of the two sentences says why.
[[ $rc == 1 && ("$out" == *"no capacity"* || "$out" == *"even with all of the device's"*) ]] &&
  echo "ok: min-capacity bounded by free memory" || { fail "bounded min-capacity -> exit $rc:"; echo "$out" | head -5; }

# The device's own maximum allocation (here 1000100 bytes): the replay's pool makes no block above
# it, and where the device refuses a buffer above it (pocl's profile; nvidia's accepts) so does the
# replay, as a size refusal; --device mockcl --max-alloc with the same profile says the same (but
# for the device's page rounding, which only the profile knows: this device has no free query).
printf 'clpool-trace 1\n0 0 0 0 alloc 1 4096 buffer 0\n1 0 0 0 alloc 2 2000000 buffer 0\n' > "$T/above.trace"
printf 'clpool-trace 1\n0 0 0 0 alloc 1 4096 buffer 0\n1 0 0 0 alloc 2 1000000 buffer 0\n2 0 0 0 free 2 0 buffer 0\n' > "$T/straddle.trace"
max_real() { OCL_ICD_VENDORS="$T/icd" MOCKCL_DEVICES="gpu-64m:profile=$1,max_alloc=1000100" "$BIN" --no-progress --device opencl --capacity 16MiB "${@:2}" 2>&1; }
max_mock() { env -u MOCKCL_DEVICES "$BIN" --no-progress --device mockcl --mockcl-so "$SO" --profile "$1" --max-alloc 1000100 --capacity 16MiB "${@:2}" 2>&1; }
out="$(max_real pocl "$T/above.trace")"; rc=$?
for want in "  max allocation            976.66 KiB (1000100 bytes) (it refuses a buffer above it for its size, and so does the replay)" \
  "result: REFUSED FOR ITS SIZE at event 1" "which the device enforces; no capacity changes that"; do
  [[ $rc == 1 && "$out" == *"$want"* ]] && echo "ok: max alloc refused: '$want'" || { fail "max alloc refused, exit $rc, no '$want' in:"; echo "$out" | head -20; }
done
same_max() { sed -n '/^result:/,$p' | grep -v '  message \|page rounding\|peak device used\|device used / capacity'; }
a="$(max_real pocl "$T/above.trace" | same_max)"
b="$(max_mock pocl "$T/above.trace" | same_max)"
[[ -n "$a" && "$a" == "$b" ]] && echo "ok: max alloc refusal as on mockcl --max-alloc" || { fail "max alloc refusal differs from mockcl's:"; diff <(echo "$a") <(echo "$b") | head; }
out="$(max_real pocl "$T/above.trace" --json)"
[[ "$out" == *'"max_alloc": 1000100'* && "$out" == *'"above_max_alloc": "refused_for_size"'* && "$out" == *'"refused_for_size": true'* ]] &&
  echo "ok: max alloc json" || { fail "max alloc json:"; echo "$out" | grep -n 'max_alloc\|refused' | head; }
for profile in pocl nvidia; do
  a="$(max_real $profile "$T/straddle.trace" | same_max)"
  b="$(max_mock $profile "$T/straddle.trace" | same_max)"
  [[ "$a" == *"allocator calls           2 allocations, 1 free, 0 failed"* && "$a" == "$b" ]] &&
    echo "ok: $profile: the straddling bin is served at its request's size" || { fail "$profile straddling bin:"; diff <(echo "$a") <(echo "$b") | head; echo "$a" | head -12; }
done
out="$(max_real nvidia "$T/above.trace")"; rc=$?
[[ $rc == 0 && "$out" == *"(it accepts a buffer above it)"* && "$out" == *"replayed cleanly"* ]] &&
  echo "ok: a device that accepts above its max alloc replays it" || { fail "nvidia above max alloc -> exit $rc:"; echo "$out" | head -12; }

finish
echo "all passed"
