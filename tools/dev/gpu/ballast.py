#!/usr/bin/env python3
"""Holds CUDA device memory so that a chosen amount stays free for the OpenCL tools.

    python3 ballast.py leave BYTES STATUS_FILE    # allocate until about BYTES are free
    python3 ballast.py take BYTES STATUS_FILE     # allocate BYTES more (in 2 MiB steps)

Uses the CUDA driver API (libcuda.so.1) through ctypes: cuMemAlloc commits device memory at once,
so what it holds is gone for every other process (OpenCL included) until this process exits.
Writes 'key value' lines to STATUS_FILE, the last one 'ready 1' (or 'error ...'), then sleeps
until it is killed or its parent exits. Exit 3 when CUDA cannot be used.
"""
import ctypes
import os
import signal
import sys
import time

MIB = 1 << 20
STEP = 2 * MIB


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("leave", "take"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, amount, status_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    status = open(status_path, "w", buffering=1)

    def say(key, value):
        status.write("%s %s\n" % (key, value))
        print("ballast: %s %s" % (key, value), file=sys.stderr, flush=True)

    start = time.monotonic()
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        say("error", "cannot load libcuda.so.1: %s" % e)
        return 3

    def ok(result, what):
        if result != 0:
            raise RuntimeError("%s: CUresult %d" % (what, result))

    try:
        ok(cuda.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        ok(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        ctx = ctypes.c_void_p()
        ok(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
        ok(cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        free, total = ctypes.c_size_t(), ctypes.c_size_t()

        def mem_info():
            ok(cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)), "cuMemGetInfo")
            return free.value

        mem_info()
        say("total", total.value)
        say("free_before", free.value)
        held = []
        taken = 0
        want = amount if mode == "take" else max(0, free.value - amount)
        chunk = 8 << 30
        while want - taken >= STEP:
            size = min(chunk, (want - taken) // STEP * STEP)
            ptr = ctypes.c_uint64()
            r = cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(size))
            if r != 0:
                if size <= STEP:
                    break
                chunk = max(STEP, size // 2 // STEP * STEP)
                if mode == "leave":  # the context itself took some: aim at what is free now
                    want = taken + max(0, mem_info() - amount)
                continue
            held.append(ptr)
            taken += size
            if mode == "leave" and want - taken < STEP:
                # Re-read: the driver's own use moves with the allocations.
                want = taken + max(0, mem_info() - amount)
        say("held", taken)
        say("blocks", len(held))
        say("free_after", mem_info())
        say("seconds", "%.2f" % (time.monotonic() - start))
        say("ready", 1)
    except Exception as e:  # noqa: BLE001 - anything here means "no ballast"
        say("error", str(e))
        return 3
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    # Until killed, or until the script that started it is gone (then the memory goes back too).
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
