#!/usr/bin/env bash
# record_growing_cache.sh on POCL: both traces of growing_cache.py, with sites (the layer's
# version 3, clpool.record's version 2), their frames naming
# the script by its repository-relative path (no checkout's absolute path); bad arguments exit 2.
#   record_growing_cache_test.sh CLPOOL CORE_SO PACKAGE_INIT_PY RECORD_SH
set -u
source "$(dirname "$0")/../dev/testing/test_lib.sh" || exit 1  # fail, die, finish
export CLPOOL="$(realpath "$1")"
core="$(realpath "$2")"
pkg="$(dirname "$(realpath "$3")")"
script="$4"  # not resolved: the script finds the repository (here, the runfiles) from its own path
T="${TEST_TMPDIR:-$(mktemp -d)}"
export POCL_CACHE_DIR="$T/pocl-cache" CLPOOL_PYTHONPATH="$T/site" PYTHONDONTWRITEBYTECODE=1
mkdir -p "$T/site/clpool" "$T/out"
cp "$pkg"/*.py "$T/site/clpool/"
cp "$core" "$T/site/clpool/_core.so"
unset OPENCL_LAYERS OCL_ICD_VENDORS

bash "$script" "$T/out" --requests 3 >"$T/log" 2>&1 || { fail "record_growing_cache.sh exit $?"; cat "$T/log"; }
for t in layer app; do
  trace="$T/out/growing_cache_$t.trace"
  version=2
  [[ $t == layer ]] && version=3
  head -1 "$trace" | grep -qx "clpool-trace $version" || fail "$t: not a version $version trace"
  grep -q '^frame [0-9]* py [0-9]* tools/replay/examples/growing_cache.py ResultCache.remember$' "$trace" ||
    fail "$t: no frame of ResultCache.remember in tools/replay/examples/growing_cache.py"
  bad="$(awk '$1 == "frame" && $5 ~ /^\// && $5 !~ /^\/(usr|lib|lib64)\//' "$trace")"
  [[ -z $bad ]] || fail "$t: absolute paths: $(head -2 <<<"$bad")"
  # 3 requests, each keeps one 1 MiB result: 3 cache blocks, named ResultCache.remember.
  echo "$t: $(grep -c ' alloc ' "$trace") allocations"
done
grep -q "served 3 requests" "$T/log" || fail "the program did not serve its requests: $(tail -3 "$T/log")"

echo "--- bad arguments: exit 2, nothing run"
rc=0; out="$(bash "$script" "$T/no/such/dir" 2>&1)" || rc=$?
[[ $rc == 2 && "$out" == *"$T/no/such/dir is not a directory"* ]] || fail "missing OUT_DIR: exit $rc: $out"
rc=0; out="$(bash "$script" 2>&1)" || rc=$?
[[ $rc == 2 && "$out" == *"OUT_DIR"* ]] || fail "no OUT_DIR: exit $rc: $out"
finish
