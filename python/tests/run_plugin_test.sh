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
# From the repository's root or Bazel's runfiles root (where sh_test starts).
# shellcheck source=python/tests/python_env.sh
source python/tests/python_env.sh
core="$(realpath "$1")"
pkg="$(dirname "$(realpath "$2")")"
export LIBCLPOOL_LAYER_SO="$(realpath "$3")"
export LIBMOCKCL_SO="$(realpath "$4")"
export CLPOOL_REPLAY="$(realpath "$5")"
test_py="$(realpath "$6")"
pyopencl_site=""
[[ -n "${7:-}" ]] && pyopencl_site="$(pyopencl_site_of "$7")"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
site="$tmp/site"
clpool_site "$core" "$pkg" "$site"
export PYTHONPATH="${pyopencl_site:+$pyopencl_site:}$site" PYTHONDONTWRITEBYTECODE=1
clpool_caches "$tmp"
unset OCL_ICD_VENDORS MOCKCL_DEVICES MOCKCL_BACKING OPENCL_LAYERS
# Every pytester child inherits the environment; its tests check what kernels computed.
clpool_sanitizer_env "$core" pocl
/usr/bin/python3 -c 'import pyopencl; print("PyOpenCL", pyopencl.VERSION_TEXT, "from", pyopencl.__file__)'
cd "$tmp"
# shellcheck disable=SC2086
exec /usr/bin/python3 -m pytest -p pytester -p no:cacheprovider -v -rfE \
  --basetemp="$tmp/pytester" ${PLUGIN_TEST_ARGS:-} "$test_py"
