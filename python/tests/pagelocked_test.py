"""clpool.PageLockedMemoryPool: numpy arrays in pinned host memory, as the host side of transfers."""
import gc
import unittest

import numpy as np
import pyopencl as cl

import clpool
import cltest


def run_in_child(test, body, label=""):
    """Runs `body` in a child Python with `pool`, a PageLockedMemoryPool on cltest's queue (and
    gc, np, clpool, cltest imported), and fails `test` unless it ends by printing "ok": a use of
    unmapped memory or a fatal Python error there is a failure, not the end of the suite."""
    import os
    import subprocess
    import sys
    import textwrap

    code = (
        textwrap.dedent(
            f"""
            import gc, sys
            sys.path[:0] = {sys.path[:3]!r}
            import numpy as np
            import clpool, cltest
            ctx, queue = cltest.context_and_queue()
            pool = clpool.PageLockedMemoryPool(queue)
            """
        )
        + textwrap.dedent(body)
        + 'print("ok")\n'
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    test.assertEqual((r.returncode, r.stdout.strip()), (0, "ok"), f"{label}: {r.stdout}{r.stderr}")


class PageLockedTest(unittest.TestCase):
    def setUp(self):
        self.ctx, self.queue = cltest.context_and_queue()
        self.pool = clpool.PageLockedMemoryPool(self.queue)

    def test_array_round_trip_through_a_device_buffer(self):
        host = self.pool.allocate((64, 16), np.float32)
        self.assertEqual(host.shape, (64, 16))
        self.assertEqual(host.dtype, np.float32)
        self.assertTrue(host.flags.c_contiguous)
        self.assertIsInstance(host.base, clpool._core.PinnedBlock)
        host[:] = np.arange(1024, dtype=np.float32).reshape(64, 16)
        dev = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, host.nbytes)
        cl.enqueue_copy(self.queue, dev, host)
        back = self.pool.allocate(1024, np.float32)
        cl.enqueue_copy(self.queue, back, dev).wait()
        np.testing.assert_array_equal(back, host.ravel())
        self.assertEqual(self.pool.active_blocks, 2)

    def test_fortran_order_free_and_reuse(self):
        a = self.pool.allocate((3, 5), np.int64, order="F")
        self.assertTrue(a.flags.f_contiguous)
        self.assertEqual(a.strides, (8, 24))
        a.base.free()
        self.assertEqual(self.pool.active_blocks, 0)
        self.assertEqual(self.pool.held_blocks, 1)
        with self.assertRaisesRegex(cl.LogicError, "PinnedBlock.free failed: INVALID_VALUE"):
            a.base.free()  # a second free, as a second release of any pooled object
        # Its bytes are gone: ValueError (the process used to abort: std::terminate).
        with self.assertRaisesRegex(ValueError, "PinnedBlock: the block was freed"):
            memoryview(a.base)
        self.assertEqual(self.pool.held_blocks, 1)
        b = self.pool.allocate(15, np.int64)
        self.assertEqual(self.pool.statistics()["hits"], 1)
        del b
        gc.collect()
        self.assertEqual(self.pool.n_free_blocks(), 1)
        self.pool.free_all_blocks()
        self.assertEqual(self.pool.total_bytes(), 0)

    def test_memory_stays_while_numpy_reaches_it(self):
        # Whatever was freed or closed, an array (and a view of it) can still be written and read:
        # the block's mapping lasts as long as an object over it. Each case in a child process,
        # since a use of unmapped memory crashes (glibc's "corrupted double-linked list" on POCL,
        # an AddressSanitizer report under --config=asan).
        cases = {
            "pool deleted, then free": "del pool; h.base.free()",
            "free, then free_held": "h.base.free(); pool.free_held()",
            "free, then stop_holding": "h.base.free(); pool.stop_holding()",
            "free, pool deleted": "h.base.free(); del pool",
            "free, then reused and freed again": "h.base.free(); g = pool.allocate(n, np.float32); "
            "g.base.free(); pool.free_held(); del g",
            "limit forces the block out": "h.base.free(); pool.set_limit(1)",
        }
        for name, action in cases.items():
            run_in_child(
                self,
                f"""
                n = 1 << 16
                h = pool.allocate(n, np.float32)
                view = h[1:]
                {action}
                gc.collect()
                for i in range(5):
                    h[:] = i
                    view[:] = i + 1
                    assert h[0] == i and h.sum() == i + (n - 1) * (i + 1), h.sum()
                other = clpool.PageLockedMemoryPool(queue).allocate(n, np.float32)
                other[:] = 7
                del h
                view[:] = 2
                assert view.sum() == 2 * (n - 1)
                del view, other
                """,
                name,
            )

    def test_a_reclaim_callback_may_remove_itself(self):
        # allocate() runs the pool without the GIL; a callback that removes itself leaves the
        # pool's last reference to it there, and the Python object must still be released with
        # the GIL (released without it, a callable's __del__ aborted the interpreter: "Fatal
        # Python error: PyThreadState_Get"). In a child process, so that an abort is a failure.
        run_in_child(
            self,
            """
            MiB = 1 << 20
            pool.set_limit(2 * MiB)
            kept = pool.allocate(MiB, np.uint8)
            events = []

            class Freer:
                __slots__ = ("id",)  # no __weakref__: the pool holds it strongly

                def __call__(self, needed):
                    global kept
                    kept = None
                    gc.collect()
                    events.append(pool.remove_reclaim_callback(self.id))

                def __del__(self):
                    events.append("deleted")

            class WeakFreer(Freer):
                __slots__ = ("__weakref__",)  # held through the pool's __dict__, weakly

            for kind in (Freer, WeakFreer):
                f = kind()
                f.id = pool.add_reclaim_callback(f)
                del f
                b = pool.allocate(MiB + MiB // 2, np.uint8)
                assert b.shape == (MiB + MiB // 2,), b.shape
                del b
                gc.collect()
                assert events == [True, "deleted"], (kind.__name__, events)
                del events[:]
                pool.free_held()
                kept = pool.allocate(MiB, np.uint8)
            """,
        )

    def test_bad_input(self):
        with self.assertRaises(ValueError):
            self.pool.allocate((-1, 2), np.float32)
        with self.assertRaises(TypeError):
            self.pool.allocate((2.5,), np.float32)
        with self.assertRaises(ValueError):
            self.pool.allocate((2,), np.float32, order="K")
        with self.assertRaises(TypeError):
            clpool.PageLockedMemoryPool(self.ctx)
        self.assertEqual(self.pool.allocate((0,), np.float32).size, 0)
        with self.assertRaises(TypeError):
            self.pool.allocate(4, "not a dtype")
        with self.assertRaises(TypeError):
            self.pool.allocate((True,), np.float32)
        for text in (b"8", "8", bytearray(b"8")):  # bytes iterate as ints: b"8" was shape (56,)
            with self.assertRaisesRegex(TypeError, "shape must be an int or a sequence"):
                self.pool.allocate(text, np.float32)
        with self.assertRaises(TypeError):
            self.pool.allocate({"a": 1}.items(), np.float32)
        with self.assertRaises(ValueError):  # 2**70 bytes: beyond any size
            self.pool.allocate((1 << 62, 1 << 5), np.float64)
        self.assertEqual(self.pool.active_blocks, 0)

    def test_dtypes_holding_objects_are_refused(self):
        # Recycled bytes must never be read as object pointers: the block below held doubles.
        a = self.pool.allocate((4,), np.float64)
        a[:] = [1.5, 2.5, 3.5, 4.5]
        a.base.free()
        for dtype in (object, np.dtype([("x", np.int32), ("o", object)]), np.dtype((object, (2,)))):
            with self.subTest(dtype=dtype), self.assertRaises(TypeError):
                self.pool.allocate((4,), dtype)
        self.assertEqual(self.pool.active_blocks, 0)
        self.assertEqual(self.pool.held_blocks, 1)  # nothing lost: the block is still there

    def test_shapes_orders_and_alignment(self):
        for shape in (7, (2, 3), [2, 3], np.array([2, 3]), (np.int64(5),), (), (1, 0, 4)):
            for dtype in (np.uint8, np.float64, np.complex128, np.dtype("f4,i8")):
                for order in ("C", "F"):
                    with self.subTest(shape=shape, dtype=dtype, order=order):
                        a = self.pool.allocate(shape, dtype, order=order)
                        expected = np.empty(shape, dtype, order=order)
                        self.assertEqual(a.shape, expected.shape)
                        self.assertEqual(a.strides, expected.strides)
                        self.assertTrue(a.flags.aligned)
                        a[...] = 0  # writable through the whole extent
        gc.collect()
        self.assertEqual(self.pool.active_blocks, 0)


if __name__ == "__main__":
    unittest.main()
