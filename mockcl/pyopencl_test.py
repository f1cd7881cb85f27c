"""PyOpenCL (Debian python3-pyopencl) running unchanged on mockcl through the ICD loader.

Run by pyopencl_test.sh with OCL_ICD_VENDORS pointing at libmockcl.so and
MOCKCL_DEVICES="gpu-64m;gpu-64m:semantics=deferred,name=deferred". The mock's accounting is
read through its C control API (ctypes on the same .so, hence the same instance).
"""
import sys

import numpy as np
import pyopencl as cl
import pyopencl.tools as cltools

from mockcl_snapshot import snapshot_reader  # beside this script

MiB = 1 << 20
snapshot = snapshot_reader(sys.argv[1])


def outstanding(dev):
    return snapshot()["devices"][dev]["outstanding"]


def is_oom(e):
    return "MEM_OBJECT_ALLOCATION_FAILURE" in str(e)


platform = [p for p in cl.get_platforms() if p.name == "mockcl"][0]
immediate, deferred = platform.get_devices()
assert immediate.global_mem_size == 64 * MiB
assert deferred.name == "deferred"

# Context, queue, Buffer round trip.
ctx = cl.Context([immediate])
queue = cl.CommandQueue(ctx)
a = np.arange(1024, dtype=np.int32)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
out = np.empty_like(a)
cl.enqueue_copy(queue, out, buf)
assert (out == a).all()
buf.release()
assert outstanding(0) == 0
print("ok: context, queue, Buffer")

# A clean OOM at the right point: 64 MiB holds four 16 MiB buffers, the fifth fails.
bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16 * MiB) for _ in range(4)]
try:
    cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16 * MiB)
    raise AssertionError("fifth 16 MiB buffer should not fit in 64 MiB")
except cl.MemoryError as e:
    assert is_oom(e), e
for b in bufs:
    b.release()
print("ok: Buffer OOM at the fifth 16 MiB buffer")

# MemoryPool over ImmediateAllocator: PyOpenCL rounds 8 MiB up to a bin of ~8.9 MiB, so seven
# fit in 64 MiB and the eighth is the clean OOM.
pool = cltools.MemoryPool(cltools.ImmediateAllocator(queue))
held = []
try:
    for _ in range(9):
        held.append(pool.allocate(8 * MiB))
    raise AssertionError("9 blocks of 8 MiB should not fit")
except cl.MemoryError as e:
    assert is_oom(e), e
occupied = outstanding(0)
per_block = occupied // len(held)
assert per_block > 8 * MiB and occupied == per_block * len(held)
assert occupied <= 64 * MiB < occupied + per_block, (occupied, per_block)
assert len(held) == 7, len(held)
del held[:]
assert pool.held_blocks == 7
x = pool.allocate(8 * MiB)  # A pool hit: no new memory.
assert outstanding(0) == occupied
del x
pool.free_held()
assert outstanding(0) == 0, outstanding(0)
print("ok: MemoryPool(ImmediateAllocator) OOM at the eighth 8 MiB block, free_held gives all back")

# MemoryPool over DeferredAllocator on the deferred device: over-commit succeeds, the error
# comes at first use.
dctx = cl.Context([deferred])
dqueue = cl.CommandQueue(dctx)
dpool = cltools.MemoryPool(cltools.DeferredAllocator(dctx))
blocks = [dpool.allocate(16 * MiB) for _ in range(6)]  # 96 MiB "allocated" on 64 MiB.
assert outstanding(1) == 0
used = 0
try:
    for blk in blocks:
        cl.enqueue_fill_buffer(dqueue, blk, np.uint8(1), 0, 16 * MiB)
        used += 1
    raise AssertionError("deferred over-commit should fail at first use")
except cl.MemoryError as e:
    assert is_oom(e), e
# Bins of ~17.8 MiB: three fit, the fourth first use is the OOM.
per_block = outstanding(1) // used
assert used == 3 and outstanding(1) <= 64 * MiB < outstanding(1) + per_block, (used, outstanding(1))
del blocks
dpool.free_held()
dqueue.finish()
assert outstanding(1) == 0
print("ok: MemoryPool(DeferredAllocator) over-commits, OOM at the fourth first use")

# MemoryPool over ImmediateAllocator on the deferred device: the forced migrate makes the OOM
# immediate again.
live_before = snapshot()["live"]["mem"]
ipool = cltools.MemoryPool(cltools.ImmediateAllocator(dqueue))
held = []
try:
    for _ in range(5):
        held.append(ipool.allocate(16 * MiB))
    raise AssertionError("fifth block should fail")
except cl.MemoryError as e:
    assert is_oom(e), e
assert len(held) == 3, len(held)
# PyOpenCL's ImmediateAllocator leaks the cl_mem whose migrate failed: mockcl counts it.
assert snapshot()["live"]["mem"] == live_before + 4, (live_before, snapshot()["live"])
del held[:]
ipool.free_held()
print("ok: ImmediateAllocator on a deferred device fails at allocation")

# SVMAllocator and SVMPool.
svm_alloc = cltools.SVMAllocator(ctx, alignment=0, queue=queue)
blocks = [svm_alloc(16 * MiB) for _ in range(4)]
assert all(b.svm_ptr != 0 for b in blocks)
assert outstanding(0) == 64 * MiB
assert snapshot()["live"]["svm"] == 4
# PyOpenCL does not check clSVMAlloc for NULL: the fifth "succeeds" with a null pointer.
# mockcl makes this defect visible (a real driver would do the same).
fifth = svm_alloc(16 * MiB)
assert fifth.svm_ptr == 0
del fifth
for b in blocks:
    b.release()
queue.finish()
assert outstanding(0) == 0, outstanding(0)
assert snapshot()["live"]["svm"] == 0
kinds = [c["kind"] for c in snapshot()["commands"]]
assert kinds.count("svm_free") >= 4, kinds
svm_pool = cltools.SVMPool(svm_alloc)
p1 = svm_pool(4 * MiB)
p2 = svm_pool(4 * MiB)
assert p1.svm_ptr != 0 and p2.svm_ptr != 0
occupied = outstanding(0)
assert occupied >= 8 * MiB
p1.release()
p3 = svm_pool(4 * MiB)  # Reuses the held block.
assert outstanding(0) == occupied
p2.release()
p3.release()
svm_pool.free_held()
queue.finish()
assert outstanding(0) == 0, outstanding(0)
print("ok: SVMAllocator, SVMPool")

# python/README.md's one-liner: the context's Python object (and PyOpenCL's reference) goes at
# once; the queue holds the context, so the allocator's first allocation works (object graph).
import gc  # noqa: E402

q1 = cl.CommandQueue(cl.Context([immediate]))
gc.collect()
alloc = cltools.ImmediateAllocator(q1)
blk = alloc(4096)
cl.enqueue_fill_buffer(q1, blk, np.int32(7), 0, 4096)
q1.finish()
blk.release()
del alloc, blk
q1.finish()
print("ok: CommandQueue(Context(...)) allocates after its context's release")

# PyOpenCL's random numbers: the Philox kernel's parameter list has `#if 2 > 2` around two of
# them; the mock's signature reader counted 11 for the 9 a compiler sees, and PyOpenCL refused to
# set the arguments ("length of argument list (9) and CL-generated number of arguments (11)").
# Built, not taken from PyOpenCL's binary cache (pyopencl_test.sh sets PYOPENCL_NO_CACHE).
import pyopencl.array as cl_array  # noqa: E402
import pyopencl.clrandom as clrandom  # noqa: E402

gen = clrandom.PhiloxGenerator(ctx)
philox, _, _ = gen.get_gen_kernel(np.dtype(np.float32), "uniform")
assert philox.num_args == 9, philox.num_args
numbers = cl_array.empty(queue, 1000, np.float32)
gen.fill_uniform(numbers)
gen.fill_normal(numbers)
queue.finish()
del numbers
print("ok: PhiloxGenerator's kernels take the arguments their #if leaves")

# A child forked after the parent used the mock (multiprocessing's default start method here)
# makes its own context, buffer and commands and gets its data back; the parent's queue still
# works after the fork. With MOCKCL_BACKING=none only: with POCL behind, a forked child hangs at
# its first command, as it does on POCL alone (mockcl/README.md, "Backing device").
import os  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402


def forked_child():
    try:
        c = cl.Context([immediate])
        q = cl.CommandQueue(c)
        b = cl.Buffer(c, cl.mem_flags.READ_WRITE, 4096)
        cl.enqueue_fill_buffer(q, b, np.int32(3), 0, 4096)
        got = np.empty(1024, np.int32)
        cl.enqueue_copy(q, got, b)
        q.finish()
        os._exit(0 if (got == 3).all() else 3)
    except BaseException:
        traceback.print_exc()
        os._exit(4)


pid = os.fork()
if pid == 0:
    forked_child()
deadline = time.monotonic() + 15
while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
    time.sleep(0.05)
if done[0] == 0:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    raise AssertionError("the forked child did not end within 15 s")
assert os.waitstatus_to_exitcode(done[1]) == 0, os.waitstatus_to_exitcode(done[1])
b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096)
cl.enqueue_fill_buffer(queue, b, np.int32(5), 0, 4096)
got = np.empty(1024, np.int32)
cl.enqueue_copy(queue, got, b)
assert (got == 5).all()
b.release()
print("ok: a forked child uses the mock, and the parent goes on")
print("PASS")
