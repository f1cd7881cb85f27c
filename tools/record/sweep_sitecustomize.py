# Put first on PYTHONPATH by clpool sweep for each run: a Python program's exit is reported to the
# layer at Python's own exit (atexit runs before the interpreter frees the program's objects), so
# that what the program still held then is what the sweep compares. Then the sitecustomize that
# was there before, if any, runs as it would have.
import atexit
import ctypes
import gc
import importlib.machinery
import importlib.util
import os
import sys


def _report_exit():
    # An uncaught exception's traceback is kept in sys.last_* for a debugger (PyErr_Print), and
    # its frames keep their locals: the temporaries of the failing expression. The program no
    # longer holds those, so they are let go before its memory is counted.
    for name in ("last_exc", "last_type", "last_value", "last_traceback"):
        if hasattr(sys, name):
            setattr(sys, name, None)
    gc.collect()
    layer = os.environ.get("CLPOOL_SWEEP_LAYER")
    try:
        ctypes.CDLL(layer, mode=os.RTLD_NOLOAD | os.RTLD_NOW).clpool_layer_report_exit()
    except (OSError, AttributeError, TypeError):
        pass  # OpenCL never loaded the layer: nothing to report


atexit.register(_report_exit)

_here = os.path.dirname(os.path.abspath(__file__))
for _p in sys.path:
    if os.path.abspath(_p or ".") == _here:
        continue
    _spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [_p])
    if _spec is not None and _spec.loader is not None:
        _module = importlib.util.module_from_spec(_spec)
        _spec.loader.exec_module(_module)
        break
