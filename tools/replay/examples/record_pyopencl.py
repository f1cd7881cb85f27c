#!/usr/bin/python3
"""Records a real PyOpenCL workload on POCL as a clpool trace (trace/FORMAT.md).

Until the OpenCL layer (OPENCL_LAYERS) lands, this records at the PyOpenCL level instead: every
pyopencl.array in the workload gets its memory from `recording_allocator`, which creates a real
cl.Buffer and writes an `alloc` line, and a weakref finalizer writes the `free` line when the
buffer object is destroyed (when PyOpenCL releases the cl_mem). The workload is a small
batched image pipeline whose batch grows each epoch, so temporaries of many sizes come and go.

    /usr/bin/python3 tools/replay/examples/record_pyopencl.py tools/replay/examples/pyopencl_pocl.trace

Needs python3-pyopencl and pocl-opencl-icd (tools/setup.sh installs both).
"""
import gc
import sys
import threading
import time
import weakref

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.clmath as clmath


class TraceWriter:
    def __init__(self, path, device_name):
        self.out = open(path, "w")
        self.out.write("clpool-trace 1\n")
        self.out.write("# source: tools/replay/examples/record_pyopencl.py (PyOpenCL allocator hook)\n")
        self.out.write(f"# device: {device_name}\n")
        self.out.write("# seq time_ns thread queue action id size kind flags\n")
        self.seq = 0
        self.next_id = 1
        self.start = time.perf_counter_ns()
        self.lock = threading.Lock()

    def event(self, action, ident, size, flags):
        with self.lock:
            t = time.perf_counter_ns() - self.start
            self.out.write(f"{self.seq} {t} 0 1 {action} {ident} {size} buffer {hex(flags)}\n")
            self.seq += 1

    def close(self):
        self.out.close()


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "pyopencl_pocl.trace"
    ctx = cl.Context(dev_type=cl.device_type.ALL)
    queue = cl.CommandQueue(ctx)
    writer = TraceWriter(path, ctx.devices[0].name.strip())
    flags = cl.mem_flags.READ_WRITE

    finalizers = []

    def recording_allocator(nbytes):
        buf = cl.Buffer(ctx, flags, max(int(nbytes), 1))
        ident = writer.next_id
        writer.next_id += 1
        writer.event("alloc", ident, int(nbytes), int(flags))
        finalizers.append(weakref.finalize(buf, writer.event, "free", ident, int(nbytes), int(flags)))
        return buf

    rng = np.random.default_rng(7)
    side = 512
    for epoch in range(6):
        batch = 4 + 3 * epoch  # the batch grows: each epoch needs more memory than the last
        images = cla.to_device(queue, rng.random((batch, side, side), dtype=np.float32),
                               allocator=recording_allocator)
        weights = cla.to_device(queue, rng.random((side, side), dtype=np.float32),
                                allocator=recording_allocator)
        kept = []
        for step in range(batch):
            img = images[step]
            scaled = img * 2.0 + 1.0             # temporaries of one image
            activated = clmath.tanh(scaled)
            mixed = activated * weights - 0.5
            energy = cla.sum(mixed * mixed)      # reduction: small scratch buffers
            kept.append(mixed)                   # activations kept for the "backward" pass
            del scaled, activated
            _ = energy.get()
        stacked = cla.zeros(queue, (batch, side, side), np.float32, allocator=recording_allocator)
        for step, m in enumerate(kept):
            stacked[step] = m
        grad = stacked * 0.1
        _ = cla.max(grad).get()
        del kept, stacked, grad, images, weights, img, mixed, energy
        gc.collect()
        queue.finish()
    queue.finish()
    gc.collect()
    # Buffers PyOpenCL still holds at exit (cached scratch) are released with the process.
    for f in finalizers:
        if f.alive:
            f()
    writer.close()
    print(f"wrote {writer.seq} events to {path}")


if __name__ == "__main__":
    main()
