"""Builds a clpool wheel offline from the package sources and the Bazel-built extension.

    python3 python/make_wheel.py PKG_DIR CORE_SO EXT_SUFFIX OUT_DIR [FILE...]

The wheel is tagged for the running interpreter (e.g. cp311-cp311-linux_x86_64) and needs
python3-pyopencl and python3-numpy at run time (not declared: Debian provides them). Each FILE
(libclpool_layer.so, libmockcl.so, clpool_replay: what the pytest plugin runs) goes to
clpool/_lib/. The pytest plugin is registered as a pytest11 entry point, so an installed clpool
adds its options (--clpool, --clpool-device, ...) to every pytest run, doing nothing until one is
given.
"""
import base64
import hashlib
import os
import sys
import sysconfig
import zipfile

VERSION = "0.1.0"


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main(pkg_dir, core_so, ext_suffix, out_dir, *libs):
    ver = f"cp{sys.version_info.major}{sys.version_info.minor}"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    tag = f"{ver}-{ver}-{plat}"
    files = {}
    for name in sorted(os.listdir(pkg_dir)):
        if name.endswith(".py"):
            with open(os.path.join(pkg_dir, name), "rb") as f:
                files[f"clpool/{name}"] = f.read()
    with open(core_so, "rb") as f:
        files[f"clpool/_core{ext_suffix}"] = f.read()
    for lib in libs:
        with open(lib, "rb") as f:
            files[f"clpool/_lib/{os.path.basename(lib)}"] = f.read()
    info = f"clpool-{VERSION}.dist-info"
    # Named as its module, so that `-p clpool.pytest_plugin` beside the installed entry point
    # registers it once (pytest skips a plugin already registered under the name -p gives).
    files[f"{info}/entry_points.txt"] = b"[pytest11]\nclpool.pytest_plugin = clpool.pytest_plugin\n"
    files[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: clpool\nVersion: {VERSION}\n"
        "Summary: GPU memory pool with PyOpenCL's semantics\n"
    ).encode()
    files[f"{info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: clpool python_wheel.py\n"
        f"Root-Is-Purelib: false\nTag: {tag}\n"
    ).encode()
    record = [record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = os.path.join(out_dir, f"clpool-{VERSION}-{tag}.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            zi = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            executable = name.endswith(".so") or name.startswith("clpool/_lib/")
            zi.external_attr = (0o755 if executable else 0o644) << 16
            z.writestr(zi, data, zipfile.ZIP_DEFLATED)
    print(path)


if __name__ == "__main__":
    main(*sys.argv[1:])
