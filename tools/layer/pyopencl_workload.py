#!/usr/bin/python3
"""A training-like PyOpenCL workload, recorded through the clpool layer.

It allocates what a small model would: weights as plain Buffers, a host-pinned staging buffer,
an SVM scratch area freed through a queue (clEnqueueSVMFree), and per-step activations from a
pyopencl MemoryPool whose sizes grow with the step (a growing batch or sequence length). Under a
simulated budget (CLPOOL_LAYER_BUDGET) the activations eventually do not fit, and the pool's
free_held-and-retry cannot help: the program fails the way it would on a smaller card.

    pyopencl_workload.py [--scale BYTES] [--steps N] [--allocator immediate|deferred]

--scale is the device size the workload is written for (default 64 MiB; use 4GiB-class values for
the README's scenario). Exit status: 0 when every step ran, 3 on out-of-memory, 2 for bad usage.
"""

import argparse
import sys
import warnings

import pyopencl as cl
import pyopencl.tools as cl_tools

MiB = 1 << 20


def parse_size(text):
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    for suffix, factor in units.items():
        if text.endswith(suffix):
            return int(text[: -len(suffix)]) * factor
    return int(text)


def is_out_of_memory(error):
    if isinstance(error, cl.MemoryError):
        return True
    return isinstance(error, cl.Error) and error.code in (
        cl.status_code.MEM_OBJECT_ALLOCATION_FAILURE,
        cl.status_code.OUT_OF_RESOURCES,
        cl.status_code.OUT_OF_HOST_MEMORY,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scale",
        type=parse_size,
        default=64 * MiB,
        help="device size the workload is written for (bytes, KiB/MiB/GiB)",
    )
    parser.add_argument("--steps", type=int, default=6, help="training steps (default 6)")
    parser.add_argument(
        "--allocator",
        choices=["immediate", "deferred"],
        default="immediate",
        help="pool allocator: immediate touches memory at once (real use on "
        "POCL), deferred only creates buffers (cheap at large scale)",
    )
    args = parser.parse_args()
    if args.scale < MiB or args.steps < 1:
        parser.error("--scale must be at least 1MiB and --steps at least 1")

    ctx = cl.Context(devices=[cl.get_platforms()[0].get_devices()[0]])
    queue = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    layers = 8
    step = 0
    try:
        # Weights: half the device, one plain Buffer per layer.
        weights = [cl.Buffer(ctx, mf.READ_WRITE, args.scale // (2 * layers)) for _ in range(layers)]
        # Host-pinned staging area for input batches.
        staging = cl.Buffer(ctx, mf.READ_ONLY | mf.ALLOC_HOST_PTR, max(MiB, args.scale // 256))
        # SVM scratch freed on the queue (clEnqueueSVMFree), when the device has SVM.
        try:
            scratch = cl.SVMAllocation(ctx, max(MiB, args.scale // 512), 0, mf.READ_WRITE, queue)
            scratch.release()
        except (cl.Error, AttributeError):
            pass
        if args.allocator == "immediate":
            allocator = cl_tools.ImmediateAllocator(queue)
        else:
            # PyOpenCL warns that a pool over a deferred allocator may over-commit. Under the
            # layer's budget the refusal comes at creation, as with an immediate allocator.
            warnings.filterwarnings("ignore", message="Memory pools expect non-deferred")
            allocator = cl_tools.DeferredAllocator(ctx)
        pool = cl_tools.MemoryPool(allocator)
        for step in range(args.steps):
            # Activations of every layer stay alive until the backward pass; they grow by a
            # quarter of the first step's size each step.
            act = int(args.scale * 0.04 * (1 + 0.25 * step))
            activations = [pool.allocate(act) for _ in range(layers)]
            grads = [pool.allocate(act // 4) for _ in range(layers // 2)]
            for block in grads + activations:
                block.release()
            queue.finish()
            print(
                f"step {step}: activations {layers} x {act} bytes; pool holds "
                f"{pool.held_blocks} blocks, {pool.active_blocks} active"
            )
        pool.free_held()
        staging.release()
        for w in weights:
            w.release()
        queue.finish()
    except (cl.Error, cl.MemoryError) as error:
        if is_out_of_memory(error):
            print(f"out of memory at step {step}: {error}", file=sys.stderr)
            return 3
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
