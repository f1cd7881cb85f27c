"""Seed 004, PyCUDA's pycuda.tools: every name, called as the seed does, on clpool.pycuda
(python/README.md, "PyCUDA's pools"). POCL and mockcl."""
import gc
import unittest

import numpy as np
import pyopencl as cl

import clpool
import clpool.pycuda as tools
import cltest
import seed_support


class PyCUDASeedTest(unittest.TestCase):
    def setUp(self):
        self.ctx, self.queue = cltest.context_and_queue()
        self.pool = tools.DeviceMemoryPool(clpool.pyopencl.ImmediateAllocator(self.queue))
        self.pinned = tools.PageLockedMemoryPool(tools.PageLockedAllocator(self.queue))

    def tearDown(self):
        self.queue.finish()  # no kernel left compiling at exit (seed_cupy_test.py says why)

    def test_table_matches_tests(self):
        seed_support.check_table_matches(self, "### PyCUDA's pools", type(self))

    def test_example(self):
        exec(seed_support.readme_example("pycuda"), {})

    # --- Automatic initialisation and device choice --------------------------------------------

    def test_autoinit(self):
        import clpool.pycuda.autoinit as autoinit

        self.assertIs(autoinit, tools.autoinit)

    def test_autoinit_device(self):
        import clpool.pycuda.autoinit

        self.assertIsInstance(clpool.pycuda.autoinit.device, cl.Device)

    def test_autoinit_context(self):
        import clpool.pycuda.autoinit

        self.assertIsInstance(clpool.pycuda.autoinit.context, cl.Context)
        self.assertIsInstance(clpool.pycuda.autoinit.queue, cl.CommandQueue)  # OpenCL's addition
        with self.assertRaises(AttributeError):
            clpool.pycuda.autoinit.stream

    def test_make_default_context(self):
        ctx = tools.make_default_context()
        self.assertIsInstance(ctx, cl.Context)
        self.assertIsNot(ctx, tools.make_default_context())  # a new one each time, as PyCUDA's

    def test_get_default_device(self):
        self.assertIsInstance(tools.get_default_device(), cl.Device)

    def test_context_dependent_memoize(self):
        calls = []

        @tools.context_dependent_memoize
        def kernel_for(ctx):
            calls.append(ctx)
            return len(calls)

        self.assertEqual((kernel_for(self.ctx), kernel_for(self.ctx)), (1, 1))

    def test_clear_context_caches(self):
        calls = []

        @tools.context_dependent_memoize
        def kernel_for(ctx):
            calls.append(ctx)
            return len(calls)

        kernel_for(self.ctx)
        tools.clear_context_caches()
        self.assertEqual(kernel_for(self.ctx), 2)

    def test_mark_cuda_test(self):
        # Not provided: PyOpenCL's pytest_generate_tests_for_pyopencl runs tests per device.
        self.assertFalse(hasattr(tools, "mark_cuda_test"))

    def test_DeviceData(self):
        # Not provided: CUDA occupancy data. OpenCL's counterparts are device queries.
        self.assertFalse(hasattr(tools, "DeviceData"))
        self.assertGreater(self.ctx.devices[0].max_work_group_size, 0)

    def test_OccupancyRecord(self):
        self.assertFalse(hasattr(tools, "OccupancyRecord"))

    # --- Device memory pool --------------------------------------------------------------------

    def test_PooledDeviceAllocation(self):
        a = self.pool.allocate(4096)
        self.assertIsInstance(a, tools.PooledDeviceAllocation)
        self.assertIsInstance(a, cl.Buffer)
        del a  # "returned when this object is deleted"
        self.assertEqual(self.pool.held_blocks, 1)

    def test_PooledDeviceAllocation_free(self):
        a = self.pool.allocate(4096)
        a.free()
        self.assertEqual((self.pool.active_blocks, self.pool.held_blocks), (0, 1))
        with self.assertRaisesRegex(
            cl.LogicError, "PooledDeviceAllocation.free failed: INVALID_VALUE - the allocation"
        ):
            a.free()

    def test_PooledDeviceAllocation___len__(self):
        a = self.pool.allocate(1000)
        self.assertEqual(len(a), 1000)
        a.free()
        with self.assertRaises(ValueError):
            len(a)

    def test_PooledDeviceAllocation___int__(self):
        a = self.pool.allocate(1000)
        self.assertEqual(int(a), a.int_ptr)  # the cl_mem handle: OpenCL's "device address"

    def test_DeviceMemoryPool(self):
        import clpool.pycuda.autoinit

        pool = tools.DeviceMemoryPool()  # the default queue, as PyCUDA's uses the context
        a = pool.allocate(100)
        self.assertEqual(a.context, clpool.pycuda.autoinit.context)

    def test_DeviceMemoryPool_held_blocks(self):
        self.pool.allocate(100).free()
        self.assertEqual(self.pool.held_blocks, 1)

    def test_DeviceMemoryPool_active_blocks(self):
        a = self.pool.allocate(100)
        self.assertEqual(self.pool.active_blocks, 1)
        a.free()

    def test_DeviceMemoryPool_allocate(self):
        a = self.pool.allocate(4096)
        cl.enqueue_copy(self.queue, a, np.ones(1024, np.float32)).wait()
        self.assertEqual(len(a), 4096)

    def test_DeviceMemoryPool_free_held(self):
        self.pool.allocate(100).free()
        self.pool.free_held()
        self.assertEqual(self.pool.held_blocks, 0)

    def test_DeviceMemoryPool_stop_holding(self):
        a = self.pool.allocate(100)
        self.pool.stop_holding()
        a.free()
        self.assertEqual((self.pool.held_blocks, self.pool.managed_bytes), (0, 0))

    # --- Page-locked memory pool ---------------------------------------------------------------

    def test_PooledHostAllocation(self):
        x = self.pinned.allocate((16,), np.float32)
        self.assertIsInstance(x.base, tools.PooledHostAllocation)
        del x
        gc.collect()
        self.assertEqual(self.pinned.held_blocks, 1)

    def test_PooledHostAllocation_free(self):
        x = self.pinned.allocate((16,), np.float32)
        x.base.free()
        self.assertEqual((self.pinned.active_blocks, self.pinned.held_blocks), (0, 1))

    def test_PooledHostAllocation___len__(self):
        x = self.pinned.allocate((16,), np.float32)
        self.assertEqual(len(x.base), 64)

    def test_PageLockedAllocator(self):
        self.assertEqual(tools.PageLockedAllocator().flags, cl.mem_flags.READ_WRITE)
        pycuda_style = tools.PageLockedAllocator(tools.host_alloc_flags.DEVICEMAP)
        self.assertEqual(pycuda_style.flags, cl.mem_flags.READ_WRITE)
        opencl_style = tools.PageLockedAllocator(self.queue, cl.mem_flags.READ_ONLY)
        self.assertEqual(opencl_style.flags, cl.mem_flags.READ_ONLY)
        on_context = tools.PageLockedAllocator(self.ctx)
        self.assertEqual(on_context.context, self.ctx)
        with self.assertRaisesRegex(ValueError, "write-combined"):
            tools.PageLockedAllocator(tools.host_alloc_flags.WRITECOMBINED)
        with self.assertRaises(ValueError):
            tools.PageLockedAllocator(self.queue, cl.mem_flags.USE_HOST_PTR)
        with self.assertRaises(TypeError):
            tools.PageLockedAllocator("queue")

    def test_PageLockedMemoryPool(self):
        default = tools.PageLockedMemoryPool()  # PageLockedAllocator() on the default queue
        self.assertEqual(default.allocate((4,), np.float64).nbytes, 32)
        clpools_own = clpool.PageLockedMemoryPool(self.queue)  # clpool's spelling still works
        self.assertEqual(clpools_own.allocate(4, np.int8).size, 4)
        with self.assertRaises(TypeError):
            tools.PageLockedMemoryPool(self.ctx)

    def test_PageLockedMemoryPool_held_blocks(self):
        self.pinned.allocate((4,), np.float32).base.free()
        self.assertEqual(self.pinned.held_blocks, 1)

    def test_PageLockedMemoryPool_active_blocks(self):
        x = self.pinned.allocate((4,), np.float32)
        self.assertEqual(self.pinned.active_blocks, 1)
        del x

    def test_PageLockedMemoryPool_allocate(self):
        x = self.pinned.allocate((3, 5), np.float64, order="F")
        self.assertEqual(x.strides, (8, 24))
        x[:] = 1.0
        dev = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, x.nbytes)
        cl.enqueue_copy(self.queue, dev, x).wait()  # the host side of a transfer

    def test_PageLockedMemoryPool_free_held(self):
        self.pinned.allocate((4,), np.float32).base.free()
        self.pinned.free_held()
        self.assertEqual(self.pinned.held_blocks, 0)

    def test_PageLockedMemoryPool_stop_holding(self):
        self.pinned.stop_holding()
        self.pinned.allocate((4,), np.float32).base.free()
        self.assertEqual(self.pinned.managed_bytes, 0)


if __name__ == "__main__":
    unittest.main()
