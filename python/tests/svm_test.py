"""clpool.pyopencl.SVMPool / SVMAllocator / PooledSVM: PyOpenCL's SVM pool API. Kernels on POCL
only (no-ops on mockcl)."""
import gc
import unittest

import numpy as np
import pyopencl as cl

import clpool
import clpool.pyopencl as cp
import cltest

SRC = (
    "__kernel void twice(__global const float *a, __global float *b) {"
    " int i = get_global_id(0); b[i] = 2 * a[i]; }"
)


class SVMTest(unittest.TestCase):
    def setUp(self):
        self.ctx, self.queue = cltest.context_and_queue()
        if not self.ctx.devices[0].svm_capabilities:
            self.skipTest("no SVM")
        self.pool = cp.SVMPool(cp.SVMAllocator(self.ctx, queue=self.queue))

    def test_pooled_svm_is_a_pyopencl_svm(self):
        a = self.pool.allocate(4096, self.queue)
        self.assertIsInstance(a, cl.SVMPointer)
        self.assertIsInstance(a, cp.PooledSVM)
        self.assertEqual(a.svm_size, 4096)
        host = np.arange(1024, dtype=np.float32)
        cl.enqueue_copy(self.queue, a, host)
        out = np.empty_like(host)
        cl.enqueue_copy(self.queue, out, a)
        self.queue.finish()
        np.testing.assert_array_equal(out, host)

    def test_a_request_of_max_alloc_is_not_rounded_above_it(self):
        # Rounded up to its bin it would be above every device's limit (INVALID_BUFFER_SIZE):
        # made at its own size instead, and not kept.
        m = min(d.max_mem_alloc_size for d in self.ctx.devices)
        dropped = max(m.bit_length() - 1 - 4, 0)
        unpooled = m | ((1 << dropped) - 1) > m
        a = self.pool.allocate(m)
        self.assertEqual(a.svm_size, m)
        del a
        self.assertEqual(self.pool.held_blocks, 0 if unpooled else 1, f"max alloc {m}")

    @unittest.skipUnless(cltest.MODE == "pocl", "kernels are no-ops on mockcl")
    def test_kernel_arguments(self):
        a, b = self.pool(4096, self.queue), self.pool(4096, self.queue)
        host = np.arange(1024, dtype=np.float32)
        cl.enqueue_copy(self.queue, a, host)
        cl.Program(self.ctx, SRC).build().twice(self.queue, (1024,), None, a, b)
        out = np.empty_like(host)
        cl.enqueue_copy(self.queue, out, b)
        self.queue.finish()
        np.testing.assert_array_equal(out, host * 2)

    def test_release_methods_and_reuse(self):
        p = self.pool
        a = p.allocate(1 << 16, self.queue)
        view = memoryview(a.mem)  # the block's bytes, while it lives
        self.assertEqual((view.format, view.nbytes, view.readonly), ("B", 1 << 16, False))
        view.release()
        a.enqueue_release(self.queue)
        # Its bytes are gone: ValueError (the process used to abort: std::terminate).
        with self.assertRaisesRegex(ValueError, "SVMBlock: the block was released"):
            memoryview(a.mem)
        self.assertEqual((p.active_blocks, p.held_blocks), (0, 1))
        b = p.allocate(1 << 16)
        self.assertEqual(p.statistics()["hits"], 1)
        b.bind_to_queue(self.queue)
        b.unbind_from_queue()
        b.release()
        for second in (b.release, b.free, lambda: b.enqueue_release(self.queue)):
            with self.assertRaisesRegex(
                cl.LogicError, "INVALID_VALUE - the pooled SVM was already"
            ):
                second()  # as PyOpenCL's own PooledSVM
        self.assertEqual((p.active_blocks, p.held_blocks), (0, 1))
        c = p.allocate(1 << 16, self.queue)
        del c
        gc.collect()
        self.assertEqual((p.active_blocks, p.held_blocks), (0, 1))
        self.assertEqual(p.n_free_blocks(), 1)
        p.free_all_blocks()
        self.assertEqual(p.total_bytes(), 0)
        self.assertIsNone(p.allocate(0))

    def test_identity_outlives_the_release(self):
        # PyOpenCL's PooledSVM compares and hashes by address, and keeps it after the release: a
        # released one stays in its set, two released ones are not equal, int() stays.
        a, b = self.pool.allocate(64, self.queue), self.pool.allocate(64, self.queue)
        address, seen = int(a), {a}
        self.assertNotEqual(a, b)
        a.release()
        b.release()
        self.assertIn(a, seen)
        self.assertNotEqual(a, b)
        self.assertEqual((int(a), hash(a), a.svm_size), (address, hash(address), 64))
        for call in (lambda: a.bind_to_queue(self.queue), a.unbind_from_queue):
            with self.assertRaisesRegex(ValueError, "the allocation was released"):
                call()

    def test_memory_stays_while_an_export_reaches_it(self):
        # Whatever freed the block, a view taken while it lived can still be written and read:
        # its SVM memory lasts as long as an object over it (the writes crashed the process after
        # free_held; use after release stays a data race on the next user, as PyOpenCL's). Each
        # case in a child process, since a use of freed memory may crash it.
        import subprocess
        import sys
        import textwrap

        for name, action in {
            "release, then free_held": "a.release(); pool.free_held()",
            "release, then stop_holding": "a.release(); pool.stop_holding()",
            "release, pool deleted": "a.release(); del pool",
            "reused and freed again": "a.release(); b = pool.allocate(n, queue); b.release(); "
            "pool.free_held(); del b",
        }.items():
            code = textwrap.dedent(
                f"""
                import gc, sys
                sys.path[:0] = {sys.path[:3]!r}
                import numpy as np
                import clpool.pyopencl as cp, cltest
                ctx, queue = cltest.context_and_queue()
                pool = cp.SVMPool(cp.SVMAllocator(ctx, queue=queue))
                n = 1 << 20
                a = pool.allocate(n, queue)
                arr = np.frombuffer(memoryview(a.mem), np.uint8)
                {action}
                gc.collect()
                for i in range(3):
                    arr[:] = i
                    assert int(arr.sum()) == i * n
                del arr, a
                gc.collect()
                print("ok")
                """
            )
            r = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
            )
            self.assertEqual((r.returncode, r.stdout.strip()), (0, "ok"), f"{name}: {r.stderr}")

    def test_limit_and_bad_input(self):
        self.pool.set_limit(1 << 20)
        with self.assertRaises(clpool.OutOfMemoryError) as caught:
            self.pool.allocate(2 << 20)
        self.assertIsInstance(caught.exception, cl.MemoryError)
        self.assertEqual(caught.exception.cause, "limit")
        with self.assertRaisesRegex(ValueError, "power of two"):
            cp.SVMAllocator(self.ctx, alignment=3)
        for flags in ("1", 1.9, True):  # int("1") and int(1.9) were taken as 1
            with self.assertRaisesRegex(TypeError, "flags must be pyopencl.svm_mem_flags bits"):
                cp.SVMAllocator(self.ctx, flags=flags)
        self.assertEqual(cp.SVMAllocator(self.ctx, flags=np.uint64(1)).flags, 1)  # as PyOpenCL
        with self.assertRaisesRegex(TypeError, "pyopencl.Context"):
            cp.SVMAllocator(self.queue)
        with self.assertRaisesRegex(TypeError, "pyopencl.CommandQueue"):
            self.pool.allocate(16, queue=self.ctx)
        with self.assertRaisesRegex(ValueError, "negative"):
            self.pool.allocate(-16)
        with self.assertRaises(TypeError):
            cp.SVMPool(cp.ImmediateAllocator(self.queue))
        # The allocator's own call checks its size as the pools do (PyOpenCL's constructor said
        # "incompatible constructor arguments", and 0 was clSVMAlloc's OUT_OF_RESOURCES).
        allocator = cp.SVMAllocator(self.ctx, queue=self.queue)
        for bad, error, words in [
            (-1, ValueError, "negative"),
            (1.5, TypeError, "not float"),
            (None, TypeError, "not NoneType"),
            ("8", TypeError, "not str"),
            (np.True_, TypeError, "not bool"),
            (1 << 64, ValueError, "64 bits"),
            (0, ValueError, "at least 1 byte"),
        ]:
            with self.subTest(size=bad):
                with self.assertRaisesRegex(error, "SVMAllocator: .*" + words):
                    allocator(bad)
        self.assertEqual(allocator(64).size, 64)
        out_of_order = cl.CommandQueue(
            self.ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
        )
        with self.assertRaisesRegex(ValueError, "in-order"):
            self.pool.allocate(16, out_of_order)


if __name__ == "__main__":
    unittest.main()
