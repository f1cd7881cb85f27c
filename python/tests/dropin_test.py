"""The one-line change: a small PyOpenCL program (pyopencl.array, a kernel, enqueue_copy) gives the
same results with clpool.pyopencl.MemoryPool as with pyopencl.tools.MemoryPool. POCL only: kernels
are no-ops on mockcl."""
import gc
import unittest

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.tools

import clpool
import clpool.pyopencl
import cltest

SRC = """
__kernel void scale(__global const float *a, __global float *b, float f) {
  int i = get_global_id(0);
  b[i] = a[i] * f;
}
"""


def program(queue, pool, n=4096):
    """A typical PyOpenCL program; `pool` is the only thing that differs."""
    ctx = queue.context
    a = cla.to_device(queue, np.arange(n, dtype=np.float32), allocator=pool)
    b = cla.zeros(queue, n, np.float32, allocator=pool)
    prg = cl.Program(ctx, SRC).build()
    prg.scale(queue, (n,), None, a.data, b.data, np.float32(3))
    c = a + b * 2  # elementwise kernels; results use the same allocator
    scratch = pool(n * 4)  # a raw pooled buffer in enqueue_copy
    cl.enqueue_copy(queue, scratch, c.data)
    out = np.empty(n, np.float32)
    cl.enqueue_copy(queue, out, scratch).wait()
    return out, float(cla.sum(c).get())


class DropInTest(unittest.TestCase):
    def test_same_results_as_pyopencl_pool(self):
        ctx, queue = cltest.context_and_queue()
        theirs = pyopencl.tools.MemoryPool(pyopencl.tools.ImmediateAllocator(queue))
        ours = clpool.pyopencl.MemoryPool(clpool.pyopencl.ImmediateAllocator(queue))
        want, want_sum = program(queue, theirs)
        got, got_sum = program(queue, ours)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, np.arange(4096, dtype=np.float32) * 7)
        self.assertEqual(got_sum, want_sum)

    def test_blocks_are_reused_across_runs(self):
        ctx, queue = cltest.context_and_queue()
        pool = clpool.pyopencl.MemoryPool(clpool.pyopencl.ImmediateAllocator(queue))
        program(queue, pool)
        gc.collect()
        self.assertEqual(pool.active_blocks, 0)
        misses = pool.statistics()["misses"]
        for _ in range(3):
            program(queue, pool)
            gc.collect()
        stats = pool.statistics()
        self.assertEqual(stats["misses"], misses, stats)
        self.assertGreater(stats["hits"], 0)
        self.assertEqual(pool.managed_bytes, pool.held_bytes)

    def test_deferred_allocator_and_buffer_as_kernel_argument(self):
        ctx, queue = cltest.context_and_queue()
        pool = clpool.pyopencl.MemoryPool(clpool.pyopencl.DeferredAllocator(ctx))
        buf = pool.allocate(1024 * 4)
        self.assertIsInstance(buf, cl.Buffer)
        self.assertGreaterEqual(buf.size, 4096)
        host = np.arange(1024, dtype=np.float32)
        cl.enqueue_copy(queue, buf, host)
        out_buf = pool(1024 * 4)
        cl.Program(ctx, SRC).build().scale(queue, (1024,), None, buf, out_buf, np.float32(2))
        out = np.empty_like(host)
        cl.enqueue_copy(queue, out, out_buf).wait()
        np.testing.assert_array_equal(out, host * 2)
        clpool.pyopencl.release(buf)
        self.assertEqual(pool.active_blocks, 1)
        self.assertEqual(pool.held_blocks, 1)


if __name__ == "__main__":
    unittest.main()
