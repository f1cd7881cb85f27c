"""A pool hit from Python: clpool.pyopencl.MemoryPool vs pyopencl.tools.MemoryPool.

    PYTHONPATH=<site with clpool> /usr/bin/python3 python/bench/hit_bench.py [runs] [iterations]

Each iteration allocates 4096 bytes from a warm pool and gives the block back (the way each
pool's buffers are normally dropped: PyOpenCL's PooledBuffer.release(), or the last reference to
clpool's pyopencl.Buffer). Prints the median over `runs` of the per-iteration time.
"""
import statistics
import sys
import timeit

import pyopencl as cl
import pyopencl.tools

import clpool.pyopencl


def main(runs=7, number=20000):
    ctx = cl.Context(dev_type=cl.device_type.ALL)
    queue = cl.CommandQueue(ctx)
    theirs = pyopencl.tools.MemoryPool(pyopencl.tools.ImmediateAllocator(queue))
    ours = clpool.pyopencl.MemoryPool(clpool.pyopencl.ImmediateAllocator(queue))
    ours_core = ours._core

    cases = {
        "pyopencl.tools.MemoryPool: allocate + release()": lambda: theirs.allocate(4096).release(),
        "clpool.pyopencl.MemoryPool: allocate (pyopencl.Buffer) + drop": lambda: ours.allocate(4096),
        "clpool._core pool: allocate + drop (no pyopencl.Buffer)": lambda: ours_core.allocate(4096),
    }
    print(f"device: {ctx.devices[0].name}; {runs} runs x {number} iterations; median per hit")
    for name, fn in cases.items():
        fn()
        times = [t / number * 1e9 for t in timeit.repeat(fn, number=number, repeat=runs)]
        print(f"  {name:62s} {statistics.median(times):8.0f} ns  (min {min(times):.0f}, "
              f"max {max(times):.0f})")
    s = ours.statistics()
    print(f"clpool: {s['hits']} hits, {s['misses']} misses")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
