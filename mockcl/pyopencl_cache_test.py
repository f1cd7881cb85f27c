"""PyOpenCL's own binary cache on mockcl: run by pyopencl_cache_test.sh three times with one cache
directory (XDG_CACHE_HOME), in the mode MOCKCL_BACKING names. argv: libmockcl.so, then "build"
(the cache must be empty: PyOpenCL builds from source and stores CL_PROGRAM_BINARIES) or "hit"
(PyOpenCL must rebuild the program with clCreateProgramWithBinary from what it stored), then the
expected values ("compute": the kernel's results; "none": no backing device computes).
"""
import sys

import numpy as np
import pyopencl as cl

from mockcl_snapshot import snapshot_reader  # beside this script

snapshot = snapshot_reader(sys.argv[1])
phase, computes = sys.argv[2], sys.argv[3] == "compute"

platform = [p for p in cl.get_platforms() if p.name == "mockcl"][0]
ctx = cl.Context([platform.get_devices()[0]])
queue = cl.CommandQueue(ctx)
prg = cl.Program(
    ctx,
    """
__kernel void axpy(__global float* y, __global const float* x, const float a, const int n) {
  int i = get_global_id(0);
  if (i < n) y[i] += a * x[i];
}
""",
).build()
calls = snapshot()["calls"]
from_binary = calls.get("clCreateProgramWithBinary", 0)
if phase == "build":
    assert from_binary == 0, calls
else:
    assert from_binary >= 1, calls  # the cache was used

# The kernel's signature survived: PyOpenCL sees four arguments and launches it.
knl = prg.axpy
assert knl.num_args == 4, knl.num_args
n = 256
x = np.arange(n, dtype=np.float32)
y = np.ones(n, dtype=np.float32)
mf = cl.mem_flags
x_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
y_buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
knl(queue, (n,), None, y_buf, x_buf, np.float32(2), np.int32(n))
out = np.empty_like(y)
cl.enqueue_copy(queue, out, y_buf)
queue.finish()
if computes:
    assert (out == 1 + 2 * x).all(), out[:8]
# A wrong argument count is refused as on a real driver (PyOpenCL checks against num_args).
try:
    knl(queue, (n,), None, y_buf, x_buf)
    raise AssertionError("two arguments for four were accepted")
except (TypeError, cl.LogicError) as e:
    assert "4" in str(e) or "argument" in str(e).lower(), e
queue.finish()
print("PASS", phase, "from_binary=%d" % from_binary)
