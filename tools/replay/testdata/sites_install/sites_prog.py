"""A PyOpenCL program whose device memory is held by two of its own lines: one through a vendored
helper (vendor/alloc_helpers.py), one directly. clpool's sites_install_test records it with
`clpool record` over PyOpenCL installed in several places and checks the site names."""
import numpy as np
import pyopencl as cl
import pyopencl.array as cla

from vendor import alloc_helpers

ctx = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(ctx)
kept = []
for i in range(24):
    kept.append(cla.zeros(queue, 1 << 18, np.float32))  # SITE-DIRECT: 1 MiB each, never freed
    kept.append(alloc_helpers.scratch(queue, 1 << 17))  # SITE-HELPER: 512 KiB each
queue.finish()
print("held", len(kept), "arrays")
