#!/usr/bin/env bash
# Installs the clpool Python package (python/clpool/*.py + the Bazel-built extension) for
# /usr/bin/python3, offline. Usage:
#   tools/python_install.sh                 # into python3's user site (~/.local/lib/python3.11/...)
#   tools/python_install.sh DIR             # into DIR (then PYTHONPATH=DIR)
#   tools/python_install.sh --wheel OUTDIR  # a wheel built with python3's zipfile; pip-installable
# It says what it builds, then Bazel's progress (a line at least every 10 s when stderr is not a
# terminal), then each step with the time since the start. How long it takes: python/README.md,
# "Install" (a cold build, a fresh Bazel output base and no disk cache, takes minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
py=/usr/bin/python3
start=$SECONDS
say() { echo "python_install: [$((SECONDS - start)) s] $*" >&2; }
# Optimised: pybind11 at -O0 (Bazel's default fastbuild) makes a pool hit several times slower.
# --symlink_prefix=/: no convenience symlinks, so bazel-bin keeps pointing at the default build
# that the READMEs' bazel-bin/... paths name (bazel info below finds the opt tree).
# With it, what the pytest plugin runs (python/README.md, "Device-memory budgets in pytest"): the
# layer, the mock ICD and clpool_replay, copied to clpool/_lib/.
targets=(//python:_core.so //tools/layer:libclpool_layer.so //mockcl:libmockcl.so //tools/replay:clpool_replay)
say "1/2 building ${targets[*]} (Bazel, --config=opt): the extension clpool._core, the OpenCL layer," \
  "the mock ICD and clpool_replay (a first build compiles them and their dependencies: minutes;" \
  "later ones reuse Bazel's outputs: seconds)"
bazel build --config=opt --symlink_prefix=/ --show_progress_rate_limit=10 "${targets[@]}" >&2
bin="$(bazel info --config=opt bazel-bin 2>/dev/null)"
core="$bin/python/_core.so"
libs=("$bin/tools/layer/libclpool_layer.so" "$bin/mockcl/libmockcl.so" "$bin/tools/replay/clpool_replay")
suffix="$($py -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"

if [[ "${1:-}" == "--wheel" ]]; then
  out="$(realpath -m "${2:?--wheel needs an output directory}")"
  mkdir -p "$out"
  say "2/2 the wheel, into $out (python/make_wheel.py)"
  $py python/make_wheel.py python/clpool "$core" "$suffix" "$out" "${libs[@]}"
  say "done"
  exit 0
fi

dest="${1:-$($py -c 'import site; print(site.getusersitepackages())')}"
say "2/2 copying clpool/*.py, clpool/_core$suffix and clpool/_lib/ into $dest"
mkdir -p "$dest/clpool"
cp python/clpool/*.py "$dest/clpool/"
install -m 0755 "$core" "$dest/clpool/_core$suffix"
mkdir -p "$dest/clpool/_lib"
install -m 0755 "${libs[@]}" "$dest/clpool/_lib/"
say "installed clpool into $dest"
