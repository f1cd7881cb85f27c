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
# With it, what the pytest plugin runs (python/README.md, "Device-memory budgets in pytest"): the
# layer, the mock ICD and clpool_replay, copied to clpool/_lib/.
bazel build --config=opt --symlink_prefix=/ //python:_core.so //tools/layer:libclpool_layer.so \
  //mockcl:libmockcl.so //tools/replay:clpool_replay >&2
bin="$(bazel info --config=opt bazel-bin 2>/dev/null)"
core="$bin/python/_core.so"
libs=("$bin/tools/layer/libclpool_layer.so" "$bin/mockcl/libmockcl.so" "$bin/tools/replay/clpool_replay")
suffix="$($py -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"

if [[ "${1:-}" == "--wheel" ]]; then
  out="$(realpath -m "${2:?--wheel needs an output directory}")"
  mkdir -p "$out"
  exec $py python/make_wheel.py python/clpool "$core" "$suffix" "$out" "${libs[@]}"
fi

dest="${1:-$($py -c 'import site; print(site.getusersitepackages())')}"
mkdir -p "$dest/clpool"
cp python/clpool/*.py "$dest/clpool/"
install -m 0755 "$core" "$dest/clpool/_core$suffix"
mkdir -p "$dest/clpool/_lib"
install -m 0755 "${libs[@]}" "$dest/clpool/_lib/"
echo "installed clpool into $dest" >&2
