#!/usr/bin/python3
"""A PyOpenCL program whose memory pool allocates through an ImmediateAllocator, which makes each
new buffer real on the device with one enqueued command (the buffer's first use) so that the
pool hears of an out-of-memory at once. It keeps four arrays of growing size, then lets them go.

    pyopencl_immediate.py pyopencl|clpool

`pyopencl`: pyopencl.tools.MemoryPool(pyopencl.tools.ImmediateAllocator(queue)); `clpool`: the
same two classes from clpool.pyopencl. An out-of-memory ends the program with exit 1, as a
program that reports it and stops (pyopencl_first_use_sweep_test.sh sweeps both).
"""
import sys

import numpy as np
import pyopencl as cl
import pyopencl.array as cla


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("pyopencl", "clpool"):
        sys.exit("usage: pyopencl_immediate.py pyopencl|clpool")
    if sys.argv[1] == "clpool":
        import clpool.pyopencl as tools
    else:
        import pyopencl.tools as tools
    ctx = cl.Context(dev_type=cl.device_type.ALL)
    queue = cl.CommandQueue(ctx)
    pool = tools.MemoryPool(tools.ImmediateAllocator(queue))
    kept = []
    for i in range(4):
        try:
            kept.append(cla.zeros(queue, (1 << 18) * (i + 1), np.float32, allocator=pool))
        except cl.MemoryError as e:
            print(f"out of memory: {e}")
            sys.exit(1)
    queue.finish()
    del kept
    pool.free_held()


if __name__ == "__main__":
    main()
