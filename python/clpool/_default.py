"""The default OpenCL context and queue, made on first use: what PyCUDA's pycuda.autoinit and
CuPy's device 0 give code that names no device. PYOPENCL_CTX chooses the device as it does for
pyopencl.create_some_context(); without it, the first device of the first platform."""
import threading

_lock = threading.Lock()
_state = {}


def queue():
    with _lock:
        if "queue" not in _state:
            import pyopencl

            context = pyopencl.create_some_context(interactive=False)
            _state["context"] = context
            _state["queue"] = pyopencl.CommandQueue(context)
        return _state["queue"]


def context():
    queue()
    return _state["context"]


def device():
    return queue().device
