#!/bin/bash
# The test clpool_memory_test (memory_test.bzl) generates: runs a program under clpool's OpenCL
# layer on a device of the given capacity and profile, and fails, with clpool_replay's report of
# the sites holding the memory, when the program exits non-zero, runs out of device memory, or
# peaks above its limit.
#   memory_test.sh CLPOOL LAYER_SO CLPOOL_REPLAY LIBMOCKCL_SO|- CAPACITY PROFILE LIMIT BINARY -- [ARGS...]
# CAPACITY and LIMIT are sizes as the rule's user wrote them ("256MiB", "256 MiB", or bytes; LIMIT
# "-": none), PROFILE a device profile; clpool_replay checks all three before anything runs
# (clpool's one size grammar and the profile's headroom: the rule holds no copy of them), and says
# how many bytes each size is. LIBMOCKCL_SO "-": the system's OpenCL device.
# The trace, the reports and the pages go to $TEST_UNDECLARED_OUTPUTS_DIR (else $TEST_TMPDIR).
set -uo pipefail
if [[ $# -lt 9 || "$9" != "--" ]]; then
  echo "memory_test.sh: usage: CLPOOL LAYER_SO CLPOOL_REPLAY LIBMOCKCL_SO|- CAPACITY PROFILE LIMIT BINARY -- [ARGS...]" >&2
  exit 2
fi
clpool="$(realpath "$1")"
layer="$(realpath "$2")"
replay="$(realpath "$3")"
mockcl="$4"
capacity="$5"
profile="$6"
limit="$7"
binary="$(realpath "$8")"
shift 9
out="${TEST_UNDECLARED_OUTPUTS_DIR:-${TEST_TMPDIR:-$(mktemp -d)}}"
mkdir -p "$out"
trace="$out/device.trace"
rm -f "$trace"
name="$(basename "$binary")"
[[ -n "${TEST_SHARD_STATUS_FILE:-}" ]] && touch "$TEST_SHARD_STATUS_FILE"

# Where a user finds the outputs after the test. Bazel zips a test's undeclared outputs into
# test.outputs/outputs.zip in the test's folder under bazel-testlogs: PACKAGE/NAME, with
# --runs_per_test or sharding a run_K_of_N, shard_K_of_N or shard_K_of_N_run_J_of_M folder below
# it; TEST_UNDECLARED_OUTPUTS_DIR is that folder's test.outputs wherever Bazel runs the test (a
# sandbox, gone afterwards). Under bazel run (BUILD_WORKSPACE_DIRECTORY) the files stay there
# unzipped too; run by hand, the folder itself.
shown="$out"
if [[ -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" && "$out" == */testlogs/*/test.outputs ]]; then
  shown="bazel-testlogs/${out##*/testlogs/}/outputs.zip"
  # bazel run: the files stay beside the zip, in the workspace's bazel-testlogs.
  [[ -n "${BUILD_WORKSPACE_DIRECTORY:-}" ]] && shown="bazel-testlogs/${out##*/testlogs/}"
fi

# The program's arguments as a shell would read them back.
quoted() {
  local a said=""
  for a in "$@"; do
    if [[ "$a" =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]]; then said+=" $a"; else said+=" '${a//\'/\'\\\'\'}'"; fi
  done
  printf '%s' "$said"
}

# The bytes of a size as clpool_replay states it in its report: "64 MiB (67108864 bytes)",
# "1000 bytes", "1 byte".
bytes_of() {
  if [[ "$1" =~ \(([0-9]+)\ bytes\) ]] || [[ "$1" =~ ^([0-9]+)\ bytes?$ ]]; then
    echo "${BASH_REMATCH[1]}"
  fi
}

# A setting clpool refuses fails the test before the program runs, with clpool's message naming
# the rule's attribute: the sizes and the profile as clpool_replay checks its --capacity and
# --profile, on an empty trace. Prints the size's bytes as clpool_replay read them.
check() {  # check ATTRIBUTE SIZE PROFILE
  local empty="${TEST_TMPDIR:-/tmp}/memory_test_empty.trace" said device
  printf 'clpool-trace 1\n' > "$empty"
  if ! said="$("$replay" "$empty" --no-pool --capacity "$2" --profile "$3" --no-progress 2>&1)"; then
    said="${said#clpool_replay: error: }"
    said="${said//--capacity/$1}"
    echo "clpool_memory_test: FAIL: ${said//--profile/profile}" >&2
    return 2
  fi
  device="$(grep -m1 '^device: ' <<< "$said")"
  device="${device#device: sim, }"
  bytes_of "${device%%, *}"
}
capacity_bytes="$(check capacity "$capacity" "$profile" 2>&1)" || { echo "$capacity_bytes"; exit 2; }
limit_bytes=""
if [[ "$limit" != "-" ]]; then
  limit_bytes="$(check limit "$limit" exact 2>&1)" || { echo "$limit_bytes"; exit 2; }
  # A limit above the capacity would never be the check that fails: the program runs out of device
  # memory before its peak gets there. Refused, as clpool refuses a setting that changes nothing.
  if [[ -n "$limit_bytes" && -n "$capacity_bytes" ]] && ((limit_bytes > capacity_bytes)); then
    echo "clpool_memory_test: FAIL: limit $limit ($limit_bytes bytes) is above capacity $capacity ($capacity_bytes bytes): the program would run out of device memory before its peak reached the limit; give a limit not above the capacity, or none"
    exit 2
  fi
fi

# A test that Bazel shards anyway (--test_sharding_strategy=forced=N; the rule refuses
# shard_count) runs whole in its first shard.
if [[ -n "${TEST_TOTAL_SHARDS:-}" && "${TEST_TOTAL_SHARDS}" -gt 1 && "${TEST_SHARD_INDEX:-0}" -ne 0 ]]; then
  echo "clpool_memory_test: shard $((TEST_SHARD_INDEX + 1))/$TEST_TOTAL_SHARDS: nothing to run; the test is one run of $name, in shard 1"
  exit 0
fi

if [[ "$mockcl" != "-" ]]; then
  vendors="$(mktemp -d "${TEST_TMPDIR:-/tmp}/mockcl-vendors.XXXXXX")"
  realpath "$mockcl" > "$vendors/mockcl.icd"
  export OCL_ICD_VENDORS="$vendors" OCL_ICD_PLATFORM_SORT=none
  export MOCKCL_DEVICES="gpu-${capacity_bytes:-$capacity}:profile=$profile"
  where="a mockcl device of $capacity, $profile profile"
else
  where="the system's OpenCL device, the layer enforcing $capacity ($profile profile)"
fi
echo "clpool_memory_test: $name$(quoted "$@") on $where"
# The layer enforces the capacity too, so that an out-of-memory is in the trace with its reason.
"$clpool" record --layer "$layer" --out "$trace" --budget "${capacity_bytes:-$capacity}" \
  --profile "$profile" -- "$binary" "$@"
status=$?

# Replays the trace with no pool (the trace holds the program's own requests to the driver),
# writing the report and the page as NAME.txt and NAME.html: on a device of CAPACITY with
# PROFILE; as "peak", what was live at the peak of the whole run, on an exact-byte device of the
# capacity (the requested bytes of a run that fitted the profile's device fit it; else on the
# largest device).
replay_as() {  # replay_as NAME CAPACITY PROFILE
  local flags=()
  [[ "$1" == peak ]] && flags=(--peak)
  "$replay" "$trace" --no-pool --capacity "$2" --profile "$3" --no-progress "${flags[@]}" \
    --html "$out/$1.html" > "$out/$1.txt" 2> "$out/$1.err"
  local rc=$?
  [[ $rc -eq 2 ]] && cat "$out/$1.err" >&2
  [[ -s "$out/$1.err" ]] || rm -f "$out/$1.err"
  return $rc
}
replay_peak() {  # the whole run on an exact-byte device of the capacity, else an unbounded one
  replay_as peak "${capacity_bytes:-$capacity}" exact
  local rc=$?
  if [[ $rc -eq 1 ]]; then
    replay_as peak 4EiB exact
    rc=$?
  fi
  return $rc
}
# The layer's failures in the trace (trace/FORMAT.md, "Actions"): an alloc_failed whose failure
# comment says -61 (CL_INVALID_BUFFER_SIZE) was refused for its size, no out-of-memory; any other,
# and a refused first use, is one. Prints "oom COMMENT" for the first out-of-memory (its failure
# comment) and "size N" for the size refusals. (tr: the trace of a program that died ends in the
# zeros of the layer's mapped file.)
failures() {
  tr -d '\000' < "$trace" | awk '
    /^[0-9]+ [0-9]+ [0-9]+ [0-9]+ alloc_failed / { failed[$1] = 1; order[++n] = $1; next }
    /^# failure: seq [0-9]+ / { text[$4] = substr($0, 12); if ($6 == "-61") size[$4] = 1; next }
    /^# failure: first use / { if (first_use == "") first_use = substr($0, 12) }
    END {
      refused = 0
      for (i = 1; i <= n; ++i) {
        s = order[i]
        if (size[s]) { ++refused; continue }
        if (oom == "") oom = (s in text) ? text[s] : "alloc_failed at seq " s
      }
      if (oom == "") oom = first_use
      if (oom != "") print "oom " oom
      print "size " refused
    }'
}
show() {  # show NAME: the report in the log, and where the files are
  cat "$out/$1.txt"
  echo "clpool_memory_test: the trace device.trace, the report $1.txt and the page $1.html are in $shown"
}

failed=0
# A program that makes no device allocation fits any device: it passes, saying so (the layer sees
# the OpenCL calls that go through the ICD loader, libOpenCL.so).
# -a: the trace of a program that died (abort) ends in the zeros of the layer's mapped file.
if [[ ! -s "$trace" ]] || ! grep -aqE '^[0-9]+ [0-9]+ [0-9]+ [0-9]+ alloc(_failed)? ' "$trace"; then
  if [[ $status -ne 0 ]]; then
    echo "clpool_memory_test: FAIL: $name exited with status $status (it made no device allocation)"
    exit 1
  fi
  echo "clpool_memory_test: PASS: $name made no device allocation through the OpenCL ICD loader (nothing to fit)"
  exit 0
fi
peak=""
seen="$(failures)"
oom="$(sed -n 's/^oom //p' <<< "$seen")"
size_refusals="$(sed -n 's/^size //p' <<< "$seen")"
if ((${size_refusals:-0} > 0)); then
  echo "clpool_memory_test: note: the device refused $size_refusals request(s) for their size (above CL_DEVICE_MAX_MEM_ALLOC_SIZE: CL_INVALID_BUFFER_SIZE, or clSVMAlloc's NULL); no out-of-memory, and no capacity changes that"
fi
if [[ -n "$oom" ]]; then
  echo "clpool_memory_test: FAIL: $name ran out of device memory on $where; clpool's report:"
  echo "  the layer: $oom"
  replay_as out_of_memory "$capacity" "$profile"
  show out_of_memory
  failed=1
elif replay_peak; then
  # The peak of requested bytes over the whole run: what the limit bounds.
  peak="$(grep -m1 '^  peak active ' "$out/peak.txt" | sed 's/^  peak active *//')"
  peak_bytes="$(bytes_of "$peak")"
  if [[ -n "$limit_bytes" && -n "$peak_bytes" ]] && ((peak_bytes > limit_bytes)); then
    echo "clpool_memory_test: FAIL: $name's peak device memory, $peak, is above its limit of $limit ($limit_bytes bytes) by $((peak_bytes - limit_bytes)) bytes; clpool's replay of the whole run, with the sites at the peak:"
    show peak
    failed=1
  fi
else
  rc=$?
  cat "$out/peak.txt"
  echo "clpool_memory_test: FAIL: clpool_replay could not replay the trace (exit $rc)"
  failed=1
fi
if [[ $status -ne 0 ]]; then
  echo "clpool_memory_test: FAIL: $name exited with status $status"
  failed=1
fi
if [[ $failed -eq 0 ]]; then
  echo "clpool_memory_test: PASS: $name fits $where: peak device memory $peak$([[ "$limit" != "-" ]] && echo ", not above its limit of $limit")"
fi
exit $failed
