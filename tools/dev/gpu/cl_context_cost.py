#!/usr/bin/env python3
"""What an OpenCL context, a queue and a first buffer cost in device memory, read with NVML.

    python3 cl_context_cost.py PLATFORM_SUBSTRING

clpool_probe and clpool_replay --device opencl read the device's free memory (NVML on NVIDIA);
whether they read it before or after their own context exists matters if a context takes device
memory. This prints NVML's free memory after each step (ctypes on the ICD loader, libOpenCL.so.1,
and on libnvidia-ml.so.1), and the time each OpenCL call took. Exit 0 when it ran, 3 when NVML or
the platform is missing.
"""
import ctypes
import sys
import time

CL_PLATFORM_NAME = 0x0902
CL_DEVICE_TYPE_ALL = 0xFFFFFFFF
CL_MEM_READ_WRITE = 1
CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED = 2
MIB = 1 << 20


class NvmlMemory(ctypes.Structure):
    _fields_ = [
        ("total", ctypes.c_ulonglong),
        ("free", ctypes.c_ulonglong),
        ("used", ctypes.c_ulonglong),
    ]


def opencl_library():
    """The ICD loader with the argument types of the calls measured here."""
    cl = ctypes.CDLL("libOpenCL.so.1")
    cl.clCreateContext.restype = ctypes.c_void_p
    cl.clCreateContext.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_int),
    ]
    cl.clCreateCommandQueueWithProperties.restype = ctypes.c_void_p
    cl.clCreateCommandQueueWithProperties.argtypes = [
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_int),
    ]
    cl.clCreateBuffer.restype = ctypes.c_void_p
    cl.clCreateBuffer.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint64,
        ctypes.c_size_t,
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_int),
    ]
    cl.clEnqueueMigrateMemObjects.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint,
        ctypes.c_void_p,
        ctypes.c_uint64,
        ctypes.c_uint,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    for name in ("clReleaseMemObject", "clReleaseCommandQueue", "clReleaseContext", "clFinish"):
        getattr(cl, name).argtypes = [ctypes.c_void_p]
    return cl


def find_platform(cl, want):
    """The last OpenCL platform whose name contains `want` (lower case), or None."""
    n = ctypes.c_uint()
    cl.clGetPlatformIDs(0, None, ctypes.byref(n))
    platforms = (ctypes.c_void_p * n.value)()
    cl.clGetPlatformIDs(n.value, platforms, None)
    platform = None
    for p in platforms:
        name = ctypes.create_string_buffer(256)
        cl.clGetPlatformInfo(ctypes.c_void_p(p), CL_PLATFORM_NAME, 256, name, None)
        if want in name.value.decode(errors="replace").lower():
            platform = p
            print("cl_context_cost: platform %s" % name.value.decode(errors="replace"))
    return platform


def main():
    want = sys.argv[1].lower() if len(sys.argv) > 1 else "nvidia"
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError as e:
        print("cl_context_cost: no NVML (%s): nothing to measure" % e)
        return 3
    if nvml.nvmlInit_v2() != 0:
        print("cl_context_cost: nvmlInit_v2 failed")
        return 3
    handle = ctypes.c_void_p()
    if nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)) != 0:
        print("cl_context_cost: no NVML device 0")
        return 3

    def free():
        m = NvmlMemory()
        nvml.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(m))
        return m.free

    cl = opencl_library()

    rows = []
    last = [free(), time.monotonic()]

    def note(what):
        f, t = free(), time.monotonic()
        rows.append((what, f, last[0] - f, t - last[1]))
        last[0], last[1] = f, t

    note("start (NVML initialised, no OpenCL call yet)")
    platform = find_platform(cl, want)
    if platform is None:
        print("cl_context_cost: no platform matching %r" % want)
        return 3
    device = ctypes.c_void_p()
    cl.clGetDeviceIDs(
        ctypes.c_void_p(platform),
        ctypes.c_uint64(CL_DEVICE_TYPE_ALL),
        1,
        ctypes.byref(device),
        None,
    )
    note("clGetPlatformIDs + clGetDeviceIDs")
    err = ctypes.c_int()
    ctx = cl.clCreateContext(None, 1, ctypes.byref(device), None, None, ctypes.byref(err))
    note("clCreateContext (first) -> %d" % err.value)
    queue = cl.clCreateCommandQueueWithProperties(ctx, device, None, ctypes.byref(err))
    note("clCreateCommandQueueWithProperties -> %d" % err.value)
    mem = ctypes.c_void_p(cl.clCreateBuffer(ctx, CL_MEM_READ_WRITE, MIB, None, ctypes.byref(err)))
    note("clCreateBuffer 1 MiB -> %d" % err.value)
    s = cl.clEnqueueMigrateMemObjects(
        queue, 1, ctypes.byref(mem), CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, None, None
    )
    cl.clFinish(queue)
    note("clEnqueueMigrateMemObjects (first use) -> %d" % s)
    ctx2 = cl.clCreateContext(None, 1, ctypes.byref(device), None, None, ctypes.byref(err))
    note("clCreateContext (second, same process) -> %d" % err.value)
    queue2 = cl.clCreateCommandQueueWithProperties(ctx2, device, None, ctypes.byref(err))
    note("second queue -> %d" % err.value)
    cl.clReleaseCommandQueue(queue2)
    cl.clReleaseContext(ctx2)
    note("second queue and context released")
    cl.clReleaseMemObject(mem)
    cl.clFinish(queue)
    note("buffer released")
    cl.clReleaseCommandQueue(queue)
    cl.clReleaseContext(ctx)
    note("first queue and context released")
    ctx3 = cl.clCreateContext(None, 1, ctypes.byref(device), None, None, ctypes.byref(err))
    note("clCreateContext again (after releasing both) -> %d" % err.value)
    cl.clReleaseContext(ctx3)
    note("released")
    print("%-60s %16s %14s %9s" % ("step", "NVML free (B)", "took (B)", "seconds"))
    for what, f, took, dt in rows:
        print("%-60s %16d %14d %9.3f" % (what, f, took, dt))
    return 0


if __name__ == "__main__":
    sys.exit(main())
