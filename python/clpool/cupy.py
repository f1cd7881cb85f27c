"""CuPy's cupy.cuda.MemoryPool for OpenCL, with per-queue arenas.

    from clpool.cupy import MemoryPool, set_allocator
    set_allocator(MemoryPool().malloc)     # pyopencl.array arrays now come from the pool

OpenCL's counterparts of CuPy's notions: a stream is a pyopencl.CommandQueue (the current one
is per thread: get_current_queue(), using_queue(q)); CuPy's device 0 is the default queue's
device (PYOPENCL_CTX, or the first device); malloc is device buffers and malloc_managed is
coarse-grain shared virtual memory (SVM), OpenCL's unified memory.

Arenas. A block is handed out for the current queue, and goes back to that queue's arena: the
next allocation on the same queue reuses it with no synchronisation, since an in-order queue
runs the new user's commands after the old user's. Other queues never see it. Out-of-order
queues are refused for that reason. This is the other answer to what clpool's C++ buffer_pool
calls cross-queue safety (a block reused on another queue waits, on the device, for the work its
last queue had): arenas never reuse across queues, so they never wait, and hold memory per queue.
An arena short of memory frees the held blocks of the pool's other arenas, then retries.

Limits are CuPy's: per device, set_limit(size=None, fraction=None) for the current queue's
device, 0 meaning no limit; every arena on the device draws on it.
"""

import threading
import weakref

import pyopencl as _cl

from clpool import _core
from clpool import _default
from clpool._pool_api import _UNSET, limit_from
from clpool import pyopencl as _pyopencl
from clpool.svm import PooledSVM

del _pyopencl  # imported for its side effect: it installs the PooledBuffer type

__all__ = [
    "MemoryPool",
    "malloc",
    "malloc_managed",
    "set_allocator",
    "get_allocator",
    "get_current_queue",
    "using_queue",
]

_current = threading.local()


def get_current_queue():
    """The calling thread's current queue (CuPy's current stream): the one using_queue() set,
    else the default queue."""
    queue = getattr(_current, "queue", None)
    return _default.queue() if queue is None else queue


class using_queue:
    """with using_queue(queue): ... makes `queue` the calling thread's current queue (CuPy's
    `with stream:`)."""

    def __init__(self, queue):
        if not isinstance(queue, _cl.CommandQueue):
            raise TypeError(
                f"using_queue: expected a pyopencl.CommandQueue, got "
                f"{type(queue).__module__}.{type(queue).__qualname__}"
            )
        self.queue = queue

    def __enter__(self):
        self._previous = getattr(_current, "queue", None)
        _current.queue = self.queue
        return self.queue

    def __exit__(self, *exc):
        _current.queue = self._previous


class _BaseAllocator:
    """CuPy's base allocators: what kind of block a MemoryPool makes. Called directly, an
    unpooled allocation on the current queue."""

    def __init__(self, name, managed):
        self.__name__ = self.__qualname__ = name
        self.managed = managed

    def __call__(self, size):
        queue = get_current_queue()
        if self.managed:
            return _cl.SVMAllocation(queue.context, size, 0, _cl.svm_mem_flags.READ_WRITE, queue)
        buf = _cl.Buffer(queue.context, _cl.mem_flags.READ_WRITE, size)
        _cl.enqueue_migrate_mem_objects(queue, [buf], _cl.mem_migration_flags.CONTENT_UNDEFINED)
        return buf

    def __repr__(self):
        return f"clpool.cupy.{self.__name__}"


malloc = _BaseAllocator("malloc", managed=False)
malloc_managed = _BaseAllocator("malloc_managed", managed=True)


class MemoryPool:
    """CuPy's MemoryPool(allocator=malloc): blocks of `allocator`'s kind (malloc: device
    buffers; malloc_managed: coarse-grain SVM), in one arena per queue."""

    def __init__(self, allocator=None):
        if allocator is None:
            allocator = malloc
        if allocator is not malloc and allocator is not malloc_managed:
            raise TypeError(
                "MemoryPool: allocator must be clpool.cupy.malloc or "
                f"malloc_managed (OpenCL buffers or SVM), got {allocator!r}"
            )
        self._managed = allocator.managed
        self._arenas = {}  # queue.int_ptr -> (queue, clpool._core pool)
        self._limits = {}  # device.int_ptr -> clpool._core.SharedLimit
        # queue.int_ptr -> mallocs under way in that arena: free_all_blocks() keeps an arena a
        # malloc has taken but not yet allocated from (its block would land in a dropped arena,
        # outside every counter).
        self._busy = {}
        self._lock = threading.Lock()

    # --- arenas ------------------------------------------------------------------------------

    def _limit_of(self, device):
        limit = self._limits.get(device.int_ptr)
        if limit is None:
            limit = self._limits.setdefault(device.int_ptr, _core.SharedLimit())
        return limit

    def _arena(self, queue):
        """The queue's arena (made on first use), counted busy until _done(queue)."""
        with self._lock:
            entry = self._arenas.get(queue.int_ptr)
            if entry is not None:
                self._busy[queue.int_ptr] = self._busy.get(queue.int_ptr, 0) + 1
                return entry[1]
        if queue.properties & _cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE:
            raise ValueError(
                "MemoryPool: an arena reuses blocks without synchronisation, which "
                "needs an in-order queue; this one is out-of-order"
            )
        limit = self._limit_of(queue.device)
        if self._managed:
            core = _core.SVMPool(
                queue.context.int_ptr, 0, int(_cl.svm_mem_flags.READ_WRITE), queue.int_ptr, 4, limit
            )
        else:
            core = _core.BufferPool(queue.int_ptr, int(_cl.mem_flags.READ_WRITE), 4, False, limit)
        core.add_reclaim_callback(_free_siblings(weakref.ref(self), queue.int_ptr))
        with self._lock:
            entry = self._arenas.setdefault(queue.int_ptr, (queue, core))
            self._busy[queue.int_ptr] = self._busy.get(queue.int_ptr, 0) + 1
        return entry[1]

    def _done(self, queue):
        with self._lock:
            left = self._busy.pop(queue.int_ptr) - 1
            if left:
                self._busy[queue.int_ptr] = left

    def _cores(self):
        with self._lock:
            return [core for _, core in self._arenas.values()]

    # --- CuPy's methods ----------------------------------------------------------------------

    def malloc(self, size):
        """A block of at least `size` bytes from the current queue's arena: a PooledBuffer (a
        pyopencl.Buffer) for malloc pools, a PooledSVM for malloc_managed ones. CuPy's
        MemoryPointer is a raw device address, which OpenCL buffers do not have; int() of a
        PooledSVM is its address."""
        queue = get_current_queue()
        core = self._arena(queue)
        try:
            if self._managed:
                block = core.allocate(size, queue.int_ptr)
                return None if block is None else PooledSVM(block)
            return core.allocate(size)
        finally:
            self._done(queue)

    def free_all_blocks(self, stream=None):
        """Frees the held blocks of the arena of `stream` (a pyopencl.CommandQueue), or of every
        arena. An arena left with no live block is dropped with its queue."""
        if stream is not None and not isinstance(stream, _cl.CommandQueue):
            raise TypeError("free_all_blocks: stream must be a pyopencl.CommandQueue or None")
        with self._lock:
            keys = [k for k, (q, _) in self._arenas.items() if stream is None or q == stream]
        for key in keys:
            entry = self._arenas.get(key)
            if entry is None:
                continue
            entry[1].free_held()
            with self._lock:
                if (
                    entry[1].active_blocks == 0
                    and key not in self._busy
                    and self._arenas.get(key) is entry
                ):
                    del self._arenas[key]

    def free_all_free(self):
        """CuPy's older name for free_all_blocks()."""
        self.free_all_blocks()

    def used_bytes(self):
        """Bytes of live blocks (their allocated, rounded sizes)."""
        return sum(core.used_bytes() for core in self._cores())

    def free_bytes(self):
        """Bytes the arenas hold for reuse."""
        return sum(core.free_bytes() for core in self._cores())

    def total_bytes(self):
        """used_bytes() + free_bytes()."""
        return sum(core.total_bytes() for core in self._cores())

    def n_free_blocks(self):
        return sum(core.n_free_blocks() for core in self._cores())

    def set_limit(self, size=None, fraction=None, *, limit_bytes=_UNSET):
        """Limits the bytes this pool takes from the current queue's device: size in bytes, or
        fraction (0 to 1) of the device's global memory (CL_DEVICE_GLOBAL_MEM_SIZE; a mockcl
        device's capacity). 0, or neither, means no limit. Existing blocks are not freed.
        limit_bytes= is the older name of size."""
        device = get_current_queue().device
        total = device.global_mem_size if fraction is not None else 0
        self._limit_of(device).set_limit(
            limit_from(size, fraction, total, "set_limit", limit_bytes)
        )

    def get_limit(self):
        """The current queue's device's limit in bytes; 0 when there is none."""
        limit = self._limit_of(get_current_queue().device).limit
        return 0 if limit is None else limit


def _free_siblings(pool_ref, own_key):
    """An arena's reclaim callback: the held blocks of the pool's other arenas."""

    def reclaim(_bytes_needed):
        pool = pool_ref()
        if pool is None:
            return
        with pool._lock:
            others = [core for key, (_, core) in pool._arenas.items() if key != own_key]
        for core in others:
            core.free_held()

    return reclaim


# --- set_allocator ---------------------------------------------------------------------------

_allocator = None
_patched = False


def set_allocator(allocator=None):
    """CuPy's set_allocator: `allocator(nbytes)` (a MemoryPool's malloc, say) becomes the
    allocator of every pyopencl.array.Array made without one, called with the array's queue
    current; None restores PyOpenCL's own behaviour (a new Buffer per array)."""
    global _allocator
    if allocator is not None and not callable(allocator):
        raise TypeError("set_allocator: allocator must be callable or None")
    _install_array_hook()
    _allocator = allocator


def get_allocator():
    """What set_allocator() set, or None."""
    return _allocator


def _install_array_hook():
    global _patched
    if _patched:
        return
    import pyopencl.array as cl_array

    original = cl_array.Array.__init__

    def __init__(self, cq, shape, dtype, order="C", allocator=None, data=None, *args, **kwargs):
        current = _allocator
        if current is not None and allocator is None and data is None and not kwargs.get("_fast"):
            # zeros(), empty_like() and friends pass their queue as _queue, with cq None.
            queue = cq if isinstance(cq, _cl.CommandQueue) else kwargs.get("_queue")
            if isinstance(queue, _cl.CommandQueue):
                allocator = _QueueAllocator(current, queue)
        original(self, cq, shape, dtype, order, allocator, data, *args, **kwargs)

    cl_array.Array.__init__ = __init__
    _patched = True


class _QueueAllocator:
    """An allocator called with a queue current (the array's)."""

    __slots__ = ("allocator", "queue")

    def __init__(self, allocator, queue):
        self.allocator, self.queue = allocator, queue

    def __call__(self, nbytes):
        with using_queue(self.queue):
            return self.allocator(nbytes)
