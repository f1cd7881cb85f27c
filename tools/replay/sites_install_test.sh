#!/usr/bin/env bash
# A site is the program's own line wherever its PyOpenCL is installed (trace/library_frames.h):
# testdata/sites_install/sites_prog.py is recorded with `clpool record` over POCL with
#   - Debian's PyOpenCL 2022.3.1 in /usr/lib/python3/dist-packages;
#   - the same PyOpenCL copied to a plain directory on PYTHONPATH;
#   - given PYOPENCL2026 (python/compat's site): PyOpenCL 2026.1.2 (nanobind) from a plain
#     directory on PYTHONPATH, and installed in a virtualenv's site-packages;
# then replayed to an out-of-memory: the top site must be the program's line 14 (the innermost
# frames are PyOpenCL's _cl extension and pyopencl/array.py), the second the vendored helper,
# which --library-frames '*/vendor/*' turns into the program's line 15.
#   sites_install_test.sh CLPOOL CLPOOL_REPLAY SITES_PROG_PY [PYOPENCL2026_INIT_PY]
set -u
# From Bazel's runfiles root, where sh_test starts (this script also runs as
# //python/compat:sites_install_test_pyopencl2026).
source tools/dev/testing/test_lib.sh || exit 1  # fail, finish, preload_env
CLPOOL="$(realpath "$1")"
REPLAY="$(realpath "$2")"
PROG_DIR="$(dirname "$(realpath "$3")")"
SITE2026=""
[[ -n "${4:-}" ]] && SITE2026="$(cd "$(dirname "$4")/.." && pwd)"
T="${TEST_TMPDIR:-$(mktemp -d)}"
cd "$T" || exit 1
export POCL_CACHE_DIR="$T/pocl-cache" XDG_CACHE_HOME="$T/xdg" PYTHONDONTWRITEBYTECODE=1
unset OPENCL_LAYERS OCL_ICD_VENDORS PYTHONPATH
[[ -n "${ASAN_OPTIONS:-}" ]] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
preload_env "$REPLAY"
py_env=("${preload_env[@]}")
cp -r "$PROG_DIR" "$T/prog"

# record NAME PYTHON [PYTHONPATH]: records sites_prog.py and checks the site names.
record() {
  local name=$1 python=$2 path=${3:-}
  echo "=== $name"
  PYTHONPATH="$path" "${py_env[@]}" "$CLPOOL" record --out "$T/$name.trace" -- \
    "$python" "$T/prog/sites_prog.py" >"$T/$name.log" 2>&1 ||
    { fail "$name: recording failed"; tail -5 "$T/$name.log"; return; }
  grep -q "held 48 arrays" "$T/$name.log" || fail "$name: the program did not finish: $(tail -3 "$T/$name.log")"
  local version
  version="$(PYTHONPATH="$path" "$python" -c 'import pyopencl; print(pyopencl.VERSION_TEXT, pyopencl.__file__)')"
  echo "PyOpenCL $version"
  grep -q '^frame .* native .*_cl\.cpython-.*\.so ' "$T/$name.trace" ||
    fail "$name: no frame in PyOpenCL's _cl extension (the case this test is about)"
  out="$("$REPLAY" --no-progress "$T/$name.trace" --capacity 32MiB --full-stacks 2>&1)"
  [[ $? == 1 ]] || { fail "$name: clpool_replay did not run out of memory: $out"; return; }
  names="$(sed -n 's/^  [0-9]*\. //p' <<<"$out")"
  echo "$names"
  [[ "$(sed -n 1p <<<"$names")" == "<module> ($T/prog/sites_prog.py:14)" ]] ||
    fail "$name: top site '$(sed -n 1p <<<"$names")', want <module> (.../sites_prog.py:14)"
  [[ "$(sed -n 2p <<<"$names")" == "scratch ($T/prog/vendor/alloc_helpers.py:7)" ]] ||
    fail "$name: second site '$(sed -n 2p <<<"$names")', want scratch (.../alloc_helpers.py:7)"
  out="$("$REPLAY" --no-progress "$T/$name.trace" --capacity 32MiB --library-frames '*/vendor/*' 2>&1)"
  names="$(sed -n 's/^  [0-9]*\. //p' <<<"$out")"
  [[ "$(sed -n 2p <<<"$names")" == "<module> ($T/prog/sites_prog.py:15)" ]] ||
    fail "$name: with --library-frames, second site '$(sed -n 2p <<<"$names")', want line 15"
}

record debian-usr-lib /usr/bin/python3
mkdir -p "$T/elsewhere"
cp -r /usr/lib/python3/dist-packages/pyopencl "$T/elsewhere/"
record debian-elsewhere /usr/bin/python3 "$T/elsewhere"
grep -q "_cl.cpython.* $T/elsewhere/pyopencl/" <(grep '^frame' "$T/debian-elsewhere.trace" | sed 's/%2F/\//g') ||
  grep -q "^frame .* $T/elsewhere/pyopencl/" "$T/debian-elsewhere.trace" ||
  fail "debian-elsewhere: PyOpenCL was not loaded from $T/elsewhere"

if [[ -n "$SITE2026" ]]; then
  record pyopencl2026-pythonpath /usr/bin/python3 "$SITE2026"
  # A virtualenv (without pip: Debian's venv module needs python3-venv only for that).
  /usr/bin/python3 -m venv --without-pip --system-site-packages "$T/venv" ||
    fail "could not make a virtualenv"
  sp="$(echo "$T"/venv/lib/python3*/site-packages)"
  cp -rL "$SITE2026"/. "$sp/"
  record pyopencl2026-venv "$T/venv/bin/python3"
  grep -q "^frame .* $sp/pyopencl/" "$T/pyopencl2026-venv.trace" ||
    fail "pyopencl2026-venv: PyOpenCL was not loaded from the virtualenv"
else
  echo "PyOpenCL 2026 cases not run here: //python/compat:sites_install_test_pyopencl2026 runs them"
fi

finish
