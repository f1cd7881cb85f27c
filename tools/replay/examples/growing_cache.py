#!/usr/bin/python3
"""An image service whose out-of-memory has one obvious cause: a cache of results that is never
evicted (ResultCache.remember keeps a device copy of every answer). Each request also makes
short-lived temporaries, which come and go.

    growing_cache.py [--requests N] [--clpool-pool]

Run it under `clpool record` (the OpenCL layer records every clCreateBuffer with the Python stack
that made it), or set CLPOOL_APP_TRACE=PATH to record the same requests through clpool.record.
Then `clpool_replay TRACE --capacity 64MiB` names ResultCache.remember as the site holding the
memory. With --clpool-pool the arrays come from clpool.pyopencl.MemoryPool (the clpool package
must be importable): under the layer the innermost frames of each allocation are then clpool's,
and the sites are still named by this program's functions. Needs python3-pyopencl and
pocl-opencl-icd (tools/setup.sh installs both).
"""
import argparse
import os

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.tools as cl_tools

SIDE = 512  # one image: 512 x 512 float32 = 1 MiB


class ResultCache:
    def __init__(self):
        self.entries = {}

    def remember(self, key, queue, result):
        # The bug: a device copy of every result, and nothing ever evicts it.
        self.entries[key] = result.copy(queue=queue)


def preprocess(image):
    scaled = image * 2.0 + 1.0     # temporaries, freed when the request ends
    return scaled * scaled


def serve(queue, cache, key, image):
    result = preprocess(image)
    cache.remember(key, queue, result)
    return cla.sum(result).get()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=96)
    parser.add_argument("--clpool-pool", action="store_true",
                        help="allocate through clpool.pyopencl.MemoryPool")
    args = parser.parse_args()
    ctx = cl.Context(dev_type=cl.device_type.ALL)
    queue = cl.CommandQueue(ctx)
    allocator = None  # PyOpenCL's default: one clCreateBuffer per array, as the layer sees it
    if args.clpool_pool:
        import clpool.pyopencl
        allocator = clpool.pyopencl.MemoryPool(clpool.pyopencl.ImmediateAllocator(queue))
    trace = os.environ.get("CLPOOL_APP_TRACE")
    if trace and args.clpool_pool:
        parser.error("CLPOOL_APP_TRACE records PyOpenCL's ImmediateAllocator: not with --clpool-pool")
    if trace:
        import clpool.record
        allocator = clpool.record.recording(cl_tools.ImmediateAllocator(queue), trace)
    rng = np.random.default_rng(3)
    cache = ResultCache()
    for key in range(args.requests):
        image = cla.to_device(queue, rng.random((SIDE, SIDE), dtype=np.float32), allocator=allocator)
        serve(queue, cache, key, image)
        del image
    queue.finish()
    print(f"served {args.requests} requests; the cache holds {len(cache.entries)} results")
    if trace:
        allocator.close()


if __name__ == "__main__":
    main()
