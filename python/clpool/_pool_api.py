"""CuPy's names for clpool's single-arena pools (clpool.pyopencl's MemoryPool and SVMPool,
PageLockedMemoryPool), on top of what clpool._core's pools expose (held_blocks, active_blocks,
free_held, used_bytes, ...): set_limit with a fraction of the device, get_limit, free_all_free,
free_all_blocks(stream). Every clpool pool's set_limit has CuPy's meaning (limit_from below)."""

import numbers

from clpool import _core

# set_limit's older keyword, limit_bytes=, is still accepted as a name for size=.
_UNSET = object()


def refuse_second_init(pool):
    """A pool's __init__ runs once: a second call would replace the Python side (its allocator)
    and silently keep the C++ pool, so the two would disagree."""
    if _core.initialised(pool):
        raise RuntimeError(
            f"{type(pool).__name__}.__init__: the pool is already initialised; make a new pool"
        )


def limit_from(size, fraction, total, who, limit_bytes=_UNSET):
    """The byte limit that set_limit(size=None, fraction=None) means, CuPy's meaning for every
    clpool pool: `size` bytes, or `fraction` (0 to 1) of `total` (the device's global memory); 0,
    or neither, is no limit (None here). `limit_bytes` is the older spelling of `size`."""
    if limit_bytes is not _UNSET:
        if size is not None:
            raise TypeError(f"{who}: give size or its older name limit_bytes, not both")
        size = limit_bytes
    if size is not None and fraction is not None:
        raise ValueError(f"{who}: give size or fraction, not both")
    if size is not None:
        if isinstance(size, bool) or not isinstance(size, numbers.Integral):
            raise TypeError(f"{who}: size must be an int, not {type(size).__name__}")
        if size < 0:
            raise ValueError(f"{who}: size must not be negative, got {size}")
        return int(size) or None
    if fraction is None:
        return None
    if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real):
        raise TypeError(f"{who}: fraction must be a number, not {type(fraction).__name__}")
    if not 0 <= fraction <= 1:
        raise ValueError(f"{who}: fraction must be within [0, 1], got {fraction!r}")
    return int(total * fraction) or None


class SingleArenaNames:
    """Mixed into pools whose blocks all come from one queue (or one context)."""

    __slots__ = ()

    def _arena_queue(self):
        """The queue of this pool's one arena, or None."""
        return getattr(self.allocator, "queue", None)

    def _device(self):
        queue = self._arena_queue()
        if queue is not None:
            return queue.device
        return self.allocator.context.devices[0]

    def set_limit(self, size=None, fraction=None, *, limit_bytes=_UNSET):
        """CuPy's set_limit: managed bytes (held + live, rounded) never exceed `size` bytes, or
        `fraction` (0 to 1) of the device's global memory (CL_DEVICE_GLOBAL_MEM_SIZE; a mockcl
        device's capacity); 0, or neither, removes the limit. Frees held blocks if needed; raises
        ValueError if live allocations alone exceed it. limit_bytes= is the older name of size."""
        who = f"{type(self).__name__}.set_limit"
        total = self._device().global_mem_size if fraction is not None else 0
        super().set_limit(limit_from(size, fraction, total, who, limit_bytes))

    def get_limit(self):
        """The limit in bytes; 0 when there is none (CuPy's get_limit)."""
        return self.limit or 0

    def free_all_blocks(self, stream=None):
        """Frees the held blocks (CuPy's name). A pool like this one has one arena, its
        allocator's queue: given another queue (CuPy's stream), there is nothing to free."""
        if stream is None or stream == self._arena_queue():
            self.free_held()

    def free_all_free(self):
        """CuPy's older name for free_all_blocks()."""
        self.free_held()
