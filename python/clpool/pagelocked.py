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


def _plain_dtype(numpy, dtype, who):
    try:
        dtype = numpy.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"{who}: {dtype!r} is not a numpy dtype") from e
    if dtype.hasobject:
        raise TypeError(f"{who}: dtype {dtype} holds references to Python objects; pinned memory "
                        "holds plain data only")
    return dtype


def _shape(shape, who):
    """A tuple of non-negative ints from an int or a sequence of integers (numpy's too)."""
    import operator
    if isinstance(shape, bool):
        raise TypeError(f"{who}: shape must be an int or a sequence of ints, not bool")
    try:
        dims = (operator.index(shape),)
    except TypeError:
        try:
            dims = tuple(shape)
        except TypeError:
            raise TypeError(f"{who}: shape must be an int or a sequence of ints, "
                            f"not {type(shape).__name__}") from None
        for d in dims:
            if isinstance(d, bool) or not hasattr(type(d), "__index__"):
                raise TypeError(f"{who}: shape must be ints, got {shape!r}")
        dims = tuple(operator.index(d) for d in dims)
    if any(d < 0 for d in dims):
        raise ValueError(f"{who}: negative dimension in {dims!r}")
    return dims


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
        (with .free()). Dtypes that hold Python objects are refused (TypeError): the block's
        bytes are recycled, and numpy would take them for object pointers."""
        import numpy
        who = "PageLockedMemoryPool.allocate"
        dtype = _plain_dtype(numpy, dtype, who)
        shape = _shape(shape, who)
        if order not in ("C", "F"):
            raise ValueError(f"{who}: order must be 'C' or 'F', not {order!r}")
        nbytes = dtype.itemsize
        for d in shape:
            nbytes *= d
        block = self._core.allocate(nbytes)
        if block is None:
            return numpy.empty(shape, dtype, order=order)
        return numpy.ndarray(shape, dtype, buffer=block, order=order)

    malloc = allocate
