"""A pytest plugin that makes a memory pool the allocator of every pyopencl.array.Array that
is created without one, so that PyOpenCL's own tests exercise the pool.

    pytest -p pool_plugin ...        with CLPOOL_SUITE_POOL=clpool | pyopencl | none

clpool:   clpool.pyopencl.MemoryPool(ImmediateAllocator(queue)), or DeferredAllocator(context)
          for an array made from a context alone.
pyopencl: pyopencl.tools.MemoryPool with PyOpenCL's allocators, the same way (the reference).
none:     nothing is changed (PyOpenCL allocates a cl.Buffer per array).

One pool per queue (or context), dropped after every test so that no memory outlives it.
Arrays given an allocator or existing data are left alone.
"""
import os

import pytest

import pyopencl as cl
import pyopencl.array as cl_array
import pyopencl.tools as cl_tools

POOL = os.environ.get("CLPOOL_SUITE_POOL", "clpool")
if POOL not in ("clpool", "pyopencl", "none"):
    raise pytest.UsageError(f"CLPOOL_SUITE_POOL must be clpool, pyopencl or none, not {POOL!r}")

_pools = {}  # id(queue or context) -> (the queue or context, its pool); cleared after each test
_stats = {"pools": 0, "arrays": 0}


def _make_pool(cq):
    if POOL == "clpool":
        import clpool.pyopencl as cp

        if isinstance(cq, cl.CommandQueue):
            return cp.MemoryPool(cp.ImmediateAllocator(cq))
        return cp.MemoryPool(cp.DeferredAllocator(cq))
    if isinstance(cq, cl.CommandQueue):
        return cl_tools.MemoryPool(cl_tools.ImmediateAllocator(cq))
    return cl_tools.MemoryPool(cl_tools.DeferredAllocator(cq))


def pool_for(cq):
    entry = _pools.get(id(cq))
    if entry is None or entry[0] is not cq:
        entry = (cq, _make_pool(cq))
        _pools[id(cq)] = entry
        _stats["pools"] += 1
    return entry[1]


if POOL != "none":
    _original_init = cl_array.Array.__init__

    def _init(self, cq, shape, dtype, order="C", allocator=None, data=None, *args, **kwargs):
        if allocator is None and data is None and not kwargs.get("_fast"):
            # zeros(), empty_like() and friends pass cq=None and their queue or context as
            # _queue / _context.
            owner = cq if cq is not None else (kwargs.get("_queue") or kwargs.get("_context"))
            if owner is not None:
                allocator = pool_for(owner)
                _stats["arrays"] += 1
        _original_init(self, cq, shape, dtype, order, allocator, data, *args, **kwargs)

    cl_array.Array.__init__ = _init


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    _pools.clear()


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(
        f"pool plugin: {POOL}; {_stats['arrays']} arrays allocated from {_stats['pools']} pools"
    )
