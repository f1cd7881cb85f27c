"""PyCUDA's PageLockedMemoryPool for OpenCL: pinned host memory as numpy arrays.

    pool = clpool.PageLockedMemoryPool(queue)
    host = pool.allocate((1024,), numpy.float32)   # host.base holds the pinned block
    pyopencl.enqueue_copy(queue, device_buffer, host).wait()
    host.base.free()                               # or let `host` be garbage-collected

The memory is the host side of transfers to and from device buffers (pool/opencl/README.md,
"Host-pinned memory"); wait for transfers before freeing or dropping the array.
"""

from clpool import _core
from clpool._handles import cl_handle, leading_bits, mem_flags
from clpool._pool_api import PoolAPI


class PageLockedMemoryPool(PoolAPI):
    __slots__ = ("_core", "queue")

    def __init__(self, queue, mem_flags_=None, leading_bits_in_bin_id=4):
        self.queue = queue
        self._core = _core.PinnedPool(
            cl_handle(queue, "CommandQueue", "PageLockedMemoryPool"),
            mem_flags(mem_flags_, "PageLockedMemoryPool"),
            leading_bits(leading_bits_in_bin_id, "PageLockedMemoryPool"))

    def allocate(self, shape, dtype, order="C"):
        """A numpy array of `shape` and `dtype` in pinned host memory; its .base is the block
        (with .free())."""
        import numpy
        dtype = numpy.dtype(dtype)
        if isinstance(shape, int):
            shape = (shape,)
        shape = tuple(shape)
        if any(not isinstance(d, int) or isinstance(d, bool) for d in shape):
            raise TypeError(f"PageLockedMemoryPool.allocate: shape must be ints, got {shape!r}")
        if any(d < 0 for d in shape):
            raise ValueError(f"PageLockedMemoryPool.allocate: negative dimension in {shape!r}")
        if order not in ("C", "F"):
            raise ValueError(f"PageLockedMemoryPool.allocate: order must be 'C' or 'F', not {order!r}")
        nbytes = dtype.itemsize
        for d in shape:
            nbytes *= d
        block = self._core.allocate(nbytes)
        if block is None:
            return numpy.empty(shape, dtype, order=order)
        return numpy.ndarray(shape, dtype, buffer=block, order=order)

    malloc = allocate
