#!/usr/bin/env bash
# clpool_probe --compare as the GPU session runs it (tools/dev/gpu/run_on_gpu.sh, step probe): the
# shipped nvidia profile against what the probe measured on a mock card with that profile.
set -u
PROBE="$1"
SO="$(realpath "$2")"
SHIPPED="$3"
T="${TEST_TMPDIR:-/tmp}"
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh  # fail, finish, expect_run, mockcl_icd; from the runfiles root

mockcl_icd "$T/mock" "$SO"
export OCL_ICD_VENDORS="$T/mock/mockcl.icd"
export MOCKCL_BACKING=none
# 64 whole 2 MiB pages usable beside nvidia's 2.625 MiB headroom: the probe sees every value.
NVIDIA_CARD="gpu:capacity=$((64 * 2097152 + 2752512)),profile=nvidia"

MOCKCL_DEVICES="$NVIDIA_CARD" "$PROBE" --output "$T/same.profile" > "$T/same.log" 2>&1 \
  || fail "clpool_probe on the nvidia mock -> exit $?: $(head -3 "$T/same.log")"
# The probe writes neither commands_finish nor svm_oom_at at their defaults, and sizes in bytes;
# the shipped file spells svm_oom_at out and writes KiB and MiB. The same device is the same
# profile.
grep -q "^svm_oom_at" "$T/same.profile" && fail "the probe wrote svm_oom_at at its default"
grep -q "^svm_oom_at = creation" "$SHIPPED" || fail "the shipped nvidia profile says svm_oom_at"
grep -q "^headroom = 2688KiB" "$SHIPPED" || fail "the shipped nvidia profile's headroom in KiB"
expect_run 0 "the same device" "$PROBE" --compare "$SHIPPED" "$T/same.profile"
grep -q "DIFFERENT" <<<"$expect_out" && fail "a key differs: $expect_out"
grep -qE "^headroom +2752512B +2752512B +same$" <<<"$expect_out" || fail "headroom: $expect_out"
grep -qE "^svm_oom_at +creation +creation +same$" <<<"$expect_out" || fail "svm_oom_at: $expect_out"
grep -qE "^field +nvidia.profile +same.profile$" <<<"$expect_out" || fail "labels: $expect_out"
# A built-in profile by name is the shipped file.
expect_run 0 "the same device" "$PROBE" --compare nvidia "$T/same.profile"

# A device whose SVM is refused at first use: the probe says so, and the comparison names it.
MOCKCL_DEVICES="$NVIDIA_CARD,svm_oom_at=first_use" "$PROBE" --output "$T/svm.profile" > "$T/svm.log" 2>&1 \
  || fail "clpool_probe on the first_use mock -> exit $?: $(head -3 "$T/svm.log")"
expect_match 1 "^svm_oom_at +creation +first_use +DIFFERENT$" "$PROBE" --compare "$SHIPPED" "$T/svm.profile"
grep -q "^1 key differs: svm_oom_at$" <<<"$expect_out" || fail "the summary: $expect_out"
expect_match 1 "^6 keys differ: oom_at headroom page pack_limit pack_granule max_alloc_enforced$" \
  "$PROBE" --compare exact nvidia

# A card whose free memory is not whole pages beside the headroom: the probe writes the bound
# (4 MiB on 1 GiB), which differs from the shipped 2.625 MiB by less than a page, and says so.
MOCKCL_DEVICES="gpu-1g:profile=nvidia" "$PROBE" --output "$T/1g.profile" > "$T/1g.log" 2>&1 \
  || fail "clpool_probe on the 1 GiB mock -> exit $?: $(head -3 "$T/1g.log")"
expect_match 1 "^headroom +2752512B +4194304B +DIFFERENT \(less than a page apart" \
  "$PROBE" --compare nvidia "$T/1g.profile"

# Bad input: one error line, exit 2, nothing compared.
expect() { EXPECT_ONE_ERROR_LINE=1 expect_run "$@"; }
expect 2 "--compare: " "$PROBE" --compare "$SHIPPED" "$T/none.profile"
expect 2 "--compare: " "$PROBE" --compare nvidia no_such_profile
printf 'oom_at = sometimes\n' > "$T/bad.profile"
expect 2 "oom_at" "$PROBE" --compare nvidia "$T/bad.profile"
expect 2 "--compare" "$PROBE" --compare "$SHIPPED"
expect 2 "it takes no --output" "$PROBE" --compare nvidia pocl --output "$T/x.profile"
expect 2 "it takes no --list" "$PROBE" --compare nvidia pocl --list
[[ -e "$T/x.profile" ]] && fail "--compare with --output wrote a file"
finish
