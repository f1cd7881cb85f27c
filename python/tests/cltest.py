"""Shared set-up for the clpool Python tests: the device the runner chose (CLPOOL_TEST_MODE)."""
import os

import pyopencl as cl

MiB = 1 << 20
MODE = os.environ.get("CLPOOL_TEST_MODE", "pocl")


def platform():
    for p in cl.get_platforms():
        if MODE == "mockcl" and p.name == "mockcl":
            return p
        if MODE == "pocl" and "Portable" in p.name:
            return p
    raise RuntimeError(f"no {MODE} platform among {[p.name for p in cl.get_platforms()]}")


def context_and_queue(index=0):
    device = platform().get_devices()[index]
    ctx = cl.Context([device])
    return ctx, cl.CommandQueue(ctx)
