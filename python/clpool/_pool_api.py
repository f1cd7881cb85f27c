"""The pool API shared by clpool's Python pools: PyOpenCL's and PyCUDA's counters, CuPy's names,
and clpool's extras (limit, trim, statistics, trace recording). A pool keeps its C++ pool in
self._core."""


class PoolAPI:
    __slots__ = ()

    # PyOpenCL / PyCUDA
    @property
    def held_blocks(self):
        return self._core.held_blocks

    @property
    def active_blocks(self):
        return self._core.active_blocks

    @property
    def managed_bytes(self):
        return self._core.managed_bytes

    @property
    def active_bytes(self):
        return self._core.active_bytes

    @property
    def held_bytes(self):
        return self._core.held_bytes

    @property
    def leading_bits_in_bin_id(self):
        return self._core.leading_bits

    def free_held(self):
        """Gives every held block back to the device. Live allocations are untouched."""
        self._core.free_held()

    def stop_holding(self):
        """From now on, released blocks go straight back to the device; frees what is held."""
        self._core.stop_holding()

    # CuPy
    def free_all_blocks(self):
        self._core.free_held()

    def used_bytes(self):
        """Rounded bytes of live allocations (CuPy counts blocks by their allocated size)."""
        return self._core.used_bytes()

    def free_bytes(self):
        return self._core.free_bytes()

    def total_bytes(self):
        return self._core.total_bytes()

    def n_free_blocks(self):
        return self._core.n_free_blocks()

    # clpool's extras
    def set_limit(self, limit_bytes):
        """Managed bytes will never exceed limit_bytes (None: no limit). Frees held blocks if
        needed; raises ValueError if live allocations alone exceed it."""
        self._core.set_limit(limit_bytes)

    @property
    def limit(self):
        return self._core.limit

    def set_trim(self, max_held_bytes=None, ratio=None):
        """Bounds held memory: after a release, held bytes are cut (largest blocks first) to
        min(max_held_bytes, ratio * active_bytes). None turns a bound off."""
        self._core.set_trim(max_held_bytes, ratio)

    def trim(self, target_held_bytes=0):
        """Frees held blocks, largest first, until at most target_held_bytes are held."""
        return self._core.trim(target_held_bytes)

    def statistics(self):
        """Counters and cumulative statistics as a dict (hits, misses, peaks, ...)."""
        return self._core.statistics()

    def record_trace(self, path):
        """Records the application's requests to `path`, in the clpool trace format that
        clpool_replay reads, until stop_trace(). Start on a pool with no live allocations."""
        self._core.record_trace(str(path))

    def stop_trace(self):
        """Finishes the trace file; returns the number of events recorded."""
        return self._core.stop_trace()
