"""App-level allocation traces of a PyOpenCL program: what the program asks its allocator or pool
for, not what the pool asks the driver.

    import clpool.record
    allocator = clpool.record.recording(
        pyopencl.tools.MemoryPool(pyopencl.tools.ImmediateAllocator(queue)), "app.trace")

``recording(allocator, path)`` wraps any ``pyopencl.tools`` allocator or pool (``ImmediateAllocator``,
``DeferredAllocator``, ``MemoryPool``, ``SVMAllocator``, ``SVMPool``), or any callable that takes
a size and returns a buffer, and is used in its place. Each request that returns a buffer is an
``alloc`` of the size requested; the buffer's ``free`` when the application drops it (a weak
reference to the returned object where its binding library's classes take them, as PyOpenCL
2022.x's do, else to a sentinel kept in its ``__dict__``, as for PyOpenCL 2024.2 onwards: which one
is for clpool's binding seam to say, ``clpool._core.binding_of``, python/foreign_binding.h; the
free is written before the next event, see ``Recording``), so the trace shows how long the program
kept each buffer, whatever the pool did with the memory. A request that raises an out-of-memory
error (``pyopencl.MemoryError``) is an ``alloc_failed``. ``free_held()`` and ``stop_holding()``
called through the wrapper are recorded too. The file is clpool's trace format (trace/FORMAT.md),
which ``clpool_replay`` replays.

With ``stacks=True`` (the default) each ``alloc`` and ``alloc_failed`` carries the Python stack that
asked for it (file, function, line of each frame, at most 48 innermost frames, this module's own
left out), interned as the format's version-2 frame and stack tables, so ``clpool_replay`` can name
the code that holds the memory at an out-of-memory. ``stacks=False`` writes version 1.

It does not import pyopencl. The file itself is written by the extension (clpool._core._RecordFile,
python/record_file.h): the trace module's header and escaping, the OpenCL layer's stack capture, and
the extension's one rule for a file already at the path (python/trace_output.h). Frees carry the
time the buffer died (clpool._core.DeathLog).
"""

import atexit
import operator
import os
import threading
import time
import warnings
import weakref

from clpool._core import DeathLog as _DeathLog
from clpool._core import _RecordFile
from clpool._core import binding_of as _binding_of

__all__ = ["recording", "Recording"]

_THIS_FILE = __file__


def _is_out_of_memory(error):
    # pyopencl.MemoryError (not a builtins.MemoryError), or Python's own; matched by name so that
    # this module does not import pyopencl.
    return isinstance(error, MemoryError) or type(error).__name__ == "MemoryError"


def _kind_of(obj):
    return "svm" if "SVM" in type(obj).__name__ else "buffer"


class _DeathSentinel:
    """Kept in the __dict__ of an object that takes no weak references: the object's dealloc
    clears its dict, and this one's weak reference then reports the death."""

    __slots__ = ("__weakref__",)


# The attribute that holds a _DeathSentinel (PyOpenCL 2024.2 onwards).
SENTINEL_ATTRIBUTE = "_clpool_record_sentinel"


def _death_signal(cls, cache):
    """How an object of `cls` tells its death, as the binding seam says for the binding library
    that made `cls` ("weakref", "attribute" or "none"); asked once per class. ValueError for a bad
    CLPOOL_PYTHON_BINDING."""
    signal = cache.get(cls)
    if signal is None:
        signal = cache[cls] = _binding_of(cls)[2]
    return signal


def _cannot_watch(obj):
    return TypeError(
        f"clpool.record: cannot see when a {type(obj).__module__}.{type(obj).__qualname__} "
        "dies: it takes neither weak references nor attributes"
    )


def _death_reference(obj, note, signal):
    """A weak reference whose callback `note` runs when `obj` dies: on `obj` itself ("weakref":
    PyOpenCL 2022.x, pybind11), or on a sentinel in obj's __dict__ ("attribute": PyOpenCL 2024.2
    onwards, nanobind: its Buffer, PooledBuffer and PooledSVM take no weak references)."""
    if signal == "weakref":
        try:
            return weakref.ref(obj, note)
        except TypeError:
            raise _cannot_watch(obj) from None
    if signal != "attribute":
        raise _cannot_watch(obj)
    sentinel = _DeathSentinel()
    try:
        setattr(obj, SENTINEL_ATTRIBUTE, sentinel)
    except (AttributeError, TypeError):
        raise _cannot_watch(obj) from None
    return weakref.ref(sentinel, note)


class Recording:
    """Calls the wrapped allocator and writes what was asked of it. Use ``recording()``.

    How frees are seen: each buffer handed out gets a weak reference whose callback is C code
    (clpool._core.DeathLog's ``note``, which notes the time). When the buffer dies, CPython calls it
    without running any Python code, and the next event this recording writes (or ``flush()``,
    ``close()``) writes the frees noted so far first. This matters: a Python callback (such as
    ``weakref.finalize``'s) that runs while PyOpenCL 2022.3 frees a buffer can crash the
    interpreter, because that PyOpenCL's objects stay visible to the garbage collector while they
    are being freed (pybind11 2.10; see python/pooled_buffer_type.h). A free's place among the
    allocations is exact; its timestamp is when the buffer died.

    Thread-safe: one lock orders the writes, so ``seq`` increases through the file.
    """

    def __init__(self, allocator, path, stacks=True):
        if not callable(allocator):
            raise TypeError(
                f"clpool.record.recording: the allocator must be callable (a pyopencl.tools "
                f"allocator or pool), not {type(allocator).__name__}"
            )
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(
                f"clpool.record.recording: path must be a str or os.PathLike, not "
                f"{type(path).__name__}"
            )
        path = os.fsdecode(path)
        if not path:
            raise ValueError("clpool.record.recording: path is empty")
        # A bad CLPOOL_PYTHON_BINDING is refused here, before any file is written, rather than
        # at the first buffer (the seam reads it for every class it is asked about).
        _binding_of(object)
        self._allocator = allocator
        self.path = path
        # FileExistsError for a file that is not a trace this module wrote; OSError otherwise.
        self._file = _RecordFile(
            path,
            bool(stacks),
            f"{type(allocator).__module__}.{type(allocator).__name__}",
            _THIS_FILE,
        )
        self._deaths = _DeathLog()  # (weak reference, time_ns) of buffers that died
        self._note = self._deaths.note
        self._live = {}  # id(weak reference) -> (weak reference, block id, size, kind)
        self._signals = {}  # class -> how its objects tell their death (_death_signal)
        self._lock = threading.Lock()
        self._seq = 0
        self._next_id = 1
        self._threads = {}
        self._start = time.monotonic_ns()
        self._closed = False
        self._closed_by_program = False  # close() called, not the one at exit
        self._warned_closed = False
        atexit.register(self._close_at_exit)

    # --- the allocator's interface -----------------------------------------------------------

    def __call__(self, size):
        if isinstance(size, bool):  # an int to operator.index, but no size anyone means
            raise TypeError("clpool.record: size must be an int, not bool")
        size = operator.index(size)
        if not 0 <= size < 2**64:
            raise ValueError(f"clpool.record: size {size} is not a byte count (0 to 2^64 - 1)")
        self._warn_if_closed()
        try:
            buffer = self._allocator(size)
        except Exception as error:
            if _is_out_of_memory(error):
                self._event("alloc_failed", 0, size, "buffer", True)
            raise
        if buffer is None:  # zero bytes: PyOpenCL's allocators return None (its pools a buffer)
            return None
        kind = _kind_of(buffer)
        with self._lock:
            if self._closed:
                return buffer
            block_id = self._next_id
            self._next_id += 1
            ref = _death_reference(buffer, self._note, _death_signal(type(buffer), self._signals))
            self._live[id(ref)] = (ref, block_id, size, kind)
            self._write("alloc", block_id, size, kind, True)
        return buffer

    def allocate(self, size):
        """``pool.allocate(size)``: the same as calling the recording."""
        return self(size)

    def free_held(self):
        self._allocator.free_held()
        self._event("free_held", 0, 0, "buffer")

    def stop_holding(self):
        self._allocator.stop_holding()
        self._event("stop_holding", 0, 0, "buffer")

    def __getattr__(self, name):
        # held_blocks, active_blocks, ... of the wrapped pool. Never our own private names (a
        # half-constructed Recording has no _allocator to ask).
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._allocator, name)

    # --- the file ----------------------------------------------------------------------------

    def flush(self):
        """Writes the frees seen so far (they are otherwise written before the next event)."""
        self._event(None, 0, 0, None)

    def close(self):
        """Writes the frees seen so far and closes the file (also at exit). Buffers still alive
        stay live in the trace; later events are dropped, and the first allocation after a
        ``close()`` the program called warns (RuntimeWarning) that it is not recorded."""
        self._close(at_exit=False)

    def _close(self, at_exit):
        with self._lock:
            if self._closed:
                return
            self._write(None, 0, 0, None)
            self._closed = True
            self._closed_by_program = not at_exit
            self._file.close()
            self._live.clear()  # their callbacks go with them
        atexit.unregister(self._close_at_exit)

    def _close_at_exit(self):
        # At exit other atexit handlers may still allocate: they are dropped without a word.
        self._close(at_exit=True)

    def _warn_if_closed(self):
        if self._closed and self._closed_by_program and not self._warned_closed:
            self._warned_closed = True
            warnings.warn(
                f"clpool.record: the recording to {self.path} was closed; this allocation and "
                "later ones are not recorded",
                RuntimeWarning,
                stacklevel=3,
            )

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _event(self, action, block_id, size, kind, with_stack=False):
        with self._lock:
            if not self._closed:
                self._write(action, block_id, size, kind, with_stack)

    def _write(self, action, block_id, size, kind, with_stack=False):
        # Under self._lock: the frees seen since the last write, then the event (if any). The
        # stack is the caller's, captured by the extension without this module's frames.
        t = time.monotonic_ns() - self._start
        thread = self._threads.setdefault(threading.get_ident(), len(self._threads))
        for ref, died in self._deaths.drain():
            _, freed_id, freed_size, freed_kind = self._live.pop(id(ref))
            self._file.write(
                self._seq,
                min(died - self._start, t),
                thread,
                "free",
                freed_id,
                freed_size,
                freed_kind,
            )
            self._seq += 1
        if action is not None:
            self._file.write(self._seq, t, thread, action, block_id, size, kind, with_stack)
            self._seq += 1
        self._file.flush()


def recording(allocator, path, stacks=True):
    """Returns ``allocator`` wrapped so that what the program asks of it is written to the clpool
    trace at ``path`` (created, or replaced only if it is a trace this module wrote). Call it, or
    its ``allocate``, as the allocator itself; close it (or use it as a context manager) to finish
    the file, which also happens at exit. ``stacks``: record each allocation's Python stack."""
    return Recording(allocator, path, stacks)
