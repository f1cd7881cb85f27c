#!/usr/bin/env bash
# The sites story end to end, over POCL: growing_cache.py (PyOpenCL) and growing_cache_c (C) are
# recorded with `clpool record` (stacks by default), replayed to an out-of-memory, and the text
# report and the HTML page name the function that holds the memory: ResultCache.remember for
# Python, cache_put for C (from native frames). Then growing_cache.py over clpool's own pool
# (--clpool-pool): the innermost frames of each allocation are in clpool/_core.so, and every site
# is still named by a function of the program.
#   sites_example_test.sh CLPOOL CLPOOL_REPLAY GROWING_CACHE_PY GROWING_CACHE_C CORE_SO PACKAGE_INIT_PY
set -u
source "$(dirname "$0")/../dev/testing/test_lib.sh" || exit 1  # fail, die, finish
CLPOOL="$(realpath "$1")"
REPLAY="$(realpath "$2")"
PY_EXAMPLE="$(realpath "$3")"
C_EXAMPLE="$(realpath "$4")"
CORE_SO="$(realpath "$5")"
PACKAGE="$(dirname "$(realpath "$6")")"
T="${TEST_TMPDIR:-$(mktemp -d)}"
cd "$T" || exit 1
export POCL_CACHE_DIR="$T/pocl-cache"
unset OPENCL_LAYERS OCL_ICD_VENDORS
[[ -n "${ASAN_OPTIONS:-}" ]] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
# Under --config=asan the layer is instrumented: the (uninstrumented) Python interpreter it is
# loaded into must load the sanitizer runtimes first.
preload_env "$REPLAY"
py_env=("${preload_env[@]}")

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
  # The page's documents: the result exactly as --json writes it, and the replay it shows, whose
  # first live site at the failure is the table the page draws.
  "$REPLAY" --no-progress "$trace" --capacity 32MiB --json >"$T/$name.json"
  /usr/bin/python3 - "$T/$name.html" "$fn" "$T/$name.json" <<'PY' || fail "$name: the page does not name $fn, or its result is not --json's"
import json, re, sys
html = open(sys.argv[1]).read()
def inline(name):
    return json.loads(re.search(r'<script type="application/json" id="%s">(.*?)</script>' % name, html, re.S).group(1))
result, replay = inline("clpool-result"), inline("clpool-replay")
assert result == json.load(open(sys.argv[3])), "the page's result differs from --json's"
assert replay == result["results"][0]["replay"], "the page's replay is not the result's first"
site = replay["oom"]["live_sites"][0]["site"]
print("page top site:", site)
sys.exit(0 if site.startswith(sys.argv[2] + " ") else 1)
PY
}

echo "=== PyOpenCL: growing_cache.py"
"${py_env[@]}" "$CLPOOL" record --out "$T/py.trace" -- /usr/bin/python3 "$PY_EXAMPLE" --requests 40 >"$T/py.log" 2>&1 ||
  { fail "recording growing_cache.py"; tail -5 "$T/py.log"; }
head -1 "$T/py.trace" | grep -q 'clpool-trace 3' || fail "py.trace is not version 3"
grep -q '^frame .* py .*growing_cache.py ResultCache.remember$' "$T/py.trace" || fail "no Python frame for ResultCache.remember"
check py "$T/py.trace" ResultCache.remember

echo "=== C: growing_cache_c"
"$CLPOOL" record --out "$T/c.trace" -- "$C_EXAMPLE" 40 >"$T/c.log" 2>&1 || { fail "recording growing_cache_c"; tail -5 "$T/c.log"; }
grep -q '^frame .* native .* cache_put$' "$T/c.trace" || fail "no native frame for cache_put"
check c "$T/c.trace" cache_put

echo "=== PyOpenCL over clpool.pyopencl.MemoryPool: growing_cache.py --clpool-pool"
mkdir -p "$T/site/clpool"
cp "$PACKAGE"/*.py "$T/site/clpool/"
cp "$CORE_SO" "$T/site/clpool/_core.so"
PYTHONPATH="$T/site" PYTHONDONTWRITEBYTECODE=1 "${py_env[@]}" "$CLPOOL" record --out "$T/pool.trace" -- \
  /usr/bin/python3 "$PY_EXAMPLE" --requests 40 --clpool-pool >"$T/pool.log" 2>&1 ||
  { fail "recording growing_cache.py --clpool-pool"; tail -5 "$T/pool.log"; }
grep -q "^frame .* native 0 $T/site/clpool/_core.so " "$T/pool.trace" || fail "no frame in clpool/_core.so"
out="$("$REPLAY" --no-progress "$T/pool.trace" --capacity 32MiB --full-stacks 2>&1)"
[[ $? == 1 ]] || fail "pool: clpool_replay did not run out of memory: $out"
# The innermost frame of the failing request is clpool's; the site named is the program's.
first="$(sed -n "/failing request's site/{n;p;q}" <<<"$out")"
[[ "$first" == *"clpool/_core.so)" ]] || fail "pool: the failing request's innermost frame is '$first', want one in clpool/_core.so"
names="$(sed -n -e "s/^  failing request's site *//p" -e 's/^  [0-9]*\. //p' <<<"$out")"
echo "$names"
[[ -n "$names" ]] || fail "pool: no sites in the report"
while IFS= read -r name; do
  [[ "$name" == *"growing_cache.py:"*")" ]] || fail "pool: site '$name' is not the program's"
done <<<"$names"

finish
