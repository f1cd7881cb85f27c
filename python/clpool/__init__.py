"""clpool: a GPU memory pool with PyOpenCL's semantics, for Python.

    import clpool.pyopencl
    pool = clpool.pyopencl.MemoryPool(clpool.pyopencl.ImmediateAllocator(queue))

pyopencl is imported only when something needs it: ``clpool.OutOfMemoryError`` (a subclass of
``pyopencl.MemoryError``), ``clpool.pyopencl`` and ``clpool.PageLockedMemoryPool``.
"""

import atexit

from clpool import _core

# Traces still being recorded (pool.record_trace) are finished when the interpreter exits.
atexit.register(_core.stop_all_traces)

CLError = _core.CLError

__all__ = ["CLError", "OutOfMemoryError", "PageLockedMemoryPool"]


def __getattr__(name):
    if name == "OutOfMemoryError":
        from clpool._errors import out_of_memory_error_class

        return out_of_memory_error_class()
    if name == "PageLockedMemoryPool":
        from clpool.pagelocked import PageLockedMemoryPool

        return PageLockedMemoryPool
    if name == "pyopencl":
        import importlib

        return importlib.import_module("clpool.pyopencl")
    raise AttributeError(f"module 'clpool' has no attribute {name!r}")
