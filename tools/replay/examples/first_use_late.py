#!/usr/bin/python3
"""Two 2.5 GiB buffers, never committed at once on a device that commits at first use: the
second is created while the first is still held, and first used after the first is released
(tools/replay/README.md, "When a buffer is first used")."""
import numpy as np
import pyopencl as cl

MiB = 1 << 20
ctx = cl.Context(dev_type=cl.device_type.ALL)
queue = cl.CommandQueue(ctx)
a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 2560 * MiB)
cl.enqueue_fill_buffer(queue, a, np.uint8(0), 0, 4096)
queue.finish()
b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 2560 * MiB)  # created while `a` is held
del a  # released before `b` is first used
cl.enqueue_fill_buffer(queue, b, np.uint8(0), 0, 4096)
queue.finish()
print("ok")
