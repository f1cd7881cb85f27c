#!/bin/bash
# python/make_wheel.py makes a wheel from the package and the built extension; unpacked, it
# imports with /usr/bin/python3 and its RECORD hashes match. With the layer, the mock and
# clpool_replay in it (clpool/_lib/), pytest finds the plugin through the wheel's pytest11 entry
# point and runs a session on a mock device with nothing else set.
#   wheel_test.sh CORE_SO PACKAGE_INIT_PY MAKE_WHEEL_PY [LIB...]
set -euo pipefail
core="$(realpath "$1")"; pkg="$(dirname "$(realpath "$2")")"; wheel_py="$(realpath "$3")"
shift 3
libs=()
for lib in "$@"; do libs+=("$(realpath "$lib")"); done
t="${TEST_TMPDIR:-$(mktemp -d)}"
suffix="$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
whl="$(/usr/bin/python3 "$wheel_py" "$pkg" "$core" "$suffix" "$t" "${libs[@]}")"
mkdir -p "$t/site"
cd "$t/site"
/usr/bin/python3 - "$whl" <<'PY'
import base64, hashlib, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(".")
record = [l.split(",") for l in z.read([n for n in z.namelist() if n.endswith("RECORD")][0]).decode().split()]
for name, digest, size in record:
    if digest:
        data = open(name, "rb").read()
        want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert digest == want and int(size) == len(data), name
import clpool, clpool.pyopencl
assert issubclass(clpool.OutOfMemoryError, __import__("pyopencl").MemoryError)
print("wheel ok:", sys.argv[1].rsplit("/", 1)[1], len(record), "files")
PY

[[ ${#libs[@]} -eq 0 ]] && exit 0
# The installed plugin: found through the entry point, its files from clpool/_lib/.
grep -qx "clpool.pytest_plugin = clpool.pytest_plugin" clpool-*.dist-info/entry_points.txt
mkdir -p "$t/suite"
cat > "$t/suite/test_one.py" <<'PY'
import pyopencl as cl

def test_one():
    ctx = cl.create_some_context(interactive=False)
    q = cl.CommandQueue(ctx)
    b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 1 << 20)
    cl.enqueue_migrate_mem_objects(q, [b], cl.mem_migration_flags.CONTENT_UNDEFINED)
    q.finish()
PY
cd "$t/suite"
out="$(env -u LIBCLPOOL_LAYER_SO -u LIBMOCKCL_SO -u CLPOOL_REPLAY -u OCL_ICD_VENDORS PYTHONPATH="$t/site" \
       PATH=/usr/bin:/bin POCL_CACHE_DIR="$t/pocl" /usr/bin/python3 -m pytest -p no:cacheprovider \
       --clpool-device nvidia:1GiB test_one.py 2>&1)" || { echo "$out"; exit 1; }
echo "$out"
grep -q "^device: mockcl, 1 GiB (1073741824 bytes), nvidia profile" <<< "$out"
grep -qE "^ +1 MiB +0 B +1 +test_one.py::test_one$" <<< "$out"
echo "wheel ok: the pytest plugin from the entry point, its files from clpool/_lib/"
# The README's command, -p clpool.pytest_plugin, beside the installed entry point: one plugin.
out="$(env -u LIBCLPOOL_LAYER_SO -u LIBMOCKCL_SO -u CLPOOL_REPLAY -u OCL_ICD_VENDORS PYTHONPATH="$t/site" \
       PATH=/usr/bin:/bin POCL_CACHE_DIR="$t/pocl" /usr/bin/python3 -m pytest -p no:cacheprovider \
       -p clpool.pytest_plugin --clpool-device nvidia:1GiB test_one.py 2>&1)" || { echo "$out"; exit 1; }
grep -qE "^ +1 MiB +0 B +1 +test_one.py::test_one$" <<< "$out" || { echo "$out"; exit 1; }
echo "wheel ok: -p clpool.pytest_plugin with the entry point installed"
