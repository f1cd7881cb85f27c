#!/usr/bin/env bash
# Installs the clpool Python package (python/clpool/*.py + the Bazel-built extension) for
# /usr/bin/python3, offline. Usage:
#   tools/python_install.sh                 # into python3's user site (~/.local/lib/python3.11/...)
#   tools/python_install.sh DIR             # into DIR (then PYTHONPATH=DIR)
#   tools/python_install.sh --wheel OUTDIR  # a wheel built with python3's zipfile; pip-installable
set -euo pipefail
cd "$(dirname "$0")/.."
py=/usr/bin/python3
# Optimised: pybind11 at -O0 (Bazel's default fastbuild) makes a pool hit several times slower.
# --symlink_prefix=/: no convenience symlinks, so bazel-bin keeps pointing at the default build
# that the READMEs' bazel-bin/... paths name (bazel info below finds the opt tree).
bazel build --config=opt --symlink_prefix=/ //python:_core.so >&2
core="$(bazel info --config=opt bazel-bin 2>/dev/null)/python/_core.so"
suffix="$($py -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"

if [[ "${1:-}" == "--wheel" ]]; then
  out="$(realpath -m "${2:?--wheel needs an output directory}")"
  mkdir -p "$out"
  exec $py python/make_wheel.py python/clpool "$core" "$suffix" "$out"
fi

dest="${1:-$($py -c 'import site; print(site.getusersitepackages())')}"
mkdir -p "$dest/clpool"
cp python/clpool/*.py "$dest/clpool/"
install -m 0755 "$core" "$dest/clpool/_core$suffix"
echo "installed clpool into $dest" >&2
