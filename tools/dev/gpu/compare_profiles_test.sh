#!/usr/bin/env bash
# compare_profiles.py as the GPU session runs it: the shipped profile against the probe's.
set -u
PROBE="$1"
SO="$(realpath "$2")"
COMPARE="$3"
SHIPPED="$4"
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
# The probe writes neither commands_finish nor svm_oom_at at their defaults; the shipped file
# spells svm_oom_at out. The same device is the same profile.
grep -q "svm_oom_at" "$T/same.profile" && fail "the probe wrote svm_oom_at at its default"
grep -q "^svm_oom_at = creation" "$SHIPPED" || fail "the shipped nvidia profile says svm_oom_at"
expect_run 0 "svm_oom_at" python3 "$COMPARE" "$SHIPPED" "$T/same.profile"
grep -q "DIFFERENT" <<<"$(grep -v '^name ' <<<"$expect_out")" && fail "a field differs: $expect_out"
grep -q "(default creation)" <<<"$expect_out" || fail "the missing key is not shown as its default"

# A device whose SVM is refused at first use: the probe says so, and the comparison names it.
MOCKCL_DEVICES="$NVIDIA_CARD,svm_oom_at=first_use" "$PROBE" --output "$T/svm.profile" > "$T/svm.log" 2>&1 \
  || fail "clpool_probe on the first_use mock -> exit $?: $(head -3 "$T/svm.log")"
expect_match 1 "^svm_oom_at +creation +first_use +DIFFERENT$" python3 "$COMPARE" "$SHIPPED" "$T/svm.profile"

expect_run 2 "No such file or directory" python3 "$COMPARE" "$SHIPPED" "$T/none.profile"
expect_run 2 "compare_profiles.py SHIPPED.profile MEASURED.profile" python3 "$COMPARE" "$SHIPPED"
finish
