#!/usr/bin/env bash
# build_pyopencl.sh's refusals, without building anything: bad arguments exit 2, a directory
# without the archives exits 3 naming each missing archive and where to get it, a non-empty OUT_DIR
# it did not make is left alone, an archive SHA256SUMS does not list or match, or a corrupt one,
# exits 1 naming it with the expected and the found sha256.
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
# Archives that are there but cannot be trusted, named with the expected and the found sha256,
# before any tool is looked for or anything is unpacked: one SHA256SUMS does not list, one that
# does not match it, and one that is not gzip (with no SHA256SUMS: every archive's sha256 noted).
mkdir -p sums
for name in pyopencl-2026.1.2 compyte-46d7320a nanobind-2.15.0 robin-map-4ec1bf19 pytools-2026.1.1 \
            typing_extensions-4.12.2; do
  echo "$name" | gzip > "sums/$name.tar.gz"
done
sum() { sha256sum < "sums/$1" | cut -d' ' -f1; }
(cd sums && sha256sum ./*.tar.gz | sed 's| \./| |' | grep -v nanobind > SHA256SUMS)
CLPOOL_CACHE_DIR="$tmp/cache" bash "$script" sums site >out 2>err; rc=$?
[[ $rc == 1 ]] || source_fail "unlisted archive: exit $rc: $(cat err)"
grep -qxF "build_pyopencl: sums/nanobind-2.15.0.tar.gz is not listed in sums/SHA256SUMS (found sha256 $(sum nanobind-2.15.0.tar.gz)): not checked, so not built; list it, or use the archive that is listed" err ||
  source_fail "unlisted archive not named with its sha256: $(cat err)"
(cd sums && sha256sum ./*.tar.gz | sed 's| \./| |' > SHA256SUMS)
good=$(sum pytools-2026.1.1.tar.gz)
echo "pytools, changed" | gzip > sums/pytools-2026.1.1.tar.gz
CLPOOL_CACHE_DIR="$tmp/cache" bash "$script" sums site >out 2>err; rc=$?
[[ $rc == 1 ]] || source_fail "mismatched archive: exit $rc: $(cat err)"
grep -qxF "build_pyopencl: sums/pytools-2026.1.1.tar.gz does not match sums/SHA256SUMS: expected sha256 $good, found $(sum pytools-2026.1.1.tar.gz) (a corrupt or different archive)" err ||
  source_fail "mismatch not named with both sha256: $(cat err)"
rm sums/SHA256SUMS
echo "not gzip" > sums/compyte-46d7320a.tar.gz
CLPOOL_CACHE_DIR="$tmp/cache" bash "$script" sums site >out 2>err; rc=$?
[[ $rc == 1 ]] || source_fail "corrupt archive: exit $rc: $(cat err)"
grep -qF "build_pyopencl: sums/compyte-46d7320a.tar.gz is corrupt (sha256 $(sum compyte-46d7320a.tar.gz)): gzip: stdin: not in gzip format" err ||
  source_fail "corrupt archive not named: $(cat err)"
grep -qxF "build_pyopencl: note: sums has no SHA256SUMS: pyopencl-2026.1.2.tar.gz not checked (sha256 $(sum pyopencl-2026.1.2.tar.gz))" err ||
  source_fail "unchecked archives not noted: $(cat err)"
[[ ! -e site && ! -e "$tmp/cache" ]] || source_fail "something was made from archives that cannot be trusted"
echo "PASS"
