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
from clpool._pool_api import SingleArenaNames, refuse_second_init


def _plain_dtype(numpy, dtype, who):
    try:
        dtype = numpy.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"{who}: {dtype!r} is not a numpy dtype") from e
    if dtype.hasobject:
        raise TypeError(
            f"{who}: dtype {dtype} holds references to Python objects; pinned memory "
            "holds plain data only"
        )
    return dtype


def _shape(shape, who):
    """A tuple of non-negative ints from an int or a sequence of integers (numpy's too)."""
    import operator

    # bytes iterate as ints (b'8' would be a 56-long shape): refused, as numpy.empty refuses them
    if isinstance(shape, (bool, str, bytes, bytearray, memoryview)):
        raise TypeError(
            f"{who}: shape must be an int or a sequence of ints, not {type(shape).__name__}"
        )
    try:
        dims = (operator.index(shape),)
    except TypeError:
        try:
            dims = tuple(shape)
        except TypeError:
            raise TypeError(
                f"{who}: shape must be an int or a sequence of ints, " f"not {type(shape).__name__}"
            ) from None
        for d in dims:
            if isinstance(d, bool) or not hasattr(type(d), "__index__"):
                raise TypeError(f"{who}: shape must be ints, got {shape!r}")
        dims = tuple(operator.index(d) for d in dims)
    if any(d < 0 for d in dims):
        raise ValueError(f"{who}: negative dimension in {dims!r}")
    return dims


class PageLockedAllocator:
    """PyCUDA's PageLockedAllocator for OpenCL: which queue maps the pinned blocks, and their
    flags. PageLockedAllocator(queue_or_context=None, flags=0); PyCUDA's PageLockedAllocator(flags)
    works too (an int first argument is the flags). None is the default queue
    (clpool.pycuda.autoinit's); a context gets a queue of its own on its first device.

    flags: pyopencl.mem_flags bits (ALLOC_HOST_PTR is always added), or
    clpool.pycuda.host_alloc_flags: PORTABLE and DEVICEMAP are what every OpenCL pinned buffer
    already is (usable by the devices of its context, reachable from them), so they add nothing;
    WRITECOMBINED has no OpenCL counterpart (host-write-only memory could not be mapped for
    reading) and is refused."""

    def __init__(self, queue_or_context=None, flags=0):
        import pyopencl

        if isinstance(queue_or_context, int) and not isinstance(queue_or_context, bool):
            queue_or_context, flags = None, queue_or_context  # PyCUDA's PageLockedAllocator(flags)
        if queue_or_context is None:
            from clpool import _default

            queue_or_context = _default.queue()
        if isinstance(queue_or_context, pyopencl.Context):
            queue = pyopencl.CommandQueue(queue_or_context)
        elif isinstance(queue_or_context, pyopencl.CommandQueue):
            queue = queue_or_context
        else:
            raise TypeError(
                "PageLockedAllocator: expected a pyopencl.CommandQueue or Context, got "
                f"{type(queue_or_context).__module__}.{type(queue_or_context).__qualname__}"
            )
        self.queue = queue
        self.context = queue.context
        self.flags = _pinned_flags(pyopencl, flags)


def _pinned_flags(pyopencl, flags):
    from clpool import _host_alloc_flags as h

    if flags is None:
        flags = 0
    if isinstance(flags, bool) or not isinstance(flags, int):
        raise TypeError(f"PageLockedAllocator: flags must be an int, not {type(flags).__name__}")
    if isinstance(flags, h.host_alloc_flags):
        if flags & h.host_alloc_flags.WRITECOMBINED:
            raise ValueError(
                "PageLockedAllocator: OpenCL has no write-combined host memory "
                "(CL_MEM_HOST_WRITE_ONLY memory cannot be mapped for reading)"
            )
        return int(pyopencl.mem_flags.READ_WRITE)
    return mem_flags(flags or None, "PageLockedAllocator")


class PageLockedMemoryPool(SingleArenaNames, _core.PinnedPool):
    """PyCUDA's PageLockedMemoryPool(allocator=PageLockedAllocator()) for OpenCL. clpool's
    PageLockedMemoryPool(queue, mem_flags, leading_bits_in_bin_id) works too."""

    def __init__(self, allocator=None, mem_flags_=None, leading_bits_in_bin_id=4):
        refuse_second_init(self)
        import pyopencl

        if allocator is None or isinstance(allocator, pyopencl.CommandQueue):
            allocator = PageLockedAllocator(allocator, mem_flags_)
        elif not isinstance(allocator, PageLockedAllocator):
            raise TypeError(
                "PageLockedMemoryPool: expected a PageLockedAllocator or a "
                f"pyopencl.CommandQueue, got {type(allocator).__module__}."
                f"{type(allocator).__qualname__}"
            )
        elif mem_flags_ is not None:
            raise TypeError("PageLockedMemoryPool: flags belong to the PageLockedAllocator")
        super().__init__(
            cl_handle(allocator.queue, "CommandQueue", "PageLockedMemoryPool"),
            allocator.flags,
            leading_bits(leading_bits_in_bin_id, "PageLockedMemoryPool"),
        )
        self.allocator = allocator
        self.queue = allocator.queue

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
        block = _core.PinnedPool.allocate(self, nbytes)
        if block is None:
            return numpy.empty(shape, dtype, order=order)
        return numpy.ndarray(shape, dtype, buffer=block, order=order)

    malloc = allocate
