"""Drop-in replacements for pyopencl.tools' buffer pool.

    # before: pool = pyopencl.tools.MemoryPool(pyopencl.tools.ImmediateAllocator(queue))
    pool = clpool.pyopencl.MemoryPool(clpool.pyopencl.ImmediateAllocator(queue))
    a = pyopencl.array.zeros(queue, n, numpy.float32, allocator=pool)

The pool hands out pyopencl.Buffer objects; when one is garbage-collected its block goes back to
the pool. Explicitly: pool.release(buffer) or clpool.pyopencl.release(buffer).
"""

import weakref

import pyopencl as _cl

from clpool import _core
from clpool._handles import cl_handle, leading_bits
from clpool._handles import mem_flags as _mem_flags
from clpool._pool_api import PoolAPI

_from_int_ptr = _cl.Buffer.from_int_ptr
_weakref = weakref.ref
# Live pooled buffers: a weak reference to each pyopencl.Buffer handed out -> its C++ block. When
# the Buffer is collected, the reference's callback gives the block back to the pool.
_live = {}


def _on_collect(ref):
    block = _live.pop(ref, None)
    if block is not None:
        block.release()


class DeferredAllocator:
    """PyOpenCL's DeferredAllocator(context, mem_flags=READ_WRITE): clCreateBuffer only; the
    device may report out-of-memory only at first use."""

    def __init__(self, context, mem_flags=None):
        self._handle = cl_handle(context, "Context", "DeferredAllocator")
        self.context = context
        self.mem_flags = _mem_flags(mem_flags, "DeferredAllocator")

    def _make_pool(self, bits):
        return _core.DeferredBufferPool(self._handle, self.mem_flags, bits)

    def __call__(self, size):
        """An unpooled buffer, as PyOpenCL's allocators give."""
        return _cl.Buffer(self.context, self.mem_flags, size)


class ImmediateAllocator:
    """PyOpenCL's ImmediateAllocator(queue, mem_flags=READ_WRITE): creates the buffer and makes
    the device back it at once on `queue`, so that out-of-memory is seen (and the pool retries
    after freeing what it holds)."""

    def __init__(self, queue, mem_flags=None):
        self._handle = cl_handle(queue, "CommandQueue", "ImmediateAllocator")
        self.queue = queue
        self.context = queue.context
        self.mem_flags = _mem_flags(mem_flags, "ImmediateAllocator")

    def _make_pool(self, bits):
        return _core.ImmediateBufferPool(self._handle, self.mem_flags, bits)

    def __call__(self, size):
        """An unpooled buffer, backed at once."""
        buf = _cl.Buffer(self.context, self.mem_flags, size)
        _cl.enqueue_migrate_mem_objects(
            self.queue, [buf], _cl.mem_migration_flags.CONTENT_UNDEFINED)
        return buf


def release(buffer):
    """Gives a pooled buffer's block back to its pool now (the buffer must not be used after)."""
    block = _live.pop(_weakref(buffer), None)
    if block is not None:
        block.release()


class MemoryPool(PoolAPI):
    """PyOpenCL's MemoryPool(allocator, leading_bits_in_bin_id=4) over clpool's C++ pool."""

    __slots__ = ("_core", "allocator", "__weakref__")

    def __init__(self, allocator, leading_bits_in_bin_id=4):
        if not isinstance(allocator, (ImmediateAllocator, DeferredAllocator)):
            raise TypeError("MemoryPool: allocator must be clpool.pyopencl.ImmediateAllocator or "
                            f"DeferredAllocator, got {type(allocator).__module__}."
                            f"{type(allocator).__qualname__}")
        self.allocator = allocator
        self._core = allocator._make_pool(leading_bits(leading_bits_in_bin_id, "MemoryPool"))

    def allocate(self, size):
        """A pyopencl.Buffer of at least `size` bytes (None for 0). Raises
        clpool.OutOfMemoryError (a pyopencl.MemoryError) when no block can be had."""
        block = self._core.allocate(size)
        if block is None:
            return None
        buffer = _from_int_ptr(block.int_ptr, True)
        _live[_weakref(buffer, _on_collect)] = block
        return buffer

    __call__ = allocate
    malloc = allocate

    def release(self, buffer):
        release(buffer)


def __getattr__(name):
    if name in ("SVMAllocator", "SVMPool", "PooledSVM"):
        from clpool import svm
        return getattr(svm, name)
    raise AttributeError(f"module 'clpool.pyopencl' has no attribute {name!r}")
