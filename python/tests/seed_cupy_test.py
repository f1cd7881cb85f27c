"""Seed 003, CuPy's cupy.cuda.MemoryPool: every name, called as the seed does, on clpool.cupy
(python/README.md, "CuPy's MemoryPool"), with per-queue arenas and CuPy's limits. POCL and
mockcl."""
import gc
import threading
import unittest

import numpy as np
import pyopencl as cl
import pyopencl.array as cl_array

import clpool
import clpool.cupy as cupy
import clpool.pyopencl as tools
import cltest
import seed_support

MiB = 1 << 20
ROUNDED_4096 = 4351


class CuPySeedTest(unittest.TestCase):
    def setUp(self):
        self.ctx, self.queue = cltest.context_and_queue()
        self.other = cl.CommandQueue(self.ctx)
        self.scope = cupy.using_queue(self.queue)
        self.scope.__enter__()
        self.pool = cupy.MemoryPool()

    def tearDown(self):
        cupy.set_allocator(None)
        self.scope.__exit__(None, None, None)
        # POCL compiles kernels on its own threads; a process that exits while one compiles
        # crashes inside LLVM (seen here: SIGSEGV in LLVM's code generator at exit).
        self.queue.finish()
        self.other.finish()

    def test_table_matches_tests(self):
        seed_support.check_table_matches(self, "### CuPy's MemoryPool", type(self))

    def test_example(self):
        exec(seed_support.readme_example("cupy"), {"queue": self.queue})

    def test_MemoryPool(self):
        self.assertIsInstance(cupy.MemoryPool(cupy.malloc).malloc(100), tools.PooledBuffer)
        with self.assertRaises(TypeError):
            cupy.MemoryPool(lambda size: None)  # OpenCL buffers or SVM only

    def test_MemoryPool_malloc(self):
        ptr = self.pool.malloc(4096)
        self.assertIsInstance(ptr, cl.Buffer)  # OpenCL's handle, not a raw address
        self.assertGreaterEqual(ptr.size, 4096)
        self.assertIsNone(self.pool.malloc(0))

    def test_MemoryPool_free_all_blocks(self):
        # Per-queue arenas: a block goes back to its queue's arena; free_all_blocks(stream)
        # frees that arena only, free_all_blocks() every arena.
        a = self.pool.malloc(4096)
        with cupy.using_queue(self.other):
            b = self.pool.malloc(4096)
            c = self.pool.malloc(4096)  # b is live: a new block
        mem_a = a.int_ptr
        del a, b, c
        self.assertEqual(self.pool.n_free_blocks(), 3)
        again = self.pool.malloc(4096)  # reuses the block freed on this queue
        self.assertEqual(again.int_ptr, mem_a)
        del again
        self.pool.free_all_blocks(self.other)
        self.assertEqual(self.pool.n_free_blocks(), 1)
        self.pool.free_all_blocks()
        self.assertEqual(self.pool.n_free_blocks(), 0)
        with self.assertRaises(TypeError):
            self.pool.free_all_blocks(stream="queue 1")
        # A malloc that has taken its arena when another thread's free_all_blocks() finds the
        # arena empty: the arena stays, and its block is counted (it landed in a dropped arena,
        # used_bytes() 0, under threads before). The two halves of malloc, in that order:
        core = self.pool._arena(self.queue)
        self.pool.free_all_blocks()
        block = core.allocate(4096)
        self.pool._done(self.queue)
        self.assertGreaterEqual(self.pool.used_bytes(), 4096)
        del block
        self.pool.free_all_blocks()
        self.assertEqual(self.pool.total_bytes(), 0)

    def test_MemoryPool_free_all_free(self):
        a = self.pool.malloc(4096)
        del a
        self.pool.free_all_free()
        self.assertEqual(self.pool.free_bytes(), 0)

    def test_MemoryPool_free_bytes(self):
        a = self.pool.malloc(4096)
        del a
        self.assertEqual(self.pool.free_bytes(), ROUNDED_4096)

    def test_MemoryPool_n_free_blocks(self):
        a, b = self.pool.malloc(4096), self.pool.malloc(5000)
        del a, b
        self.assertEqual(self.pool.n_free_blocks(), 2)

    def test_MemoryPool_total_bytes(self):
        a, b = self.pool.malloc(4096), self.pool.malloc(4096)
        del a
        self.assertEqual(self.pool.total_bytes(), 2 * ROUNDED_4096)
        self.assertEqual(self.pool.total_bytes(), self.pool.used_bytes() + self.pool.free_bytes())
        del b

    def test_MemoryPool_used_bytes(self):
        a = self.pool.malloc(4096)
        self.assertEqual(self.pool.used_bytes(), ROUNDED_4096)
        del a
        self.assertEqual(self.pool.used_bytes(), 0)

    def test_MemoryPool_set_limit(self):
        self.pool.set_limit(size=2 * ROUNDED_4096)
        a, b = self.pool.malloc(4096), self.pool.malloc(4096)
        with self.assertRaises(clpool.OutOfMemoryError) as caught:
            self.pool.malloc(4096)
        # Named as the device's limit, not as the device refusing.
        self.assertIn(
            f"because the shared limit of {2 * ROUNDED_4096} bytes was reached",
            str(caught.exception),
        )
        self.assertEqual(caught.exception.cause, "limit")
        self.assertEqual(caught.exception.limit_bytes, 2 * ROUNDED_4096)
        del b
        with cupy.using_queue(self.other):  # the limit is the device's, over all arenas:
            c = self.pool.malloc(4096)  # the other arena frees this one's held block
        self.assertEqual(self.pool.total_bytes(), 2 * ROUNDED_4096)
        self.pool.set_limit(fraction=0.5)
        self.assertEqual(self.pool.get_limit(), self.queue.device.global_mem_size // 2)
        self.pool.set_limit(0)  # CuPy: 0 is no limit
        self.assertEqual(self.pool.get_limit(), 0)
        for bad in ({"fraction": 1.5}, {"size": -1}, {"size": 1, "fraction": 0.5}):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                self.pool.set_limit(**bad)
        with self.assertRaises(TypeError):
            self.pool.set_limit(fraction="half")
        del a, c

    def test_MemoryPool_get_limit(self):
        self.assertEqual(self.pool.get_limit(), 0)
        self.pool.set_limit(MiB)
        self.assertEqual(self.pool.get_limit(), MiB)

    def test_set_allocator(self):
        cupy.set_allocator(self.pool.malloc)
        self.assertEqual(cupy.get_allocator(), self.pool.malloc)
        a = cl_array.zeros(self.queue, 1000, np.float32)
        self.assertIsInstance(a.base_data, tools.PooledBuffer)
        self.assertEqual(self.pool.used_bytes(), 4095)
        b = cl_array.arange(self.other, 10, dtype=np.int32)  # the array's queue's arena
        del a, b
        gc.collect()
        self.assertEqual(self.pool.n_free_blocks(), 2)
        cupy.set_allocator(None)
        c = cl_array.zeros(self.queue, 1000, np.float32)
        self.assertNotIsInstance(c.base_data, tools.PooledBuffer)

    def test_malloc_managed(self):
        if not self.ctx.devices[0].svm_capabilities:
            self.skipTest("the device has no SVM")
        pool = cupy.MemoryPool(cupy.malloc_managed)
        ptr = pool.malloc(4096)
        self.assertIsInstance(ptr, cl.SVMPointer)
        self.assertNotEqual(int(ptr), 0)  # shared virtual memory has an address
        cl.enqueue_copy(self.queue, ptr, np.arange(4096, dtype=np.uint8)).wait()
        del ptr
        gc.collect()
        self.assertEqual(pool.n_free_blocks(), 1)
        self.assertIsInstance(cupy.malloc_managed(64), cl.SVMAllocation)  # unpooled

    def test_malloc(self):
        buf = cupy.malloc(4096)  # the base allocator itself: unpooled
        self.assertIsInstance(buf, cl.Buffer)
        self.assertNotIsInstance(buf, tools.PooledBuffer)

    def test_Stream(self):
        # CuPy's stream is an OpenCL command queue; the current one is per thread.
        self.assertIs(cupy.get_current_queue(), self.queue)
        seen = []
        t = threading.Thread(target=lambda: seen.append(cupy.get_current_queue()))
        t.start()
        t.join()
        self.assertIsNot(seen[0], self.queue)  # the default queue, in another thread
        ooo = cl.CommandQueue(
            self.ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
        )
        with cupy.using_queue(ooo), self.assertRaisesRegex(ValueError, "in-order"):
            self.pool.malloc(100)
        with self.assertRaises(TypeError):
            cupy.using_queue(self.ctx)


if __name__ == "__main__":
    unittest.main()
