#!/usr/bin/env bash
# fuzz/oss-fuzz/sources.sh's usage: anything but no argument or --check exits 2, names what it got
# and writes nothing (the lists themselves are checked against Bazel by tools/test.sh, step 0).
#   sources_test.sh SOURCES_SH
source tools/dev/testing/test_lib.sh || exit 1  # fail, finish
script="$1"
for args in "--chek" "--check extra" "-h" "sources.txt"; do
  # shellcheck disable=SC2086  # each case is a list of words
  got="$(bash "$script" $args 2>&1)"
  status=$?
  [[ $status == 2 && "$got" == *"unexpected arguments: $args; usage: fuzz/oss-fuzz/sources.sh [--check]"* ]] ||
    fail "sources.sh $args: status $status, '$got'"
done
got="$(bash "$script" "" 2>&1)"
[[ $? == 2 && "$got" == *"unexpected arguments"* ]] || fail "sources.sh '': '$got'"
finish
