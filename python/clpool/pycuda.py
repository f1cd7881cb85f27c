"""PyCUDA's pycuda.tools memory pools for OpenCL.

    import clpool.pycuda.autoinit                    # was: import pycuda.autoinit
    from clpool.pycuda import DeviceMemoryPool       # was: from pycuda.tools import ...
    pool = DeviceMemoryPool()
    a = pool.allocate(4096)                          # a PooledDeviceAllocation
    int(a), len(a)                                   # its cl_mem handle, 4096
    a.free()

A PooledDeviceAllocation is a pyopencl.Buffer (so PyOpenCL takes it everywhere); int() gives its
cl_mem handle, OpenCL's counterpart of a device address (PyOpenCL's int_ptr). The context PyCUDA
makes current is an OpenCL context and a queue here: clpool.pycuda.autoinit.context and .queue
(PYOPENCL_CTX picks the device, as CUDA_DEVICE does for PyCUDA).
"""

import sys
import types

import pyopencl as _cl

from clpool import _core
from clpool import _default
from clpool import pyopencl as _pyopencl
from clpool._host_alloc_flags import host_alloc_flags
from clpool.pagelocked import PageLockedAllocator, PageLockedMemoryPool

import pyopencl.tools as _cl_tools

__all__ = [
    "DeviceMemoryPool",
    "PooledDeviceAllocation",
    "PageLockedMemoryPool",
    "PageLockedAllocator",
    "PooledHostAllocation",
    "host_alloc_flags",
    "make_default_context",
    "get_default_device",
    "context_dependent_memoize",
    "clear_context_caches",
]

# PyCUDA's kernel caches keyed by context: PyOpenCL's own, by first argument (a context).
context_dependent_memoize = _cl_tools.first_arg_dependent_memoize
clear_context_caches = _cl_tools.clear_first_arg_caches

PooledDeviceAllocation = _core.install_pooled_buffer_type(_cl.Buffer, True)
PooledHostAllocation = _core.PinnedBlock


def make_default_context():
    """PyCUDA's make_default_context(): a new pyopencl.Context on the device PYOPENCL_CTX names
    (PyCUDA's CUDA_DEVICE), or the first one."""
    return _cl.create_some_context(interactive=False)


def get_default_device(default=0):
    """PyCUDA's get_default_device(default=0): the device of the default context."""
    return _default.device()


class DeviceMemoryPool(_pyopencl.MemoryPool):
    """PyCUDA's DeviceMemoryPool(): device memory from the default queue
    (clpool.pycuda.autoinit.queue), made present at once (an ImmediateAllocator, so that
    out-of-memory shows at allocate()). An allocator picks another queue or a DeferredAllocator.
    allocate(size) returns a PooledDeviceAllocation."""

    _object_type = PooledDeviceAllocation

    def __init__(self, allocator=None, leading_bits_in_bin_id=4):
        if allocator is None:
            allocator = _pyopencl.ImmediateAllocator(_default.queue())
        super().__init__(allocator, leading_bits_in_bin_id)


# clpool.pycuda.autoinit: PyCUDA's pycuda.autoinit. A module registered here, so that
# `import clpool.pycuda.autoinit` works without clpool.pycuda being a package; its device,
# context and queue are the default ones, made on first use.
autoinit = types.ModuleType(
    __name__ + ".autoinit",
    "PyCUDA's pycuda.autoinit for OpenCL: "
    "device, context and queue, the defaults clpool's pools use.",
)


def _autoinit_getattr(name):
    if name == "device":
        return _default.device()
    if name == "context":
        return _default.context()
    if name == "queue":
        return _default.queue()
    raise AttributeError(f"module {autoinit.__name__!r} has no attribute {name!r}")


autoinit.__getattr__ = _autoinit_getattr
sys.modules[autoinit.__name__] = autoinit
