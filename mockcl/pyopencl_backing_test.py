"""PyOpenCL computing on mockcl's backing device (MOCKCL_BACKING=pocl) through the ICD loader.

Run by pyopencl_backing_test.sh with MOCKCL_DEVICES="gpu-64m;gpu-16m:semantics=deferred,name=small".
Kernels run on POCL; capacity, out-of-memory and accounting stay mockcl's (read through its C
control API, ctypes on the same .so).
"""
import sys

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.tools as cltools
from pyopencl.elementwise import ElementwiseKernel

from mockcl_snapshot import snapshot_reader  # beside this script

MiB = 1 << 20
snapshot = snapshot_reader(sys.argv[1])


platform = [p for p in cl.get_platforms() if p.name == "mockcl"][0]
gpu, small = platform.get_devices()
assert small.name == "small"
ctx = cl.Context([gpu])
queue = cl.CommandQueue(ctx)

# Arrays: fill, arithmetic, reduction.
n = 100000
x = cla.empty(queue, n, np.float32)
x.fill(3)
assert (x.get() == 3).all()
y = 2 * x
assert (y.get() == 6).all()
z = x + y * 0.5
assert np.allclose(z.get(), 6.0)
a = cla.to_device(queue, np.arange(n, dtype=np.float64))
assert cla.sum(a).get() == n * (n - 1) / 2
assert cla.max(a).get() == n - 1
assert cla.sum(x).get() == 3 * n
print("ok: fill, 2*x, sum, max")

# A never-written buffer reads as zeros.
b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096)
out = np.full(1024, -1, dtype=np.int32)
cl.enqueue_copy(queue, out, b)
assert (out == 0).all()
print("ok: fresh buffer reads as zeros")

# ElementwiseKernel.
lin = ElementwiseKernel(
    ctx, "float a, float *x, float b, float *y, float *z", "z[i] = a*x[i] + b*y[i]", "lin"
)
xs = cla.to_device(queue, np.arange(1000, dtype=np.float32))
ys = cla.to_device(queue, np.ones(1000, dtype=np.float32))
zs = cla.empty_like(xs)
lin(np.float32(2), xs, np.float32(5), ys, zs)
assert np.allclose(zs.get(), 2 * np.arange(1000) + 5)
print("ok: ElementwiseKernel")

# A build error carries POCL's log.
try:
    cl.Program(ctx, "__kernel void k(__global int* p) { p[0] = nope; }").build()
    raise AssertionError("broken source should not build")
except cl.RuntimeError as e:
    assert "nope" in str(e), e
print("ok: build failure with log")

# A MemoryPool: arrays from it compute, a freed block is reused with no new buffer.
pool = cltools.MemoryPool(cltools.ImmediateAllocator(queue))
p1 = cla.zeros(queue, 1 << 18, np.float32, allocator=pool)
p1.fill(1.5)
s1 = cla.sum(p1).get()
assert s1 == 1.5 * (1 << 18), s1
live_before = snapshot()["live"]["mem"]
del p1
p2 = cla.empty(queue, 1 << 18, np.float32, allocator=pool)
assert snapshot()["live"]["mem"] == live_before  # the held block came back
p2.fill(2)
assert cla.sum(p2).get() == 2 * (1 << 18)
print("ok: MemoryPool")

# Out-of-memory at mockcl's capacity: a 16 MiB deferred device takes three 5 MiB arrays; the
# fourth fails at its first use (the fill's kernel launch), as on NVIDIA/POCL.
sctx = cl.Context([small])
sq = cl.CommandQueue(sctx)
arrs = []
for i in range(3):
    arr = cla.empty(sq, 5 * MiB // 4, np.float32)
    arr.fill(i + 1)
    arrs.append(arr)
try:
    extra = cla.empty(sq, 5 * MiB // 4, np.float32)
    extra.fill(9)
    sq.finish()
    raise AssertionError("the fourth 5 MiB array should not fit in 16 MiB")
except (cl.MemoryError, cl.RuntimeError) as e:
    assert "MEM_OBJECT_ALLOCATION_FAILURE" in str(e), e
assert [cla.sum(arr).get() for arr in arrs] == [float(k * (5 * MiB // 4)) for k in (1, 2, 3)]
assert snapshot()["devices"][1]["outstanding"] == 15 * MiB
print("ok: out-of-memory at mockcl's capacity, the other arrays intact")
