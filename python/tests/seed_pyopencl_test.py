"""Seeds 000 and 001, PyOpenCL's pool documentation: every name, called as the seed does, on
clpool.pyopencl (python/README.md, "PyOpenCL's pools"). POCL and mockcl."""
import gc
import threading
import unittest

import numpy as np
import pyopencl as cl
import pyopencl.array as cl_array
import pyopencl.characterize
import pyopencl.tools

import clpool.pyopencl as tools
import cltest
import seed_support

ROUNDED_4096 = 4351  # PyOpenCL's bins, leading_bits_in_bin_id=4


class PyOpenCLSeedTest(unittest.TestCase):
    def setUp(self):
        self.ctx, self.queue = cltest.context_and_queue()
        self.pool = tools.MemoryPool(tools.ImmediateAllocator(self.queue))

    def tearDown(self):
        self.queue.finish()  # no kernel left compiling at exit (seed_cupy_test.py says why)

    def svm_pool(self):
        if not self.ctx.devices[0].svm_capabilities:
            self.skipTest("the device has no SVM")
        return tools.SVMPool(tools.SVMAllocator(self.ctx, queue=self.queue))

    def test_table_matches_tests(self):
        seed_support.check_table_matches(self, "### PyOpenCL's pools", type(self))

    def test_example(self):
        exec(seed_support.readme_example("pyopencl"), {"queue": self.queue})

    # --- Buffer-based allocators and memory pools ----------------------------------------------

    def test_PooledBuffer(self):
        buf = self.pool.allocate(4096)
        self.assertIsInstance(buf, tools.PooledBuffer)
        self.assertIsInstance(buf, cl.MemoryObject)  # "is a pyopencl.MemoryObject"
        self.assertIsInstance(buf, cl.Buffer)  # "supports the interface of Buffer"
        cl.enqueue_fill_buffer(self.queue, buf, np.uint8(7), 0, 4096).wait()
        del buf  # "once deleted, back to the pool"
        self.assertEqual((self.pool.active_blocks, self.pool.held_blocks), (0, 1))

    def test_AllocatorBase(self):
        for a in (
            tools.ImmediateAllocator(self.queue),
            tools.DeferredAllocator(self.ctx),
            self.pool,
        ):
            self.assertIsInstance(a, tools.AllocatorBase)

    def test_AllocatorBase___call__(self):
        for a in (
            tools.ImmediateAllocator(self.queue),
            tools.DeferredAllocator(self.ctx),
            self.pool,
        ):
            buf = a(1000)
            self.assertIsInstance(buf, cl.Buffer)
            self.assertGreaterEqual(buf.size, 1000)

    def test_DeferredAllocator(self):
        a = tools.DeferredAllocator(self.ctx)
        self.assertEqual(a.mem_flags, cl.mem_flags.READ_WRITE)
        b = tools.DeferredAllocator(self.ctx, mem_flags=cl.mem_flags.READ_ONLY)
        self.assertEqual(b.mem_flags, cl.mem_flags.READ_ONLY)
        with self.assertRaises(ValueError):  # a pool cannot honour host pointers
            tools.DeferredAllocator(self.ctx, cl.mem_flags.USE_HOST_PTR)

    def test_DeferredAllocator___call__(self):
        a = tools.DeferredAllocator(self.ctx)
        self.assertEqual(a(4096).size, 4096)
        self.assertIsNone(a(0))  # "succeeds for zero-sized allocations: None"

    def test_ImmediateAllocator(self):
        a = tools.ImmediateAllocator(self.queue)
        self.assertEqual(a.mem_flags, cl.mem_flags.READ_WRITE)
        b = tools.ImmediateAllocator(self.queue, cl.mem_flags.WRITE_ONLY)
        self.assertEqual(b.mem_flags, cl.mem_flags.WRITE_ONLY)

    def test_ImmediateAllocator___call__(self):
        a = tools.ImmediateAllocator(self.queue)
        self.assertEqual(a(4096).size, 4096)
        self.assertIsNone(a(0))

    def test_MemoryPool(self):
        pool = tools.MemoryPool(tools.ImmediateAllocator(self.queue), leading_bits_in_bin_id=2)
        self.assertEqual(pool.leading_bits_in_bin_id, 2)
        self.assertEqual(pool.allocate(4096).size, 5119)  # rounded within 2 leading bits
        self.assertEqual(self.pool.leading_bits_in_bin_id, 4)  # the documented default

    def test_MemoryPool_allocate(self):
        buf = self.pool.allocate(4096)
        self.assertIsInstance(buf, tools.PooledBuffer)
        self.assertEqual(buf.size, ROUNDED_4096)

    def test_MemoryPool___call__(self):
        self.assertIsInstance(self.pool(4096), tools.PooledBuffer)

    def test_MemoryPool_held_blocks(self):
        a, b = self.pool(100), self.pool(5000)
        del a, b
        self.assertEqual(self.pool.held_blocks, 2)

    def test_MemoryPool_active_blocks(self):
        keep = [self.pool(100), self.pool(5000)]
        self.assertEqual(self.pool.active_blocks, 2)
        del keep

    def test_MemoryPool_managed_bytes(self):
        a, b = self.pool(4096), self.pool(4096)
        del a
        self.assertEqual(self.pool.managed_bytes, 2 * ROUNDED_4096)  # active + held
        del b

    def test_MemoryPool_active_bytes(self):
        a = self.pool(4096)
        self.assertEqual(self.pool.active_bytes, 4096)  # may be less than managed_bytes
        self.assertEqual(self.pool.managed_bytes, ROUNDED_4096)
        del a

    def test_MemoryPool_free_held(self):
        a = self.pool(4096)
        del a
        self.pool.free_held()
        self.assertEqual((self.pool.held_blocks, self.pool.managed_bytes), (0, 0))

    def test_MemoryPool_stop_holding(self):
        a, b = self.pool(4096), self.pool(4096)
        del a
        self.pool.stop_holding()  # "implicitly calls free_held()"
        self.assertEqual(self.pool.held_blocks, 0)
        del b  # freed at once from now on
        self.assertEqual((self.pool.held_blocks, self.pool.managed_bytes), (0, 0))

    # --- SVM-based allocators and memory pools -------------------------------------------------

    def test_PooledSVM(self):
        pool = self.svm_pool()
        a = pool(4096)
        self.assertIsInstance(a, tools.PooledSVM)
        self.assertIsInstance(a, cl.SVMPointer)
        self.assertEqual(a, a)  # structural equality and hashing
        self.assertEqual(len({a, a}), 1)
        b = pool(4096)
        self.assertNotEqual(a, b)
        del a
        gc.collect()
        self.assertEqual(pool.held_blocks, 1)

    def test_PooledSVM_release(self):
        pool = self.svm_pool()
        a = pool(4096)
        a.release()
        self.assertEqual((pool.active_blocks, pool.held_blocks), (0, 1))

    def test_PooledSVM_enqueue_release(self):
        pool = self.svm_pool()
        a = pool(4096)
        a.enqueue_release()  # PyOpenCL's: a synonym of release()
        self.assertEqual(pool.held_blocks, 1)
        b = pool(4096)
        b.enqueue_release(self.queue)  # clpool's: after `queue`'s work
        self.assertEqual(pool.held_blocks, 1)

    def test_PooledSVM_bind_to_queue(self):
        pool = self.svm_pool()
        a = pool(4096)
        a.bind_to_queue(self.queue)
        cl.enqueue_copy(self.queue, a, np.ones(4096, np.uint8))
        self.queue.finish()
        self.assertEqual(bytes(memoryview(a._block))[:4], b"\x01\x01\x01\x01")
        out_of_order = cl.CommandQueue(
            self.ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
        )
        with self.assertRaisesRegex(ValueError, "in-order"):
            a.bind_to_queue(out_of_order)  # a pooled block is bound to in-order queues only
        a.release()

    def test_PooledSVM_unbind_from_queue(self):
        pool = self.svm_pool()
        a = pool.allocate(4096, self.queue)
        gate = cl.UserEvent(self.ctx)
        cl.enqueue_marker(self.queue, wait_for=[gate])  # the queue's work waits for the gate
        done = threading.Event()
        waiter = threading.Thread(target=lambda: (a.unbind_from_queue(), done.set()))
        waiter.start()
        self.assertFalse(done.wait(0.3), "unbind_from_queue returned before the queue's work")
        gate.set_status(cl.command_execution_status.COMPLETE)
        waiter.join(10)
        self.assertTrue(done.is_set(), "unbind_from_queue did not return once the work was done")
        a.release()

    def test_SVMAllocator(self):
        if not self.ctx.devices[0].svm_capabilities:
            self.skipTest("the device has no SVM")
        a = tools.SVMAllocator(
            self.ctx, alignment=0, flags=cl.svm_mem_flags.READ_WRITE, queue=self.queue
        )
        self.assertEqual(a.flags, 1)  # READ_WRITE, the documented default
        self.assertEqual(tools.SVMAllocator(self.ctx).flags, 1)
        with self.assertRaises(ValueError):
            tools.SVMAllocator(self.ctx, alignment=3)

    def test_SVMAllocator___call__(self):
        if not self.ctx.devices[0].svm_capabilities:
            self.skipTest("the device has no SVM")
        alloc = tools.SVMAllocator(self.ctx, queue=self.queue)(4096)
        self.assertIsInstance(alloc, cl.SVMAllocation)
        alloc.release()

    def test_SVMPool(self):
        pool = self.svm_pool()
        other = tools.SVMPool(
            tools.SVMAllocator(self.ctx, queue=self.queue), leading_bits_in_bin_id=2
        )
        self.assertEqual((pool.leading_bits_in_bin_id, other.leading_bits_in_bin_id), (4, 2))

    def test_SVMPool___call__(self):
        self.assertIsInstance(self.svm_pool()(4096), tools.PooledSVM)

    def test_SVMPool_held_blocks(self):
        pool = self.svm_pool()
        pool(4096).release()
        self.assertEqual(pool.held_blocks, 1)

    def test_SVMPool_active_blocks(self):
        pool = self.svm_pool()
        a = pool(4096)
        self.assertEqual(pool.active_blocks, 1)
        a.release()

    def test_SVMPool_managed_bytes(self):
        pool = self.svm_pool()
        pool(4096).release()
        self.assertEqual(pool.managed_bytes, ROUNDED_4096)

    def test_SVMPool_active_bytes(self):
        pool = self.svm_pool()
        a = pool(4096)
        self.assertEqual(pool.active_bytes, 4096)
        a.release()

    def test_SVMPool_free_held(self):
        pool = self.svm_pool()
        pool(4096).release()
        pool.free_held()
        self.assertEqual(pool.managed_bytes, 0)

    def test_SVMPool_stop_holding(self):
        pool = self.svm_pool()
        pool.stop_holding()
        pool(4096).release()
        self.assertEqual(pool.managed_bytes, 0)

    # --- The rest of the tools page: PyOpenCL's own, not a pool's ------------------------------

    def test_pytest_generate_tests_for_pyopencl(self):
        # PyOpenCL's; clpool's pools run under it (python/pyopencl_suite).
        self.assertFalse(hasattr(tools, "pytest_generate_tests_for_pyopencl"))
        self.assertTrue(callable(pyopencl.tools.pytest_generate_tests_for_pyopencl))

    def test_VectorArg(self):
        self.assertFalse(hasattr(tools, "VectorArg"))
        self.assertEqual(pyopencl.tools.VectorArg(np.float32, "x").name, "x")

    def test_ScalarArg(self):
        self.assertFalse(hasattr(tools, "ScalarArg"))
        self.assertEqual(pyopencl.tools.ScalarArg(np.int32, "n").name, "n")

    def test_characterize(self):
        dev = self.ctx.devices[0]
        self.assertIsInstance(pyopencl.characterize.get_fast_inaccurate_build_options(dev), list)
        self.assertFalse(hasattr(tools, "characterize"))

    def test_array_allocator(self):
        # The seed's own example: arrays from a pool.
        a_dev = cl_array.arange(self.queue, 2000, dtype=np.float32, allocator=self.pool)
        self.assertIsInstance(a_dev.base_data, tools.PooledBuffer)
        if cltest.MODE == "pocl":  # kernels are no-ops on mockcl without a backing device
            np.testing.assert_array_equal(a_dev.get(), np.arange(2000, dtype=np.float32))


if __name__ == "__main__":
    unittest.main()
