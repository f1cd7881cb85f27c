#!/bin/bash
# Runs a Python test of the clpool package with Debian's /usr/bin/python3 (PyOpenCL's Python).
#   run_py_test.sh CORE_SO PACKAGE_INIT_PY pocl|mockcl LIBMOCKCL_SO TEST_PY [CLPOOL_REPLAY [PYOPENCL]]
# Builds a site directory in $TEST_TMPDIR holding clpool/ (the package's .py files and _core.so),
# and points the ICD loader at POCL (the system's vendors) or at the mock ICD alone. PYOPENCL: a
# file in the package directory of another PyOpenCL (site/pyopencl/__init__.py of
# python/compat/build_pyopencl.sh's site), whose site goes first on PYTHONPATH; without it,
# Debian's PyOpenCL.
set -euo pipefail
# From the repository's root or Bazel's runfiles root (where sh_test starts).
# shellcheck source=python/tests/python_env.sh
source python/tests/python_env.sh
core="$(realpath "$1")"
pkg="$(dirname "$(realpath "$2")")"
mode="$3"
mockcl_so="$(realpath "$4")"
test_py="$(realpath "$5")"
export CLPOOL_REPLAY="${6:+$(realpath "$6")}"
pyopencl_site=""
[[ -n "${7:-}" ]] && pyopencl_site="$(pyopencl_site_of "$7")"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
site="$tmp/site"
clpool_site "$core" "$pkg" "$site"
export PYTHONPATH="${pyopencl_site:+$pyopencl_site:}$site:$(dirname "$test_py")" PYTHONDONTWRITEBYTECODE=1
export CLPOOL_TEST_MODE="$mode"
clpool_caches "$tmp"
export CLPOOL_PYTHON_README="$(realpath "$(dirname "$test_py")/../README.md")"
clpool_sanitizer_env "$core"
case "$mode" in
  pocl) ;;
  mockcl)
    vendors="$tmp/vendors"
    mockcl_icd "$vendors" "$mockcl_so"  # test_lib.sh, through python_env.sh
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
