#!/bin/bash
# Runs a Python test of the clpool package with Debian's /usr/bin/python3 (PyOpenCL's Python).
#   run_py_test.sh CORE_SO PACKAGE_INIT_PY pocl|mockcl LIBMOCKCL_SO TEST_PY [CLPOOL_REPLAY [PYOPENCL]]
# Builds a site directory in $TEST_TMPDIR holding clpool/ (the package's .py files and _core.so),
# and points the ICD loader at POCL (the system's vendors) or at the mock ICD alone. PYOPENCL: a
# file in the package directory of another PyOpenCL (site/pyopencl/__init__.py of
# python/compat/build_pyopencl.sh's site), whose site goes first on PYTHONPATH; without it,
# Debian's PyOpenCL.
set -euo pipefail
core="$(realpath "$1")"
pkg="$(dirname "$(realpath "$2")")"
mode="$3"
mockcl_so="$(realpath "$4")"
test_py="$(realpath "$5")"
export CLPOOL_REPLAY="${6:+$(realpath "$6")}"
pyopencl_site=""
if [[ -n "${7:-}" ]]; then
  # The site's directory as the runfiles tree has it (symlinks to each file), not realpath's.
  pyopencl_site="$(cd "$(dirname "$7")/.." && pwd)"
fi
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
site="$tmp/site"
mkdir -p "$site/clpool"
cp "$pkg"/*.py "$site/clpool/"
cp "$core" "$site/clpool/_core.so"
export PYTHONPATH="${pyopencl_site:+$pyopencl_site:}$site:$(dirname "$test_py")" PYTHONDONTWRITEBYTECODE=1
export POCL_CACHE_DIR="$tmp/pocl-cache" CLPOOL_TEST_MODE="$mode"
# PyOpenCL's binary cache lives under XDG_CACHE_HOME: a test's programs must not come from another
# run's cache (a build under another configuration, or another device's binaries).
export XDG_CACHE_HOME="$tmp/xdg-cache"
export CLPOOL_PYTHON_README="$(realpath "$(dirname "$test_py")/../README.md")"
# Under --config=asan the extension (and mockcl) are instrumented: the runtimes must be loaded
# first into the uninstrumented interpreter. Python frees little at exit, so no leak check.
if ldd "$core" | grep libasan >/dev/null; then  # not -q: ldd must not die of SIGPIPE (pipefail)
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
case "$mode" in
  pocl) ;;
  mockcl)
    vendors="$tmp/vendors"
    mkdir -p "$vendors"
    echo "$mockcl_so" > "$vendors/mockcl.icd"
    export OCL_ICD_VENDORS="$vendors" OCL_ICD_PLATFORM_SORT=none
    export MOCKCL_DEVICES="${MOCKCL_DEVICES:-gpu-64m;gpu-64m:semantics=deferred,name=deferred}"
    ;;
  *) echo "run_py_test.sh: mode must be pocl or mockcl, not '$mode'" >&2; exit 2 ;;
esac
cd "$tmp"
if [[ "$mode" == pocl ]]; then
  exec /usr/bin/python3 "$test_py" -v
fi
# On mockcl, also check that nothing OpenCL is left at exit (the mock's exit report names it).
err="$tmp/stderr.txt"
/usr/bin/python3 "$test_py" -v 2> >(tee "$err" >&2)
sleep 0.2
if grep "mockcl: objects alive at process exit" "$err"; then
  echo "FAIL: OpenCL objects leaked (above)" >&2
  exit 1
fi
echo "no OpenCL object alive at exit"
