"""sweep_victim.c's modes in Python with PyOpenCL, for clpool sweep's tests: three buffers, each
filled (its first use) and read back, their checksum printed; MODE says what happens when one
cannot be made or used:

    handles    the MemoryError is reported and the program exits 1
    recovers   the biggest buffer held is dropped and the request tried again; same checksum
    crashes    the program goes on with a NULL pointer into native code (ctypes): SIGSEGV
    hangs      waits for a result that never comes
    leaks      keeps what it holds in a module-level cache and exits 1
    silent     leaves that buffer out of the checksum and exits 0
    raises     lets the MemoryError end the program, its traceback holding what main() held
"""
import ctypes
import sys
import time

import numpy as np
import pyopencl as cl

MODE = sys.argv[1]
ctx = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(ctx)
SIZES = [1 << 20, 2 << 20, 3 << 20]
cache = []


def make_filled(nbytes, value):
    b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, nbytes)
    cl.enqueue_copy(queue, b, np.full(nbytes, value, np.uint8))
    return b


def checksum(b, nbytes):
    host = np.empty(nbytes, np.uint8)
    cl.enqueue_copy(queue, host, b)
    return int(host[::4096].sum())


def main():
    held = [None, None, None]
    for i, n in enumerate(SIZES):
        try:
            held[i] = make_filled(n, i + 1)
        except (cl.MemoryError, cl.RuntimeError) as e:
            if MODE == "handles":
                print(f"sweep_victim.py: out of device memory for buffer {i}: {e}", file=sys.stderr)
                return 1
            if MODE == "recovers":
                bigger = max(
                    (j for j in range(i) if held[j] is not None),
                    key=lambda j: SIZES[j],
                    default=None,
                )
                if bigger is not None:
                    held[bigger] = None
                held[i] = make_filled(n, i + 1)
                if bigger is not None:
                    held[bigger] = make_filled(SIZES[bigger], bigger + 1)
                continue
            if MODE == "crashes":
                ctypes.memset(0, 1, 1)  # a native call that trusted the buffer
            if MODE == "hangs":
                while True:
                    time.sleep(1)
            if MODE == "leaks":
                cache.extend(b for b in held if b is not None)
                return 1
            if MODE == "raises":
                raise
    print("checksum", sum(checksum(b, n) for b, n in zip(held, SIZES) if b is not None))
    return 0


sys.exit(main())
