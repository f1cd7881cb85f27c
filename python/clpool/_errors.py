"""clpool.OutOfMemoryError and the classes clpool.CLError takes with PyOpenCL, made on first use so
that importing clpool does not import pyopencl."""

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


_cl_error_classes = {}


def _pyopencl_class(status):
    """The class PyOpenCL's own calls raise for `status`: pyopencl.MemoryError for
    CL_MEM_OBJECT_ALLOCATION_FAILURE, pyopencl.LogicError for CL_INVALID_VALUE (-30) and below,
    pyopencl.RuntimeError for the other failures; None without pyopencl."""
    try:
        import pyopencl
    except ImportError:
        return None
    if status == -4:
        return pyopencl.MemoryError
    return pyopencl.LogicError if status <= -30 else pyopencl.RuntimeError


def cl_error(message, status, routine):
    """What an OpenCL failure other than the pool's out-of-memory raises (clpool._core turns a
    C++ opencl::cl_error into it): a clpool.CLError (a RuntimeError with .status) that is also
    the pyopencl error PyOpenCL raises for the same status, so that `except pyopencl.Error` (or
    LogicError) catches it where it caught PyOpenCL's pool's. str() is clpool's message; .code is
    the status, .routine the OpenCL call, .what the message, as on PyOpenCL's errors."""
    from clpool import _core

    base = _pyopencl_class(status)
    if base is None:
        error = _core.CLError(message)
    else:
        cls = _cl_error_classes.get(base)
        if cls is None:
            cls = type(
                "CLError",
                (_core.CLError, base),
                {
                    "__module__": "clpool",
                    "__doc__": _core.CLError.__doc__,
                    "__str__": lambda self: str(self.args[0]) if self.args else "",
                    "code": property(lambda self: getattr(self, "status", None)),
                    "routine": property(lambda self: getattr(self, "_routine", None)),
                    "what": property(lambda self: str(self)),
                    # Pickled as the call that makes it (the class is made at run time).
                    "__reduce__": lambda self: (
                        cl_error,
                        (str(self), getattr(self, "status", 0), getattr(self, "_routine", "")),
                    ),
                },
            )
            _cl_error_classes[base] = cls
        error = cls(message)
        error._routine = routine
    error.status = status
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
