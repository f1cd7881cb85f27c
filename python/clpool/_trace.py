"""What pool.record_trace(path) returns: the recording, usable as a context manager.

    with pool.record_trace("app.trace"):
        ...                      # the file is complete when the block ends
"""


class TraceContext:
    __slots__ = ("_pool", "_generation")

    def __init__(self, pool):
        self._pool = pool
        self._generation = pool._trace_generation

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        """Finishes this recording (nothing if the pool has moved on to another); returns the
        events recorded."""
        if self._pool._trace_generation == self._generation:
            return self._pool.stop_trace()
        return 0
