#!/usr/bin/env bash
# The sites story end to end, over POCL: growing_cache.py (PyOpenCL) and growing_cache_c (C) are
# recorded with `clpool record` (stacks by default), replayed to an out-of-memory, and the text
# report and the HTML page name the function that holds the memory: ResultCache.remember for
# Python, cache_put for C (from native frames).
#   sites_example_test.sh CLPOOL CLPOOL_REPLAY GROWING_CACHE_PY GROWING_CACHE_C
set -u
CLPOOL="$(realpath "$1")"
REPLAY="$(realpath "$2")"
PY_EXAMPLE="$(realpath "$3")"
C_EXAMPLE="$(realpath "$4")"
T="${TEST_TMPDIR:-$(mktemp -d)}"
cd "$T" || exit 1
export POCL_CACHE_DIR="$T/pocl-cache"
unset OPENCL_LAYERS OCL_ICD_VENDORS
[[ -n "${ASAN_OPTIONS:-}" ]] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# check NAME TRACE FUNCTION: replays TRACE at 32 MiB; the report's top site and the page name FUNCTION.
check() {
  local name=$1 trace=$2 fn=$3
  echo "--- $name: the report and the page name $fn"
  out="$("$REPLAY" --no-progress "$trace" --capacity 32MiB --html "$T/$name.html" 2>&1)"
  rc=$?
  [[ $rc == 1 ]] || fail "$name: clpool_replay exit $rc, want 1 (out of memory): $out"
  top="$(grep -A1 'sites holding the most device memory' <<<"$out" | tail -1)"
  [[ "$top" == "  1. $fn "* ]] || fail "$name: top site is '$top', want $fn"
  echo "$out" | sed -n '/failing request/,/full-stacks/p'
  # The page's data: the first live site at the failure (the table the page draws).
  /usr/bin/python3 - "$T/$name.html" "$fn" <<'PY' || fail "$name: the page does not name $2"
import json, re, sys
html = open(sys.argv[1]).read()
data = json.loads(re.search(r'<script type="application/json" id="clpool-data">(.*?)</script>', html, re.S).group(1))
site = data["oom"]["live_sites"][0]["site"]
print("page top site:", site)
sys.exit(0 if site.startswith(sys.argv[2] + " ") else 1)
PY
}

echo "=== PyOpenCL: growing_cache.py"
"$CLPOOL" record --out "$T/py.trace" -- /usr/bin/python3 "$PY_EXAMPLE" --requests 40 >"$T/py.log" 2>&1 ||
  { fail "recording growing_cache.py"; tail -5 "$T/py.log"; }
head -1 "$T/py.trace" | grep -q 'clpool-trace 2' || fail "py.trace is not version 2"
grep -q '^frame .* py .*growing_cache.py ResultCache.remember$' "$T/py.trace" || fail "no Python frame for ResultCache.remember"
check py "$T/py.trace" ResultCache.remember

echo "=== C: growing_cache_c"
"$CLPOOL" record --out "$T/c.trace" -- "$C_EXAMPLE" 40 >"$T/c.log" 2>&1 || { fail "recording growing_cache_c"; tail -5 "$T/c.log"; }
grep -q '^frame .* native .* cache_put$' "$T/c.trace" || fail "no native frame for cache_put"
check c "$T/c.trace" cache_put

[[ $fails == 0 ]] || { echo "$fails failed"; exit 1; }
echo "PASS"
