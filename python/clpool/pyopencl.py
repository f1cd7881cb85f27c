"""Drop-in replacements for pyopencl.tools' buffer pool.

    # before: pool = pyopencl.tools.MemoryPool(pyopencl.tools.ImmediateAllocator(queue))
    pool = clpool.pyopencl.MemoryPool(clpool.pyopencl.ImmediateAllocator(queue))
    a = pyopencl.array.zeros(queue, n, numpy.float32, allocator=pool)

The pool hands out PooledBuffer objects, which are pyopencl.Buffers: PyOpenCL takes them
wherever it takes a Buffer. A block goes back to the pool when its last reference goes, or at
once with buffer.release() (PyOpenCL's PooledBuffer.release()).
"""

import pyopencl as _cl

from clpool import _core
from clpool._handles import byte_count, cl_handle, leading_bits
from clpool._handles import mem_flags as _mem_flags
from clpool._pool_api import SingleArenaNames, refuse_second_init

PooledBuffer = _core.install_pooled_buffer_type(_cl.Buffer)

# How PooledBuffer was made, from the PyOpenCL that is loaded: ("pybind11" | "nanobind" |
# "generic", what was found). pybind11 (PyOpenCL 2022.x, 2023.x) and nanobind of a known ABI
# (2024.2 onwards) reuse each block's object across hits; "generic" makes one per hit
# (python/README.md, "PyOpenCL versions").
BINDING = _core.binding()


class AllocatorBase:
    """PyOpenCL's AllocatorBase: what allocates buffers. allocator(size) returns a
    pyopencl.Buffer of `size` bytes (None for 0). clpool's allocators and MemoryPool are ones."""

    __slots__ = ()

    def __call__(self, size):
        raise NotImplementedError


class DeferredAllocator(AllocatorBase):
    """PyOpenCL's DeferredAllocator(context, mem_flags=READ_WRITE): clCreateBuffer only; the
    device may report out-of-memory only at first use."""

    def __init__(self, context, mem_flags=None):
        self._handle = cl_handle(context, "Context", "DeferredAllocator")
        self.context = context
        self.mem_flags = _mem_flags(mem_flags, "DeferredAllocator")

    _deferred = True

    def __call__(self, size):
        """An unpooled buffer, as PyOpenCL's allocators give (None for 0 bytes)."""
        if byte_count(size, "DeferredAllocator") == 0:
            return None
        return _cl.Buffer(self.context, self.mem_flags, size)


class ImmediateAllocator(AllocatorBase):
    """PyOpenCL's ImmediateAllocator(queue, mem_flags=READ_WRITE): creates the buffer and makes
    the device back it at once on `queue`, so that out-of-memory is seen (and the pool retries
    after freeing what it holds)."""

    def __init__(self, queue, mem_flags=None):
        self._handle = cl_handle(queue, "CommandQueue", "ImmediateAllocator")
        self.queue = queue
        self.context = queue.context
        self.mem_flags = _mem_flags(mem_flags, "ImmediateAllocator")

    _deferred = False

    def __call__(self, size):
        """An unpooled buffer, backed at once (None for 0 bytes)."""
        if byte_count(size, "ImmediateAllocator") == 0:
            return None
        buf = _cl.Buffer(self.context, self.mem_flags, size)
        _cl.enqueue_migrate_mem_objects(
            self.queue, [buf], _cl.mem_migration_flags.CONTENT_UNDEFINED
        )
        return buf


def release(buffer):
    """Gives a pooled buffer's block back to its pool now: buffer.release(). Anything but a
    clpool PooledBuffer raises TypeError; a second release pyopencl.LogicError."""
    if not _core.is_pooled_buffer(buffer):
        raise TypeError(
            "clpool.pyopencl.release: expected a clpool PooledBuffer (from a clpool "
            f"pool), got {type(buffer).__module__}.{type(buffer).__qualname__}"
        )
    buffer.release()


class MemoryPool(SingleArenaNames, _core.BufferPool, AllocatorBase):
    """PyOpenCL's MemoryPool(allocator, leading_bits_in_bin_id=4) over clpool's C++ pool.

    allocate(size), pool(size) and malloc(size) return a PooledBuffer of at least `size` bytes
    (None for 0), and raise clpool.OutOfMemoryError (a pyopencl.MemoryError) when no block can
    be had."""

    _object_type = PooledBuffer

    def __init__(self, allocator, leading_bits_in_bin_id=4, *, _shared_limit=None):
        refuse_second_init(self)
        if not isinstance(allocator, (ImmediateAllocator, DeferredAllocator)):
            raise TypeError(
                f"{type(self).__name__}: allocator must be clpool.pyopencl."
                "ImmediateAllocator or DeferredAllocator, got "
                f"{type(allocator).__module__}.{type(allocator).__qualname__}"
            )
        super().__init__(
            allocator._handle,
            allocator.mem_flags,
            leading_bits(leading_bits_in_bin_id, type(self).__name__),
            allocator._deferred,
            _shared_limit,
            self._object_type,
        )
        self.allocator = allocator

    def release(self, buffer):
        """Gives `buffer`'s block back now (buffer.release()). A buffer this pool did not hand
        out raises ValueError (TypeError for anything but a PooledBuffer); a second release
        pyopencl.LogicError."""
        if _core.is_pooled_buffer(buffer) and self._owns(buffer) is False:
            raise ValueError(f"{type(self).__name__}.release: the buffer is another pool's")
        release(buffer)


def __getattr__(name):
    if name in ("SVMAllocator", "SVMPool", "PooledSVM"):
        from clpool import svm

        return getattr(svm, name)
    raise AttributeError(f"module 'clpool.pyopencl' has no attribute {name!r}")
