"""clpool.OutOfMemoryError, made on first use so that importing clpool does not import pyopencl."""

_FIGURES = (
    "requested_bytes",
    "rounded_bytes",
    "active_bytes",
    "active_rounded_bytes",
    "held_bytes",
    "managed_bytes",
    "limit_bytes",
    "cause",
    "allocator_status",
    "allocator_message",
)

_class = None


def out_of_memory_error_class():
    """The exception class: a pyopencl.MemoryError (Python's MemoryError without pyopencl)."""
    global _class
    if _class is None:
        try:
            import pyopencl

            base = pyopencl.MemoryError
        except ImportError:
            base = MemoryError

        class OutOfMemoryError(base):
            """The pool could not satisfy a request even after freeing what it held.

            Attributes (bytes): requested_bytes, rounded_bytes (the bin's block size),
            active_bytes, active_rounded_bytes, held_bytes, managed_bytes, limit_bytes (None:
            no limit); cause ("allocator" or "limit"); allocator_status (the OpenCL status, e.g.
            -4) and allocator_message when the device refused.
            """

        OutOfMemoryError.__module__ = "clpool"
        OutOfMemoryError.__qualname__ = "OutOfMemoryError"
        _class = OutOfMemoryError
    return _class


def make_out_of_memory(message, figures):
    """Called by clpool._core to build the exception it raises."""
    error = out_of_memory_error_class()(message)
    for name in _FIGURES:
        setattr(error, name, figures[name])
    return error


def released_error(routine, message):
    """What a second release of a pooled object raises (clpool's PooledBuffer, PooledSVM and
    page-locked blocks): pyopencl.LogicError as PyOpenCL's own C++ raises it, from an
    _ErrorRecord, so that str() says "ROUTINE failed: INVALID_VALUE - MESSAGE" (given the three
    values directly, PyOpenCL's errors print the routine alone); ValueError without pyopencl."""
    try:
        import pyopencl
    except ImportError:
        return ValueError(f"{routine}: {message}")
    try:
        from pyopencl import _cl

        return pyopencl.LogicError(_cl._ErrorRecord(routine, -30, message))  # CL_INVALID_VALUE
    except (ImportError, AttributeError, TypeError):
        return pyopencl.LogicError(routine, -30, message)
