#!/usr/bin/python3
"""A PyOpenCL program with real kernels that allocates through pyopencl.tools.MemoryPool, for
recording two ways (record_pyopencl_pooled.sh, next to this file):

- under the clpool layer (`clpool record`), which sees what the *pool* asks the driver for: bin
  sizes, and buffers kept by the pool long after the program dropped them;
- with `--record-app PATH`, which wraps the pool with clpool.record (a one-line change, marked
  below) and writes what the *program* asks the pool for: exact sizes, freed when dropped.

Each step smooths a signal with a custom kernel, scales it with an ElementwiseKernel, takes its
energy with a ReductionKernel, and keeps the last few results (a sliding history); the signal
grows every step, so each step needs more memory than the last.

    pyopencl_pooled.py [--steps N] [--record-app PATH]
"""
import argparse

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.tools as cl_tools
from pyopencl.elementwise import ElementwiseKernel
from pyopencl.reduction import ReductionKernel

SMOOTH = """
__kernel void smooth(__global const float* in, __global float* out, const int n) {
  const int i = get_global_id(0);
  const float left = in[i > 0 ? i - 1 : i], right = in[i + 1 < n ? i + 1 : i];
  out[i] = 0.25f * left + 0.5f * in[i] + 0.25f * right;
}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--record-app", metavar="PATH",
                        help="write the program's own requests to PATH (clpool.record)")
    args = parser.parse_args()
    if args.steps < 1:
        parser.error(f"--steps: {args.steps} is not a positive number of steps")
    ctx = cl.Context(dev_type=cl.device_type.ALL)
    queue = cl.CommandQueue(ctx)
    pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(queue))
    allocator = pool
    if args.record_app:
        import clpool.record
        allocator = clpool.record.recording(pool, args.record_app)  # the one-line change

    smooth = cl.Program(ctx, SMOOTH).build().smooth
    axpb = ElementwiseKernel(ctx, "float a, const float *x, float b, float *z",
                             "z[i] = a * x[i] + b", "axpb")
    energy = ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b",
                             map_expr="x[i]*x[i]", arguments="__global const float *x")
    rng = np.random.default_rng(11)
    history = []
    for step in range(args.steps):
        n = 250_000 + 150_000 * step + 1_237 * step * step   # odd sizes: the pool rounds them
        signal = cla.to_device(queue, rng.random(n, dtype=np.float32), allocator=allocator)
        smoothed = cla.empty_like(signal)
        smooth(queue, (n,), None, signal.data, smoothed.data, np.int32(n))
        scaled = cla.empty_like(smoothed)
        axpb(np.float32(0.5), smoothed, np.float32(1.0), scaled)
        total = energy(scaled, allocator=allocator).get()
        history.append(scaled)
        if len(history) > 3:
            history.pop(0)
        del signal, smoothed
        print(f"step {step}: {n} floats, energy {float(total):.1f}")
    queue.finish()
    del history, scaled
    print(f"pool: {pool.held_blocks} blocks held, {pool.active_blocks} active")
    if args.record_app:
        allocator.close()


if __name__ == "__main__":
    main()
