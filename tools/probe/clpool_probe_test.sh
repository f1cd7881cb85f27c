#!/usr/bin/env bash
# clpool_probe as a user runs it: --help, strict input checking (each bad value exits 2 with one
# error line on stderr), device choice, outputs, and the bounded mode on POCL (exit 1).
set -u
BIN="$1"
SO="$(realpath "$2")"
T="${TEST_TMPDIR:-/tmp}"
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh  # fail, finish, expect_run, mockcl_icd; from the runfiles root

mockcl_icd "$T/mock" "$SO"
# POCL first: the loader reads the folder's .icd files in name order, 0-pocl.icd before mockcl.icd.
mockcl_icd "$T/both" "$SO"
cp /etc/OpenCL/vendors/pocl.icd "$T/both/0-pocl.icd"
export OCL_ICD_PLATFORM_SORT=none
export OCL_ICD_VENDORS="$T/mock/mockcl.icd"
export MOCKCL_DEVICES="gpu-64m:profile=nvidia;cpu-64m"

# expect RC FRAGMENT ARGS...: checks the exit code and that stdout+stderr contain FRAGMENT; an
# exit 2 must say why on exactly one stderr line.
expect() { EXPECT_ONE_ERROR_LINE=1 expect_run "$1" "$2" "$BIN" "${@:3}"; }

# --help lists every option and the exit codes.
for f in --platform --device --max-bytes --output --name --force --list --compare "Exit codes" "commands_finish"; do
  expect 0 "$f" --help
done

# Unknown flags and stray arguments; CLI11's mistakes in the tools' words (common/cli11.h).
expect 2 "--bogus" --bogus
expect 2 "clpool_probe: error: unexpected argument 'stray' (see --help)" stray
expect 2 "clpool_probe: error: --max-bytes: given twice" --max-bytes 1GiB --max-bytes 2GiB
expect 2 "clpool_probe: error: --name: needs a value" --name
# An empty --output is a mistake, not "no output": exit 2 before the device is touched.
expect 2 "clpool_probe: error: --output: needs a value" --output ""
expect 2 "clpool_probe: error: --output: needs a value" --output= --force
# --max-bytes: zero, bad units, negative, fractional, empty.
expect 2 "must be positive" --max-bytes 0
expect 2 "must be positive, got '0KiB'" --max-bytes 0KiB
expect 2 "--max-bytes: '12XB'" --max-bytes 12XB
expect 2 "--max-bytes: '-5'" --max-bytes -5
expect 2 "--max-bytes: '1.5GiB'" --max-bytes 1.5GiB
expect 2 "clpool_probe: error: --max-bytes: needs a value" --max-bytes ""
# --platform: an index out of range, a name no platform has, an empty name, an ambiguous part.
expect 2 "--platform 3: no such platform (there are 1: 0 'mockcl')" --platform 3
expect 2 "--platform 'nvidia': no platform name contains it" --platform nvidia
expect 2 "clpool_probe: error: --platform: needs a value" --platform ""
OCL_ICD_VENDORS="$T/both" expect 2 "more than one platform name contains it" --platform o
# --device: out of range, negative, not a number.
expect 2 "--device 2: no such device on platform 0 'mockcl' (it has 2" --device 2
expect 2 "--device: '-1' is not an index" --device -1
expect 2 "--device: 'gpu' is not an index" --device gpu
# --name must be a profile name; --force needs --output.
expect 2 "clpool_probe: error: --name: 'two words' is not a name (letters, digits, '_', '-', '.'; at most 64)" --name "two words"
# A built-in's name: a profile file may not take one (reports would call it that built-in).
expect 2 "clpool_probe: error: --name: 'nvidia' is a built-in profile's name (exact, nvidia, pocl)" --name nvidia
expect 2 "clpool_probe: error: --compare: takes 2 values, got 3" --compare nvidia exact pocl
expect 2 "--force needs --output" --force
# --output: a directory, a missing directory, a place nobody can write, a file that is not a profile.
expect 2 "--output" --output "$T"
expect 2 "--output" --output "$T/no/such/dir/x.profile"
expect 2 "--output" --output /proc/clpool_probe.profile
echo "precious" > "$T/notes.txt"
expect 2 "is not a profile clpool_probe wrote (its first line does not start with '# Measured by clpool_probe'); refusing to overwrite it (--force replaces it)" --output "$T/notes.txt"
[[ "$(cat "$T/notes.txt")" == precious ]] || { fail "notes.txt was changed"; }
# An empty file holds nothing to lose: replaced.
: > "$T/empty.profile"
expect 0 "wrote $T/empty.profile" --output "$T/empty.profile"
head -1 "$T/empty.profile" | grep -q "^# Measured by clpool_probe on " || fail "the empty file was not replaced"
# A hand-written profile (a valid one, with its comments) is not the probe's either (issue 21).
printf '# my notes on this device\nname = mine\noom_at = creation\n' > "$T/mine.profile"
cp "$T/mine.profile" "$T/mine.before"
MOCKCL_DEVICES="gpu-64m" expect 2 "'$T/mine.profile' exists and is not a profile clpool_probe wrote" --output "$T/mine.profile"
cmp -s "$T/mine.profile" "$T/mine.before" || { fail "the hand-written profile was changed"; }
# No platform at all.
OCL_ICD_VENDORS="$T/empty-dir-that-does-not-exist" expect 2 "no OpenCL platform found"

# A device answering what no model explains: an OpenCL error is exit 2; a second kind of refusal
# (an injected CL_OUT_OF_RESOURCES on a device that says -4) makes the measurement incomplete.
MOCKCL_FAULTS="nth:clEnqueueMigrateMemObjects:3:CL_INVALID_VALUE" expect 2 "clEnqueueMigrateMemObjects failed with -30"
MOCKCL_FAULTS="nth:clEnqueueMigrateMemObjects:3:CL_OUT_OF_RESOURCES" expect 1 "the device refused in two ways"

# A page that is not a power of two (the profile parser and mockcl take any page): the probe's
# fill sees the power of two below it, so it checks the page it found, and exits 1.
printf 'name = np2\noom_at = first_use\npage = 96KiB\n' > "$T/np2.profile"
MOCKCL_DEVICES="gpu-64m:profile=$T/np2.profile" expect 1 "the device's page is not a power of two" \
  --max-bytes 64MiB --output "$T/np2-probed.profile"
[[ -e "$T/np2-probed.profile" ]] && fail "a profile with the wrong page was written"

# A device that takes more than it reports free: the headroom cannot be known (exit 1).
MOCKCL_DEVICES="gpu-64m:reported=32m,max_alloc=16m" expect 1 "headroom: not known"

# --list shows both platforms' devices.
OCL_ICD_VENDORS="$T/both" expect 0 "device 1: mockcl cpu-64m" --list
# --list measures nothing, so a measuring option beside it is refused, and nothing is written.
for extra in "--output $T/listed.profile" "--name x" "--max-bytes 1MiB" "--device 0" "--platform 0" "--force"; do
  # shellcheck disable=SC2086
  expect 2 "--list measures no device: it takes no ${extra%% *}" --list $extra
done
[[ ! -e "$T/listed.profile" ]] || fail "--list --output wrote $T/listed.profile"
# The default is the first GPU, not the first device.
MOCKCL_DEVICES="cpu-64m;gpu-64m:profile=nvidia" expect 0 "device: mockcl gpu-64m (platform 0 'mockcl', device 1" --max-bytes 64MiB
# Chosen by name part and index: mockcl's CPU device (exact bytes).
expect 0 "page: 1 B" --platform MOCK --device 1
expect 0 "device: mockcl cpu-64m" --platform 0 --device 1

# Where out-of-memory appears, with the calls that said so.
MOCKCL_DEVICES="gpu-64m:profile=nvidia,oom_at=execution" expect 0 "out of memory: at execution, clEnqueueMigrateMemObjects's event after clFinish -4"
MOCKCL_DEVICES="gpu-64m:profile=nvidia,oom_at=execution" expect 0 "first use of a buffer with no room: clEnqueueFillBuffer: 0, event -4"
MOCKCL_DEVICES="gpu-64m:profile=nvidia" expect 0 "first use of a buffer with no room: clEnqueueWriteBuffer: -4"
MOCKCL_DEVICES="gpu-64m:profile=nvidia" expect 0 "first use of a buffer with no room: clEnqueueNDRangeKernel: -4"
MOCKCL_DEVICES="gpu-64m:semantics=host_oom" expect 0 "out of memory: at creation, clCreateBuffer -6 CL_OUT_OF_HOST_MEMORY"
# Where an SVM block is refused, with the device full: clSVMAlloc itself, or its first use (then
# written to the profile); nothing to measure without SVM.
MOCKCL_DEVICES="gpu-64m:profile=nvidia" expect 0 "svm: out of memory at creation, clSVMAlloc returned NULL (an SVM block of 1 byte with the device full)"
MOCKCL_DEVICES="gpu-64m:profile=nvidia,svm_oom_at=first_use" expect 0 "svm: out of memory at first_use, clEnqueueSVMMemFill (an SVM block of 1 byte"
MOCKCL_DEVICES="gpu-64m:profile=nvidia,svm_oom_at=first_use" expect 0 "svm_oom_at = first_use"
MOCKCL_DEVICES="gpu-64m:profile=nvidia,svm=off" expect 0 "svm: not measured (svm_oom_at = creation written): the device has no SVM"
# SVM refused at first use by a device that refuses buffers at creation: no profile can say that,
# so svm_oom_at is not measured, and the run says so and exits 1 (it exited 0, "everything
# measured").
MOCKCL_DEVICES="gpu-64m:semantics=immediate,svm_oom_at=first_use" expect 1 \
  "incomplete: not measured: svm_oom_at (above); every other key was measured"
MOCKCL_DEVICES="gpu-64m:semantics=immediate,svm_oom_at=first_use" expect 1 \
  "an SVM block of 1 byte was refused by clEnqueueSVMMemFill -4, which a profile cannot say"
# commands_finish: no probe can see it; said, written promptly (NVIDIA's), and no reason for exit 1.
expect 0 "commands_finish: not measured (no probe can see when a device runs queued commands); promptly written"

# A device whose contexts take memory and which says how much is free (as NVIDIA's driver and NVML
# do; here mockcl's context_cost and AMD's query): free memory is read with the probe's context
# open, so the headroom is the device's (4 MiB: the nvidia profile on 64 MiB), not the context's.
MOCKCL_DEVICES="gpu-64m:profile=nvidia,context_cost=16m,free_query=amd" expect 0 \
  "headroom: free at start - usable = 4194304 B (4 MiB)" --max-bytes 64MiB
MOCKCL_DEVICES="gpu-64m:profile=nvidia,context_cost=16m,free_query=amd" expect 0 \
  "free memory at start: 50331648 B (48 MiB), from CL_DEVICE_GLOBAL_FREE_MEMORY_AMD" --max-bytes 64MiB
MOCKCL_DEVICES="gpu-64m:profile=nvidia,context_cost=16m,free_query=amd" expect 0 \
  "read with the probe's context open; before it: 67108864 B (64 MiB) (the context took 16777216 B (16 MiB))" --max-bytes 64MiB
MOCKCL_DEVICES="gpu-64m:profile=nvidia,context_cost=16m,free_query=amd" expect 0 \
  "said 4194304 B (4 MiB) free when the fill was fullest (= free at start - fill)" --max-bytes 64MiB

# A measured profile is written, with its evidence and what no probe measures; an existing
# profile is replaced.
expect 0 "wrote $T/gpu.profile" --output "$T/gpu.profile"
for f in "# Measured by clpool_probe on 20" "# device: mockcl gpu-64m" "driver 1.0" "# page: 2097152 B" \
         "oom_at = first_use" "page = 2097152B" "pack_granule = 512B" "max_alloc_enforced = no" \
         "# Never measured: commands_finish, written promptly (NVIDIA's)"; do
  grep -qF -- "$f" "$T/gpu.profile" || { fail "gpu.profile lacks '$f'"; }
done
expect 0 "wrote $T/gpu.profile" --output "$T/gpu.profile" --name replaced
grep -q "^name = replaced$" "$T/gpu.profile" || { fail "the profile was not replaced"; }
# --force replaces what the probe did not write.
MOCKCL_DEVICES="gpu-64m" expect 0 "wrote $T/mine.profile" --output "$T/mine.profile" --force
head -1 "$T/mine.profile" | grep -q "^# Measured by clpool_probe on " || { fail "--force did not replace mine.profile"; }
ls -a "$T" | grep -q '\.tmp' && { fail "a temporary file was left behind"; }

# A mock device larger than the cap: it never refuses within it.
MOCKCL_DEVICES="gpu-2g" expect 1 "the device accepted everything up to the cap (67108864 bytes, --max-bytes) without refusing, so its limit cannot be measured; it reports 2147483648 bytes free: for a GPU, give --max-bytes a power of two above that" --max-bytes 64MiB --output "$T/big.profile"
[[ -e "$T/big.profile" ]] && { fail "an incomplete profile was written without --force"; }

# POCL: capacity not enforced (host memory), so the bounded mode stops at --max-bytes and exits 1;
# it still tells that max alloc is enforced. No --max-bytes makes a CPU device refuse (raising it
# toward the host's memory ends in POCL's own abort): the advice is a profile written by hand,
# never a larger cap.
export OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd
start=$(date +%s%N)
expect 1 "A device whose memory is the host's (a CPU device, POCL) may never refuse short of the host running out: write its profile by hand (tools/replay/README.md, \"Device profiles\")" --max-bytes 32MiB
expect_run 1 "the device accepted everything up to the cap (33554432 bytes, --max-bytes) without refusing, so its limit cannot be measured." "$BIN" --max-bytes 32MiB
grep -q "give --max-bytes" <<<"$expect_out" && fail "a CPU device was sent to a larger cap: $expect_out"
echo "POCL bounded probe: $(( ($(date +%s%N) - start) / 1000000 )) ms"
expect 1 "CL_INVALID_BUFFER_SIZE -> enforced" --max-bytes 32MiB
expect 1 "where and how this device reports it is unknown" --max-bytes 32MiB
# Raising the cap toward the host's memory ends in POCL's own abort (an assertion when a migrate
# finds no memory; here under a 3 GB address-space limit, so that nothing is touched): the lines
# measured before the fill were buffered, and lost with the process. Each line is flushed as it
# is known. (Not under ASan, whose shadow memory needs more address space than the limit.)
if [[ -z "${ASAN_OPTIONS:-}" ]]; then
  (ulimit -v 3000000; "$BIN" --max-bytes 4GiB > "$T/pocl-abort.log" 2>&1)
  rc=$?
  [[ $rc == 134 ]] || echo "note: POCL under ulimit -v exited $rc, not 134 (its abort)"
  grep -q "^max alloc: CL_DEVICE_MAX_MEM_ALLOC_SIZE .* -> enforced$" "$T/pocl-abort.log" ||
    fail "what was measured before POCL's abort was lost: $(cat "$T/pocl-abort.log")"
fi
expect 1 "no profile written" --max-bytes 32MiB --output "$T/pocl.profile"
[[ -e "$T/pocl.profile" ]] && { fail "POCL's incomplete profile was written without --force"; }
expect 1 "wrote $T/pocl.profile" --max-bytes 32MiB --output "$T/pocl.profile" --force
for f in "# INCOMPLETE (written with --force)" "max_alloc_enforced = yes"; do
  grep -qF -- "$f" "$T/pocl.profile" || { fail "pocl.profile lacks '$f'"; }
done

finish
