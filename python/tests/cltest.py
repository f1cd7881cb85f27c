"""Shared set-up for the clpool Python tests: the device the runner chose (CLPOOL_TEST_MODE:
pocl, mockcl, or gpu: the first platform with a GPU, as on the GPU machine of
tools/dev/gpu/run_on_gpu.sh)."""
import os
import weakref

import pyopencl as cl

MiB = 1 << 20
MODE = os.environ.get("CLPOOL_TEST_MODE", "pocl")


def _gpus(p):
    try:
        return p.get_devices(device_type=cl.device_type.GPU)
    except cl.Error:  # CL_DEVICE_NOT_FOUND
        return []


def platform():
    for p in cl.get_platforms():
        if MODE == "mockcl" and p.name == "mockcl":
            return p
        if MODE == "pocl" and "Portable" in p.name:
            return p
        if MODE == "gpu" and _gpus(p):
            return p
    raise RuntimeError(f"no {MODE} platform among {[p.name for p in cl.get_platforms()]}")


def context_and_queue(index=0):
    p = platform()
    device = (_gpus(p) if MODE == "gpu" else p.get_devices())[index]
    ctx = cl.Context([device])
    return ctx, cl.CommandQueue(ctx)


class _Sentinel:
    __slots__ = ("__weakref__",)


def watch(obj, callback):
    """A weak reference whose callback runs while `obj` is being freed: on `obj` itself where it
    takes weak references (PyOpenCL 2022.x objects), else on a sentinel in its __dict__, which its
    dealloc clears (PyOpenCL 2024.2 onwards: nanobind objects take no weak references)."""
    try:
        return weakref.ref(obj, callback)
    except TypeError:
        sentinel = _Sentinel()
        obj._cltest_sentinel = sentinel
        return weakref.ref(sentinel, callback)


def binding_gc_defect_exposed():
    """True when clpool's buffers are freed by PyOpenCL 2022.3's own dealloc (the generic path,
    forced by CLPOOL_PYTHON_BINDING=generic), which keeps pybind11 2.10's garbage-collector defect
    (python/README.md, "Threads and the GIL"): a weak-reference callback that collects while such a
    buffer is freed crashes, as it does for any pyopencl.Buffer. The pybind11 and nanobind paths
    free clpool's buffers safely."""
    import clpool.pyopencl

    return clpool.pyopencl.BINDING[0] == "generic" and cl.VERSION[:2] == (2022, 3)
