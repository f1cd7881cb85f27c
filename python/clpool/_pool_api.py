"""CuPy's names for clpool's single-arena pools (clpool.pyopencl's MemoryPool and SVMPool,
PageLockedMemoryPool), on top of what clpool._core's pools expose (held_blocks, active_blocks,
free_held, used_bytes, ...): set_limit with a fraction of the device, get_limit, free_all_free,
free_all_blocks(stream). clpool.cupy.MemoryPool has CuPy's meanings exactly (0 is no limit);
these pools keep clpool's (None is no limit, 0 is a limit of zero bytes)."""

import numbers


def limit_bytes_from(size, fraction, total, who):
    """The byte limit for set_limit(size=..., fraction=...), or None for no limit. `total` is
    the device's global memory size (for `fraction`)."""
    if size is not None and fraction is not None:
        raise ValueError(f"{who}: give size or fraction, not both")
    if fraction is None:
        return size
    if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real):
        raise TypeError(f"{who}: fraction must be a number, not {type(fraction).__name__}")
    if not 0 <= fraction <= 1:
        raise ValueError(f"{who}: fraction must be within [0, 1], got {fraction!r}")
    return int(total * fraction)


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

    def set_limit(self, limit_bytes=None, fraction=None):
        """Managed bytes (held + live, rounded) never exceed the limit: limit_bytes, or
        fraction (0 to 1) of the device's global memory (CL_DEVICE_GLOBAL_MEM_SIZE; a mockcl
        device's capacity). None for both removes the limit. Frees held blocks if needed;
        raises ValueError if live allocations alone exceed it."""
        who = f"{type(self).__name__}.set_limit"
        total = self._device().global_mem_size if fraction is not None else 0
        super().set_limit(limit_bytes_from(limit_bytes, fraction, total, who))

    def get_limit(self):
        """The limit in bytes, or None when there is none."""
        return self.limit

    def free_all_blocks(self, stream=None):
        """Frees the held blocks (CuPy's name). A pool like this one has one arena, its
        allocator's queue: given another queue (CuPy's stream), there is nothing to free."""
        if stream is None or stream == self._arena_queue():
            self.free_held()

    def free_all_free(self):
        """CuPy's older name for free_all_blocks()."""
        self.free_held()
