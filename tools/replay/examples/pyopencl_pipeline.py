#!/usr/bin/python3
"""A batched image pipeline in plain PyOpenCL, for recording through the clpool layer.

Every pyopencl.array here uses PyOpenCL's default allocator (no MemoryPool), so each temporary is
its own clCreateBuffer / clReleaseMemObject: the trace holds the application's own requests, and
replaying it through clpool's pool does not pool twice. The batch grows every epoch, so each epoch
needs more memory than the last. Record it with record_pyopencl_pipeline.sh (next to this file).

    pyopencl_pipeline.py [--epochs N]
"""
import argparse
import gc

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.clmath as clmath


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=6)
    args = parser.parse_args()
    ctx = cl.Context(dev_type=cl.device_type.ALL)
    queue = cl.CommandQueue(ctx)
    rng = np.random.default_rng(7)
    side = 512
    for epoch in range(args.epochs):
        batch = 4 + 3 * epoch
        images = cla.to_device(queue, rng.random((batch, side, side), dtype=np.float32))
        weights = cla.to_device(queue, rng.random((side, side), dtype=np.float32))
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
        stacked = cla.zeros(queue, (batch, side, side), np.float32)
        for step, m in enumerate(kept):
            stacked[step] = m
        grad = stacked * 0.1
        _ = cla.max(grad).get()
        del kept, stacked, grad, images, weights, img, mixed, energy
        gc.collect()
        queue.finish()
        print(f"epoch {epoch}: batch {batch}")
    queue.finish()


if __name__ == "__main__":
    main()
