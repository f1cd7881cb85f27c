"""The OpenCL ICD loader as clpool.pytest_plugin sees it, through ctypes (no pyopencl import):
whether a library is loaded, the platforms it lists, and where it looks for them."""

import ctypes
import os

from clpool import _core


def load_if_loaded(path):
    """`path` if this process has already loaded it (never loads it), else None."""
    try:
        return ctypes.CDLL(path, mode=os.RTLD_NOW | getattr(os, "RTLD_NOLOAD", 4))
    except OSError:
        return None


def platform_names(libcl):
    """(clGetPlatformIDs' status, the platforms' names escaped) through the loader `libcl`."""
    n = ctypes.c_uint(0)
    status = libcl.clGetPlatformIDs(0, None, ctypes.byref(n))
    if status != 0 or n.value == 0:
        return status, []
    ids = (ctypes.c_void_p * n.value)()
    libcl.clGetPlatformIDs(n.value, ids, None)
    names = []
    for p in ids:
        buf = ctypes.create_string_buffer(256)
        libcl.clGetPlatformInfo(ctypes.c_void_p(p), 0x0902, 256, buf, None)  # CL_PLATFORM_NAME
        names.append(_core.escape_text(buf.value))
    return status, names


def where_the_loader_looks():
    """Where the loader looks for .icd files, and why none served, for an error message."""
    vendors = os.environ.get("OCL_ICD_VENDORS")
    if vendors:
        there = (
            "which does not exist" if not os.path.exists(vendors) else "which holds no usable .icd"
        )
        return f"OCL_ICD_VENDORS={_core.escape_text(vendors)!r}, {there}"
    return "/etc/OpenCL/vendors/*.icd (OCL_ICD_VENDORS is not set)"
