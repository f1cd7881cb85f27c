#!/bin/bash
# python/make_wheel.py makes a wheel from the package and the built extension; unpacked, it
# imports with /usr/bin/python3 and its RECORD hashes match.
set -euo pipefail
core="$(realpath "$1")"; pkg="$(dirname "$(realpath "$2")")"; wheel_py="$(realpath "$3")"
t="${TEST_TMPDIR:-$(mktemp -d)}"
suffix="$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
whl="$(/usr/bin/python3 "$wheel_py" "$pkg" "$core" "$suffix" "$t")"
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
