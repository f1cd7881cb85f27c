#!/bin/bash
# The offline stand-in for Bazel's lcov merger (third_party/remote_coverage_tools/lcov_merger.sh),
# run as Bazel 4.2.3's collect_coverage.sh runs it: it concatenates the .dat tracefiles under
# --coverage_dir into --output_file, writes an empty one when there are none, says on stderr that
# merging is not available offline, and reads --reports_file as the coverage_report_generator.
# (memory_test_test.sh runs `bazel coverage` itself in a workspace of its own.)
#   lcov_merger_test.sh LCOV_MERGER_SH
set -u
source "$(dirname "$0")/../dev/testing/test_lib.sh" || exit 1
merger="$(realpath "$1")"
T="${TEST_TMPDIR:-$(mktemp -d)}"
mkdir -p "$T/cov/a" "$T/cov/b" "$T/empty"
printf 'SF:a.c\nDA:1,1\nend_of_record\n' > "$T/cov/a/one.dat"
printf 'SF:b.c\nDA:2,0\nend_of_record\n' > "$T/cov/b/two.dat"
printf 'not lcov\n' > "$T/cov/b/x.gcov"
bash "$merger" --coverage_dir="$T/cov" --output_file="$T/cov/_coverage.dat" \
  --filter_sources=/usr/bin/.+ --filter_sources=.*external/.+ \
  --source_file_manifest="$T/manifest" 2> "$T/err"
[[ $? == 0 ]] || fail "exit status"
[[ "$(cat "$T/cov/_coverage.dat")" == $'SF:a.c\nDA:1,1\nend_of_record\nSF:b.c\nDA:2,0\nend_of_record' ]] \
  || fail "merged: $(cat "$T/cov/_coverage.dat")"
grep -q "coverage merging is not available offline; concatenated 2 lcov file(s)" "$T/err" || fail "stderr: $(cat "$T/err")"
# Again over its own output: the output is not an input.
bash "$merger" --coverage_dir="$T/cov" --output_file="$T/cov/_coverage.dat" 2> /dev/null
[[ "$(grep -c end_of_record "$T/cov/_coverage.dat")" == 2 ]] || fail "read its own output"
bash "$merger" --coverage_dir="$T/empty" --output_file="$T/out/none.dat" 2> /dev/null
[[ $? == 0 && -f "$T/out/none.dat" && ! -s "$T/out/none.dat" ]] || fail "no input: an empty output"
printf '%s\n' "$T/cov/a/one.dat" > "$T/reports"
bash "$merger" --reports_file="$T/reports" --output_file="$T/combined.dat" 2> /dev/null
grep -q "SF:a.c" "$T/combined.dat" || fail "--reports_file"
bash "$merger" --coverage_dir="$T/cov" > /dev/null 2>&1
[[ $? == 2 ]] || fail "no --output_file: exit 2"
finish
