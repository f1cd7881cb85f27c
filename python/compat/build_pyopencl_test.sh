#!/usr/bin/env bash
# build_pyopencl.sh's refusals, without building anything: bad arguments exit 2, a directory
# without the archives exits 3 naming each missing archive and where to get it, a non-empty OUT_DIR
# it did not make is left alone.
set -uo pipefail
script="$(realpath "$1")"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
cd "$tmp"
source_fail() { echo "FAIL: $*" >&2; exit 1; }

bash "$script" >out 2>err; rc=$?
[[ $rc == 2 ]] || source_fail "no arguments: exit $rc"
grep -q "usage:" err || source_fail "no usage line: $(cat err)"

mkdir -p empty
bash "$script" empty site >out 2>err; rc=$?
[[ $rc == 3 ]] || source_fail "empty SRC_DIR: exit $rc"
for name in pyopencl compyte nanobind robin-map pytools typing_extensions; do
  grep -q "  $name-\*.tar.gz: git archive of https://github.com/" err ||
    source_fail "missing $name not named: $(cat err)"
done
[[ ! -e site ]] || source_fail "OUT_DIR made although nothing was built"

bash "$script" nowhere site >out 2>err; rc=$?
[[ $rc == 3 ]] || source_fail "missing SRC_DIR: exit $rc"
grep -q "SRC_DIR 'nowhere' is not a directory" err || source_fail "$(cat err)"

# Only pyopencl missing: the message names it alone.
mkdir -p partial
for name in compyte-x nanobind-x robin-map-x pytools-x typing_extensions-x; do
  : > "partial/$name.tar.gz"
done
bash "$script" partial site >out 2>err; rc=$?
[[ $rc == 3 ]] || source_fail "partial SRC_DIR: exit $rc"
grep -q "pyopencl-\*.tar.gz" err || source_fail "pyopencl not named: $(cat err)"
if grep -q "nanobind-\*.tar.gz" err; then source_fail "nanobind named though present"; fi
echo "PASS"
