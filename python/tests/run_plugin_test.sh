#!/bin/bash
# Runs a pytest file that tests clpool's pytest plugin (with pytester) using Debian's
# /usr/bin/python3 and pytest:
#   run_plugin_test.sh CORE_SO PACKAGE_INIT_PY LAYER_SO LIBMOCKCL_SO CLPOOL_REPLAY TEST_PY [PYOPENCL]
# Builds a site directory in $TEST_TMPDIR holding clpool/ (the package's .py files and _core.so)
# and points the plugin at the layer, the mock and clpool_replay through the variables it reads
# ($LIBCLPOOL_LAYER_SO, $LIBMOCKCL_SO, $CLPOOL_REPLAY). PYOPENCL: a file in the package directory
# of another PyOpenCL (python/compat/build_pyopencl.sh's site), whose site goes first on
# PYTHONPATH; without it, Debian's PyOpenCL. Extra pytest arguments: $PLUGIN_TEST_ARGS.
set -euo pipefail
core="$(realpath "$1")"
pkg="$(dirname "$(realpath "$2")")"
export LIBCLPOOL_LAYER_SO="$(realpath "$3")"
export LIBMOCKCL_SO="$(realpath "$4")"
export CLPOOL_REPLAY="$(realpath "$5")"
test_py="$(realpath "$6")"
pyopencl_site=""
if [[ -n "${7:-}" ]]; then
  pyopencl_site="$(cd "$(dirname "$7")/.." && pwd)"
fi
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
site="$tmp/site"
mkdir -p "$site/clpool"
cp "$pkg"/*.py "$site/clpool/"
cp "$core" "$site/clpool/_core.so"
export PYTHONPATH="${pyopencl_site:+$pyopencl_site:}$site" PYTHONDONTWRITEBYTECODE=1
export POCL_CACHE_DIR="$tmp/pocl-cache" XDG_CACHE_HOME="$tmp/xdg-cache"
unset OCL_ICD_VENDORS MOCKCL_DEVICES MOCKCL_BACKING OPENCL_LAYERS
/usr/bin/python3 -c 'import pyopencl; print("PyOpenCL", pyopencl.VERSION_TEXT, "from", pyopencl.__file__)'
cd "$tmp"
# shellcheck disable=SC2086
exec /usr/bin/python3 -m pytest -p pytester -p no:cacheprovider -v -rfE \
  --basetemp="$tmp/pytester" ${PLUGIN_TEST_ARGS:-} "$test_py"
