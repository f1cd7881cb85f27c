#!/usr/bin/env bash
# PyOpenCL's own tests with a memory pool as the allocator of every array (pool_plugin.py).
#
#   python/pyopencl_suite/run_pyopencl_suite.sh --pyopencl-src DIR|ARCHIVE
#       [--device pocl|mockcl|system] [--pool clpool|pyopencl|none] [--files test_array.py,...]
#       [--select EXPR] [--pyopencl-site DIR] [--mockcl-so PATH] [--site DIR] [--out DIR]
#       [--python PATH] [--strict]
#
# DIR is a checkout of https://github.com/inducer/pyopencl, or ARCHIVE a `git archive` .tar.gz of
# it (../shared/sources/pyopencl-2026.1.2.tar.gz), at the tag of the PyOpenCL under test: Debian's
# python3-pyopencl v2022.3.1 by default, or the one in --pyopencl-site DIR (a site made by
# python/compat/build_pyopencl.sh, put first on PYTHONPATH). A checkout whose version is not the
# loaded PyOpenCL's is refused. CLPOOL_PYOPENCL_SRC may name DIR instead. Without one it prints one
# "skipped" line and exits 0. The tests run with /usr/bin/python3 (or --python PATH), from a copy
# of the test/ folder, against one ICD: POCL (the system's .icd), mockcl backed by POCL
# (MOCKCL_BACKING=pocl, so kernels run), or with `system` whatever OCL_ICD_VENDORS names (a GPU's
# driver: tools/dev/gpu/run_on_gpu.sh). --files (default test_array.py, test_algorithm.py, test_clmath.py,
# test_wrapper.py, test_enqueue_copy.py) and --select (a pytest -k expression, e.g.
# "not test_bitwise") choose the tests. --site is a folder holding the clpool package
# (tools/python_install.sh DIR); the default builds one in the output folder. Prints the pass/fail/skip/error counts from pytest's JUnit
# XML and writes results.xml and log.txt to --out (default: a temporary folder).
# Exit status: 0 when pytest ran (whatever the counts; with --strict, only when no test failed or
# errored, else 1), 2 bad usage or a missing input.
set -euo pipefail
usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; }
strict=0
src="${CLPOOL_PYOPENCL_SRC:-}" device=pocl pool=clpool mockcl_so="" site="" out="" pyopencl_site=""
python=/usr/bin/python3
files="test_array.py,test_algorithm.py,test_clmath.py,test_wrapper.py,test_enqueue_copy.py"
select=""
value() {  # value FLAG ARGS...: the flag's argument, or exit 2
  if (($# < 2)) || [[ -z "$2" ]]; then
    echo "run_pyopencl_suite.sh: $1 needs a value" >&2
    exit 2
  fi
  printf '%s' "$2"
}
while (($#)); do
  case "$1" in
    --pyopencl-src) src="$(value "$@")" || exit 2; shift 2 ;;
    --device) device="$(value "$@")" || exit 2; shift 2 ;;
    --pool) pool="$(value "$@")" || exit 2; shift 2 ;;
    --files) files="$(value "$@")" || exit 2; shift 2 ;;
    --select) select="$(value "$@")" || exit 2; shift 2 ;;
    --pyopencl-site) pyopencl_site="$(value "$@")" || exit 2; shift 2 ;;
    --mockcl-so) mockcl_so="$(value "$@")" || exit 2; shift 2 ;;
    --site) site="$(value "$@")" || exit 2; shift 2 ;;
    --out) out="$(value "$@")" || exit 2; shift 2 ;;
    --python) python="$(value "$@")" || exit 2; shift 2 ;;
    --strict) strict=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "run_pyopencl_suite.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
case "$device" in pocl | mockcl | system) ;; *) echo "run_pyopencl_suite.sh: --device must be pocl, mockcl or system" >&2; exit 2 ;; esac
[[ -x "$python" && ! -d "$python" ]] || { echo "run_pyopencl_suite.sh: --python $python is not an executable file" >&2; exit 2; }
case "$pool" in clpool | pyopencl | none) ;; *) echo "run_pyopencl_suite.sh: --pool must be clpool, pyopencl or none" >&2; exit 2 ;; esac
if [[ -z "$src" ]]; then
  echo "run_pyopencl_suite.sh: skipped (no PyOpenCL checkout: --pyopencl-src DIR or CLPOOL_PYOPENCL_SRC)"
  exit 0
fi
if [[ -n "$pyopencl_site" ]]; then
  [[ -f "$pyopencl_site/pyopencl/__init__.py" ]] ||
    { echo "run_pyopencl_suite.sh: --pyopencl-site $pyopencl_site holds no pyopencl package" >&2; exit 2; }
  pyopencl_site="$(cd "$pyopencl_site" && pwd)"
fi
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=tools/dev/testing/test_lib.sh
source "$repo/tools/dev/testing/test_lib.sh"  # mockcl_icd
out="${out:-$(mktemp -d)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
if [[ -f "$src" && "$src" == *.tar.gz ]]; then  # a git archive: its test/ folder and version
  mkdir -p "$out/src"
  tar -xzf "$src" -C "$out/src" --strip-components=1 --wildcards '*/test/*' '*/pyproject.toml' 2>/dev/null ||
    tar -xzf "$src" -C "$out/src" --strip-components=1 --wildcards '*/test/*' ||
    { echo "run_pyopencl_suite.sh: $src is not a PyOpenCL archive with a test/ folder" >&2; exit 2; }
  src="$out/src"
fi
[[ -d "$src/test" ]] || { echo "run_pyopencl_suite.sh: $src has no test/ folder (a PyOpenCL checkout?)" >&2; exit 2; }
loaded="$(PYTHONPATH="$pyopencl_site" "$python" -c 'import pyopencl; print(pyopencl.VERSION_TEXT)')" ||
  { echo "run_pyopencl_suite.sh: $python cannot import pyopencl" >&2; exit 2; }
wanted=""
if [[ -f "$src/pyproject.toml" ]]; then
  wanted="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$src/pyproject.toml" | head -1)"
fi
if [[ -n "$wanted" && "$wanted" != "$loaded" ]]; then
  echo "run_pyopencl_suite.sh: the tests are PyOpenCL $wanted's but PyOpenCL $loaded is loaded" \
    "(--pyopencl-site names another)" >&2
  exit 2
fi
IFS=, read -r -a names <<< "$files"
for f in "${names[@]}"; do
  [[ -f "$src/test/$f" ]] || { echo "run_pyopencl_suite.sh: $src/test/$f does not exist" >&2; exit 2; }
done
if [[ -z "$site" ]]; then
  site="$out/site"
  (cd "$repo" && bash tools/python_install.sh "$site") >/dev/null
fi
[[ -f "$site/clpool/__init__.py" ]] || { echo "run_pyopencl_suite.sh: $site holds no clpool package" >&2; exit 2; }
rm -rf "$out/test" && cp -r "$src/test" "$out/test"
export PYTHONPATH="${pyopencl_site:+$pyopencl_site:}$here:$site" CLPOOL_SUITE_POOL="$pool"
export PYTHONDONTWRITEBYTECODE=1 XDG_CACHE_HOME="${XDG_CACHE_HOME:-$out/xdg-cache}"
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-$out/pocl-cache}"
if [[ "$device" == mockcl ]]; then
  [[ -f "$mockcl_so" ]] || { echo "run_pyopencl_suite.sh: --device mockcl needs --mockcl-so PATH" >&2; exit 2; }
  mockcl_icd "$out/vendors" "$mockcl_so"
  export OCL_ICD_VENDORS="$out/vendors" MOCKCL_BACKING=pocl MOCKCL_DEVICES="${MOCKCL_DEVICES:-gpu-4g}"
fi
cd "$out/test"
rc=0
extra=()
[[ -n "$select" ]] && extra=(-k "$select")
"$python" -m pytest -p pool_plugin -q -rs --durations=10 --junitxml="$out/results.xml" \
  "${extra[@]}" "${names[@]}" > "$out/log.txt" 2>&1 || rc=$?
# pytest: 0 all passed, 1 some failed; anything else means it did not run properly.
if ((rc > 1)); then
  tail -20 "$out/log.txt" >&2
  echo "run_pyopencl_suite.sh: pytest exited $rc" >&2
  exit 2
fi
"$python" - "$out/results.xml" "$device" "$pool" "$loaded" "$strict" <<'PY' || rc=$?
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else list(root)
total = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
passed = total["tests"] - total["failures"] - total["errors"] - total["skipped"]
print(f"PyOpenCL {sys.argv[4]}, device {sys.argv[2]}, pool {sys.argv[3]}: {passed} passed, "
      f"{total['failures']} failed, {total['errors']} errors, {total['skipped']} skipped of "
      f"{total['tests']}")
for s in suites:
    for case in s.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            print(f"  not passed: {case.get('classname')}.{case.get('name')}")
sys.exit(1 if sys.argv[5] == "1" and total["failures"] + total["errors"] else 0)
PY
grep -E '^pool plugin' "$out/log.txt" || true
echo "log: $out/log.txt"
if ((strict && rc != 0)); then
  echo "run_pyopencl_suite.sh: --strict: tests failed (above)" >&2
  exit 1
fi
