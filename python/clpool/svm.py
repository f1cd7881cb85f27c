"""PyOpenCL's SVM pool API over clpool's C++ svm_pool: SVMAllocator, SVMPool, PooledSVM.

    alloc = clpool.pyopencl.SVMAllocator(ctx, alignment=0, queue=queue)
    pool = clpool.pyopencl.SVMPool(alloc)
    svm = pool.allocate(4096)          # a PooledSVM: a pyopencl.SVM, so a kernel argument too
    kernel(queue, (n,), None, svm)
    svm.enqueue_release(queue)         # the next user waits for this queue's work, on the device

A block is bound to an in-order queue; reuse on another queue is ordered with a marker and a
barrier (pool/opencl/README.md, "Pools and queue semantics").
"""

import operator

import pyopencl as _cl

from clpool import _core
from clpool._errors import released_error
from clpool._handles import byte_count, cl_handle, leading_bits
from clpool._pool_api import SingleArenaNames, refuse_second_init


def _queue_ptr(queue, who):
    return 0 if queue is None else cl_handle(queue, "CommandQueue", who)


class PooledSVM(_core.make_svm_base(_cl.SVM)):
    """A pyopencl.SVM over a pooled block, with PyOpenCL's PooledSVM methods. Its base frees it
    safely when the garbage collector runs during its dealloc where its binding library needs it
    (python/gc_safe_subclass.h)."""

    def __init__(self, block):
        super().__init__(block)
        self._block = block
        # Its address for good: equality, hashing and int() stay what they were after the
        # release, as PyOpenCL's (a released PooledSVM stays in the set it was put in).
        self._address = block.svm_ptr
        self._size = block.size

    def release(self):
        """Gives the block back; work enqueued on its queue completes before the next user. A
        second call raises pyopencl.LogicError, as PyOpenCL's PooledSVM does."""
        self._refuse_released("PooledSVM.release")
        self._block.release()

    free = release  # PyCUDA's spelling

    def enqueue_release(self, queue=None):
        self._refuse_released("PooledSVM.enqueue_release")
        self._block.enqueue_release(_queue_ptr(queue, "PooledSVM.enqueue_release"))

    def _refuse_released(self, routine):
        if not self._block.has_block:
            raise released_error(routine, "the pooled SVM was already released")

    def bind_to_queue(self, queue):
        self._block.bind_to_queue(cl_handle(queue, "CommandQueue", "PooledSVM.bind_to_queue"))

    def unbind_from_queue(self):
        self._block.unbind_from_queue()

    @property
    def svm_size(self):
        return self._size  # kept after the release, as the address is (and PyOpenCL's size)

    def __int__(self):
        """The SVM pointer (PyCUDA's int() of an allocation: its address)."""
        return self._address

    # PyOpenCL's PooledSVM: structural equality and hashing, by address.
    def __eq__(self, other):
        if not isinstance(other, PooledSVM):
            return NotImplemented
        return self._address == other._address

    def __hash__(self):
        return hash(self._address)


class SVMAllocator:
    """PyOpenCL's SVMAllocator(context, alignment=0, flags=READ_WRITE, queue=None)."""

    def __init__(self, context, alignment=0, flags=None, queue=None):
        self._handle = cl_handle(context, "Context", "SVMAllocator")
        if isinstance(alignment, bool) or not isinstance(alignment, int):
            raise TypeError(f"SVMAllocator: alignment must be an int, got {alignment!r}")
        if alignment < 0 or alignment & (alignment - 1):
            raise ValueError(
                f"SVMAllocator: alignment must be 0 or a power of two, got {alignment}"
            )
        if flags is None:
            flags = _cl.svm_mem_flags.READ_WRITE
        elif isinstance(flags, bool) or not hasattr(type(flags), "__index__"):
            raise TypeError(
                "SVMAllocator: flags must be pyopencl.svm_mem_flags bits (an integer), "
                f"got {type(flags).__qualname__}"
            )
        self.context, self.alignment, self.queue = context, alignment, queue
        self.flags = operator.index(flags)
        self._queue = _queue_ptr(queue, "SVMAllocator")

    def __call__(self, size):
        """An unpooled SVM allocation, as PyOpenCL's SVMAllocator gives (size checked as the
        pools check it; 0 is refused, as clSVMAlloc refuses it)."""
        if byte_count(size, "SVMAllocator") == 0:
            raise ValueError("SVMAllocator: size must be at least 1 byte")
        return _cl.SVMAllocation(self.context, size, self.alignment, self.flags, self.queue)


class SVMPool(SingleArenaNames, _core.SVMPool):
    """PyOpenCL's SVMPool(allocator, leading_bits_in_bin_id=4)."""

    def __init__(self, allocator, leading_bits_in_bin_id=4, *, _shared_limit=None):
        refuse_second_init(self)
        if not isinstance(allocator, SVMAllocator):
            raise TypeError(
                "SVMPool: allocator must be clpool.pyopencl.SVMAllocator, got "
                f"{type(allocator).__qualname__}"
            )
        super().__init__(
            allocator._handle,
            allocator.alignment,
            allocator.flags,
            allocator._queue,
            leading_bits(leading_bits_in_bin_id, "SVMPool"),
            _shared_limit,
        )
        self.allocator = allocator

    def allocate(self, size, queue=None):
        """A PooledSVM of at least `size` bytes bound to in-order `queue` (None for 0)."""
        block = _core.SVMPool.allocate(self, size, _queue_ptr(queue, "SVMPool.allocate"))
        return None if block is None else PooledSVM(block)

    __call__ = allocate
    malloc = allocate
