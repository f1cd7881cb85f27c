#!/usr/bin/env bash
# Packs a Python that runs on the GPU machine (Ubuntu 24.04, whose python3 has no PyOpenCL) into
# one archive for run_on_gpu.sh's step `python`: Debian's python3.11 with its standard library,
# numpy, pytest and PyOpenCL's other dependencies, PyOpenCL 2026.1.2 built from ../shared/sources
# (python/compat/build_pyopencl.sh), the clpool package (tools/python_install.sh), PyOpenCL
# 2026.1.2's test/ folder, the suite runner, and every shared library they load that is not glibc's
# or libstdc++'s (numpy's BLAS and LAPACK, libgfortran, ...).
#
#   bash tools/dev/gpu/make_python_carry.sh DEST     # writes DEST/python.tar.xz (DEST: the carry)
#
# In the archive: python3 (a wrapper: PYTHONHOME and LD_LIBRARY_PATH set to the archive's own
# folders, so nothing of the host's Python is read), usr/ (the interpreter, its library and
# dist-packages, Debian's PyOpenCL 2022.3.1 among them), lib/ (the shared libraries),
# opt/pyopencl2026, opt/clpool (sites for PYTHONPATH; PyOpenCL 2026.1.2 when its site comes first),
# suite/ (run_pyopencl_suite.sh and what it sources), pyopencl-tests.tar.gz (2026.1.2's test/),
# tests/ (clpool's stress test), examples/ci/python (the pytest plugin's example suite).
# Checked here before it is written: the wrapper, run with an empty environment, imports numpy,
# pytest, PyOpenCL 2026.1.2 and clpool, and every entry of its sys.path is inside the archive.
set -euo pipefail
cd "$(dirname "$0")/../../.."
[[ $# -eq 1 ]] || { echo "usage: $0 DEST" >&2; exit 2; }
DEST=$1
SOURCES=${CLPOOL_PYOPENCL_SOURCES:-$PWD/../shared/sources}
[[ -f "$SOURCES/pyopencl-2026.1.2.tar.gz" ]] ||
  { echo "make_python_carry.sh: no $SOURCES/pyopencl-2026.1.2.tar.gz (set CLPOOL_PYOPENCL_SOURCES)" >&2; exit 2; }
mkdir -p "$DEST"
W=$(mktemp -d /tmp/clpool-pycarry.XXXXXX)
trap 'rm -rf "$W"' EXIT
R=$W/root
mkdir -p "$R/usr/bin" "$R/usr/lib/python3/dist-packages" "$R/lib" "$R/opt" "$R/suite"

# The interpreter and its standard library, without tests, GUI toolkits and byte code.
install -m 755 /usr/bin/python3.11 "$R/usr/bin/python3.11"
ln -s python3.11 "$R/usr/bin/python3"
tar -C /usr/lib -cf - --exclude='__pycache__' --exclude='python3.11/test' \
  --exclude='python3.11/idlelib' --exclude='python3.11/tkinter' --exclude='python3.11/turtledemo' \
  --exclude='python3.11/ensurepip' --exclude='python3.11/lib2to3/tests' \
  --exclude='python3.11/config-3.11-x86_64-linux-gnu' python3.11 | tar -C "$R/usr/lib" -xf -

# Debian's packages the tests import, found by importing them here: what a pytest run and
# PyOpenCL's modules load from dist-packages (numpy, pytest and its dependencies and plugins,
# Debian's PyOpenCL 2022.3.1, pytools, mako, platformdirs, ...).
DP=/usr/lib/python3/dist-packages
mkdir -p "$W/closure"
printf 'import pyopencl.array\ndef test_x():\n    pass\n' > "$W/closure/test_closure.py"
(cd "$W/closure" && /usr/bin/python3 - "$DP/" "$W/closure/names" > /dev/null <<'PY'
import sys
import pytest
pytest.main(["-q", "-p", "no:cacheprovider", "test_closure.py"])
import numpy, pyopencl.algorithm, pyopencl.clrandom, pyopencl.elementwise  # noqa: F401,E401
import pyopencl.reduction, pyopencl.scan, pyopencl.tools  # noqa: F401,E401
dp = sys.argv[1]
names = {m.__file__[len(dp):].split("/")[0] for m in list(sys.modules.values())
         if (getattr(m, "__file__", None) or "").startswith(dp)}
with open(sys.argv[2], "w") as f:
    f.write(" ".join(sorted(n for n in names if not n.startswith("_distutils"))))
PY
)
tops=$(cat "$W/closure/names")
echo "make_python_carry.sh: from $DP: $tops" >&2
for p in $tops; do
  cp -a "$DP/$p" "$R/usr/lib/python3/dist-packages/"
done
find "$R" -name '__pycache__' -prune -exec rm -rf {} +

# PyOpenCL 2026.1.2 and clpool, each a site for PYTHONPATH.
bash python/compat/build_pyopencl.sh "$SOURCES" "$R/opt/pyopencl2026" >&2
bash tools/python_install.sh "$R/opt/clpool" >&2
# PyOpenCL 2026.1.2's tests (the runner reads test/ and pyproject.toml from a .tar.gz).
tar -xzf "$SOURCES/pyopencl-2026.1.2.tar.gz" -C "$W" --wildcards '*/test/*' '*/pyproject.toml'
top=$(basename "$(dirname "$(find "$W" -mindepth 2 -maxdepth 2 -name pyproject.toml -print -quit)")")
tar -C "$W" -czf "$R/pyopencl-tests.tar.gz" "$top/test" "$top/pyproject.toml"
# The suite runner, in the layout it expects (it sources tools/dev/testing/test_lib.sh).
mkdir -p "$R/suite/python/pyopencl_suite" "$R/suite/tools/dev/testing"
cp python/pyopencl_suite/run_pyopencl_suite.sh python/pyopencl_suite/pool_plugin.py \
  "$R/suite/python/pyopencl_suite/"
cp tools/dev/testing/test_lib.sh "$R/suite/tools/dev/testing/"
# The drop-in's stress test and its set-up (CLPOOL_TEST_MODE=gpu picks the GPU's platform).
mkdir -p "$R/tests"
cp python/tests/stress_test.py python/tests/cltest.py "$R/tests/"
# The pytest plugin's example suite (examples/ci/python: a buggy and a fixed library).
mkdir -p "$R/examples/ci"
cp -r examples/ci/python "$R/examples/ci/"

# Shared libraries: what every ELF file here loads, except glibc's, libstdc++'s and libgcc's (the
# GPU machine's are newer) and libOpenCL (run_on_gpu.sh's lib/ has Debian's ICD loader).
skip='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libutil|libresolv|libstdc\+\+|libgcc_s|libOpenCL)\.so'
find "$R" -type f \( -name '*.so' -o -name '*.so.*' -o -name 'python3.11' \) -print0 |
  xargs -0 -n 50 ldd 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r name path; do
    [[ "$name" =~ $skip ]] && continue
    [[ -e "$R/lib/$name" ]] || cp -L "$path" "$R/lib/$name"
  done

cat > "$R/python3" <<'EOF'
#!/bin/sh
# Debian's python3.11 from this folder alone: its library, its packages, its shared libraries.
d=$(dirname "$(readlink -f "$0")")
PYTHONHOME=$d/usr PYTHONNOUSERSITE=1 LD_LIBRARY_PATH=$d/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  exec "$d/usr/bin/python3.11" "$@"
EOF
chmod 755 "$R/python3"

# The check: an empty environment, the packages from the archive's sites only.
env -i PATH=/usr/bin:/bin PYTHONPATH="$R/opt/pyopencl2026:$R/opt/clpool" "$R/python3" - "$R" <<'PY'
import sys
root = sys.argv[1]
import numpy, pytest, pyopencl, clpool, clpool.pyopencl  # noqa: F401,E401
outside = [p for p in sys.path if p and not p.startswith(root)]
assert not outside, f"sys.path entries outside the archive: {outside}"
for m in (numpy, pytest, pyopencl, clpool):
    assert m.__file__.startswith(root), f"{m.__name__} from {m.__file__}"
assert pyopencl.VERSION_TEXT == "2026.1.2", pyopencl.VERSION_TEXT
print(f"python carry: Python {sys.version.split()[0]}, numpy {numpy.__version__}, "
      f"pytest {pytest.__version__}, PyOpenCL {pyopencl.VERSION_TEXT}, clpool from {clpool.__file__}")
PY
tar -C "$R" -cJf "$DEST/python.tar.xz" .
du -sh "$R" "$DEST/python.tar.xz"
