"""clpool.pyopencl.MemoryPool's counters, CuPy's names, limit, trim, out-of-memory with figures,
the garbage-collector retry, trace recording replayed by clpool_replay, and bad input. Runs on
mockcl (a 64 MiB immediate device and a deferred one) and on POCL (where device OOM is skipped)."""
import gc
import os
import pickle
import subprocess
import sys
import unittest
import weakref

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

import clpool
import clpool.pyopencl as cp
import cltest

MiB = cltest.MiB
ROUNDED_1MIB = (1 << 20) + (1 << 16) - 1  # PyOpenCL's bins, 4 leading bits


class PoolTest(unittest.TestCase):
    def setUp(self):
        self.ctx, self.queue = cltest.context_and_queue()
        self.pool = cp.MemoryPool(cp.ImmediateAllocator(self.queue))

    def test_counters_and_reuse(self):
        p = self.pool
        b = p.allocate(MiB)
        self.assertIsInstance(b, cl.Buffer)
        self.assertEqual((p.active_blocks, p.held_blocks), (1, 0))
        self.assertEqual(p.active_bytes, MiB)
        self.assertEqual(p.managed_bytes, ROUNDED_1MIB)
        self.assertEqual(b.size, ROUNDED_1MIB)
        del b
        self.assertEqual((p.active_blocks, p.held_blocks), (0, 1))
        b = p(MiB + 5)
        s = p.statistics()
        self.assertEqual((s["hits"], s["misses"]), (1, 1))
        self.assertEqual(s["peak_active_bytes"], MiB + 5)
        self.assertIsNone(p.allocate(0))
        p.free_held()
        self.assertEqual(p.managed_bytes, ROUNDED_1MIB)
        p.stop_holding()
        del b
        self.assertEqual(p.managed_bytes, 0)
        self.assertEqual(p.leading_bits_in_bin_id, 4)

    def test_cupy_names(self):
        p = self.pool
        a = p.malloc(MiB)
        b = p.malloc(2 * MiB)
        del b
        self.assertEqual(p.used_bytes(), ROUNDED_1MIB)
        self.assertEqual(p.n_free_blocks(), 1)
        self.assertEqual(p.used_bytes() + p.free_bytes(), p.total_bytes())
        p.free_all_blocks()
        self.assertEqual(p.free_bytes(), 0)
        self.assertEqual(p.total_bytes(), ROUNDED_1MIB)
        del a

    def test_pyopencl_array_allocator(self):
        a = cla.empty(self.queue, (256, 256), np.float32, allocator=self.pool)
        self.assertEqual(self.pool.active_bytes, 256 * 256 * 4)
        a.set(np.ones((256, 256), np.float32))
        np.testing.assert_array_equal(a.get(), 1)
        del a
        gc.collect()
        self.assertEqual(self.pool.active_blocks, 0)

    def test_limit_out_of_memory_carries_the_figures(self):
        p = self.pool
        keep = p.allocate(MiB)
        p.set_limit(4 * MiB)
        self.assertEqual(p.limit, 4 * MiB)
        with self.assertRaises(clpool.OutOfMemoryError) as caught:
            p.allocate(4 * MiB)
        e = caught.exception
        self.assertIsInstance(e, cl.MemoryError)
        self.assertIsInstance(e, cl.Error)
        self.assertEqual(e.cause, "limit")
        self.assertEqual(e.requested_bytes, 4 * MiB)
        self.assertEqual(e.rounded_bytes, 4 * MiB + (1 << 18) - 1)
        self.assertEqual(e.active_bytes, MiB)
        self.assertEqual(e.active_rounded_bytes, ROUNDED_1MIB)
        self.assertEqual(e.held_bytes, 0)
        self.assertEqual(e.managed_bytes, ROUNDED_1MIB)
        self.assertEqual(e.limit_bytes, 4 * MiB)
        self.assertIn("4194304", str(e))
        self.assertEqual(type(e).__name__, "OutOfMemoryError")
        self.assertEqual(p.statistics()["ooms_raised"], 1)
        with self.assertRaises(ValueError):
            p.set_limit(MiB)  # below the live allocation
        p.set_limit(None)
        self.assertIsNone(p.limit)
        p.allocate(4 * MiB)
        del keep

    def test_set_limit_has_cupys_meaning_on_every_pool(self):
        # One meaning across clpool's pools, CuPy's: size bytes or a fraction of the device; 0 or
        # neither is no limit; get_limit() is 0 then. limit_bytes= is the older name of size.
        p = self.pool
        p.set_limit(size=2 * MiB)
        self.assertEqual((p.limit, p.get_limit()), (2 * MiB, 2 * MiB))
        p.set_limit(0)
        self.assertEqual((p.limit, p.get_limit()), (None, 0))
        p.set_limit(fraction=0.25)
        self.assertEqual(p.get_limit(), self.queue.device.global_mem_size // 4)
        p.set_limit()
        self.assertEqual(p.get_limit(), 0)
        p.set_limit(limit_bytes=3 * MiB)
        self.assertEqual(p.get_limit(), 3 * MiB)
        p.set_limit(limit_bytes=None)
        self.assertEqual(p.get_limit(), 0)
        with self.assertRaises(TypeError):
            p.set_limit(size=MiB, limit_bytes=MiB)
        with self.assertRaises(ValueError):
            p.set_limit(size=MiB, fraction=0.5)
        with self.assertRaises(ValueError):
            p.set_limit(fraction=1.5)
        pinned = clpool.PageLockedMemoryPool(self.queue)
        pinned.set_limit(size=MiB)
        self.assertEqual(pinned.get_limit(), MiB)
        pinned.set_limit(0)
        self.assertEqual(pinned.get_limit(), 0)

    @unittest.skipUnless(cltest.MODE == "mockcl", "needs the 64 MiB mock device")
    def test_device_out_of_memory(self):
        p = self.pool
        kept = []
        with self.assertRaises(clpool.OutOfMemoryError) as caught:
            for _ in range(10):
                kept.append(p.allocate(16 * MiB))
        e = caught.exception
        self.assertIsInstance(e, cl.MemoryError)
        self.assertEqual(e.cause, "allocator")
        self.assertEqual(e.allocator_status, -4)  # CL_MEM_OBJECT_ALLOCATION_FAILURE
        self.assertEqual(e.requested_bytes, 16 * MiB)
        self.assertEqual(e.active_bytes, len(kept) * 16 * MiB)
        self.assertEqual(len(kept), 3)
        self.assertIsNone(e.limit_bytes)
        # Garbage the collector alone can free is freed before the pool gives up.
        gc.disable()
        try:
            cycle = [kept]
            cycle.append(cycle)
            del kept, cycle, caught, e
            again = [p.allocate(16 * MiB) for _ in range(3)]
        finally:
            gc.enable()
        self.assertGreaterEqual(p.statistics()["reclaim_calls"], 1)
        self.assertEqual(len(again), 3)

    @unittest.skipUnless(cltest.MODE == "mockcl", "the mock's second device defers allocation")
    def test_deferred_allocator(self):
        ctx, queue = cltest.context_and_queue(1)
        p = cp.MemoryPool(cp.DeferredAllocator(ctx), leading_bits_in_bin_id=2)
        bufs = [p.allocate(MiB) for _ in range(4)]
        self.assertEqual(p.active_blocks, 4)
        self.assertEqual(p.managed_bytes, 4 * ((1 << 20) + (1 << 18) - 1))
        del bufs
        self.assertEqual(p.held_blocks, 4)

    def test_trim(self):
        p = self.pool
        bufs = [p.allocate(MiB) for _ in range(4)]
        p.set_trim(max_held_bytes=2 * ROUNDED_1MIB)
        del bufs
        self.assertEqual(p.held_blocks, 2)
        self.assertEqual(p.statistics()["blocks_trimmed"], 2)
        self.assertEqual(p.trim(0), 2 * ROUNDED_1MIB)
        p.set_trim()  # off
        with self.assertRaises(ValueError):
            p.set_trim(ratio=-1.0)

    def test_trace_replayed_by_clpool_replay(self):
        replay = os.environ.get("CLPOOL_REPLAY")
        if not replay:
            self.skipTest("CLPOOL_REPLAY not set")
        path = os.path.join(os.getcwd(), "app.trace")
        self.pool.record_trace(path)
        a = self.pool.allocate(8 * MiB)
        b = self.pool.allocate(3 * MiB)
        del a
        c = self.pool.allocate(8 * MiB)
        self.pool.free_held()
        del b, c
        self.assertEqual(self.pool.stop_trace(), 7)
        with open(path) as f:
            text = f.read()
        self.assertIn("alloc", text)
        run = subprocess.run(
            [replay, path, "--capacity", "64MiB", "--no-progress"], capture_output=True, text=True
        )
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("replayed cleanly, 7 events", run.stdout)
        self.assertIn("1 hit, 2 misses", run.stdout)  # as the application saw

    def test_pooled_buffer_semantics(self):
        p = self.pool
        b = p.allocate(4096)
        self.assertIsInstance(b, cl.Buffer)
        self.assertIsInstance(b, cp.PooledBuffer)
        mem = b.int_ptr
        b.release()  # PyOpenCL's PooledBuffer.release()
        self.assertEqual((p.active_blocks, p.held_blocks), (0, 1))
        with self.assertRaises(cl.LogicError):
            b.release()  # a second release is an error, as in PyOpenCL
        c = p.allocate(4096)  # the same block; `b` still exists, so a new object
        self.assertEqual(c.int_ptr, mem)
        self.assertIsNot(c, b)
        del b
        cid = id(c)
        del c  # back to the pool with its object
        d = p.allocate(4096)
        if cp.BINDING[0] != "generic":  # the generic path never reuses objects
            self.assertEqual(id(d), cid)  # handed out again, not rebuilt
        d.tag = "mine"  # something of the user's: not reused
        del d
        e = p.allocate(4096)
        self.assertFalse(hasattr(e, "tag"))
        e.bind_to_queue(self.queue)  # PooledBuffer's no-ops
        e.unbind_from_queue()
        cp.release(e)
        self.assertEqual(p.active_blocks, 0)
        # What is not this pool's block is refused, never a silent no-op.
        with self.assertRaises(TypeError):
            cp.release(cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, 16))
        with self.assertRaises(TypeError):
            cp.release(None)
        with self.assertRaises(TypeError):
            p.release(None)
        other = cp.MemoryPool(cp.ImmediateAllocator(self.queue))
        theirs = other.allocate(4096)
        with self.assertRaises(ValueError) as caught:
            p.release(theirs)
        self.assertIn("another pool's", str(caught.exception))
        self.assertEqual(other.active_blocks, 1)
        other.release(theirs)
        self.assertEqual(other.active_blocks, 0)
        with self.assertRaises(cl.LogicError):
            other.release(theirs)
        with self.assertRaises(TypeError):
            cp.PooledBuffer()  # made by pools only

    def test_a_block_with_a_sub_buffer_never_reaches_another_user(self):
        """OpenCL keeps a buffer's memory while a sub-buffer of it lives: a block divided by
        get_sub_region or a slice goes back to the device at release, not to the next user (who
        would share its memory with the sub-buffer)."""
        p = self.pool
        q = self.queue
        ones = np.ones(MiB // 4, np.float32)
        for divide in (
            lambda b: b.get_sub_region(0, 4096),
            lambda b: b.get_sub_region(origin=0, size=4096),
            lambda b: b[0:4096],
        ):
            parent = p.allocate(MiB)
            mem = parent.int_ptr
            cl.enqueue_copy(q, parent, ones)
            view = divide(parent)
            self.assertIsInstance(view, cl.Buffer)
            self.assertEqual(view.size, 4096)
            del parent
            gc.collect()
            self.assertEqual((p.active_blocks, p.held_blocks), (0, 0))
            other = p.allocate(MiB)
            self.assertNotEqual(other.int_ptr, mem, "the divided block was handed out again")
            cl.enqueue_copy(q, other, np.full(MiB // 4, 7.0, np.float32))
            seen = np.empty(1024, np.float32)
            cl.enqueue_copy(q, seen, view)
            q.finish()
            self.assertTrue((seen == 1.0).all(), seen[:4])
            del view, other
        # release() of a divided buffer discards its block too; an undivided one is kept.
        b = p.allocate(MiB)
        b.get_sub_region(0, 16)
        b.release()
        self.assertEqual(p.held_blocks, 0)  # b took the last round's `other` from the pool
        p.allocate(MiB).release()
        self.assertEqual(p.held_blocks, 1)
        # A released buffer has no block to divide: an error, as a second release.
        with self.assertRaises(cl.LogicError):
            b.get_sub_region(0, 16)
        with self.assertRaises(cl.LogicError):
            b[0:16]
        # pyopencl's own errors pass through, and leave the block divided.
        c = p.allocate(4096)
        with self.assertRaises((cl.Error, ValueError, TypeError)):
            c.get_sub_region(0, 1 << 20)
        with self.assertRaises(TypeError):
            c.get_sub_region()
        del c
        self.assertEqual(p.held_blocks, 1)

        # A collection run while get_sub_region prepares its call may release the buffer (a
        # finalizer): then it is refused as released, or its block goes to the device marked;
        # never back to the pool unmarked (the next user got the sub-buffer's memory: 20 of 20
        # before the fix) nor with its record freed under the mark (valgrind's invalid write).
        finalized = []

        class Releaser:
            def __init__(self, victim):
                self.victim = victim
                self.cycle = self

            def __del__(self):
                finalized.append(1)
                self.victim.release()

        keep = [(i, i, i, i) for i in range(5000)]  # no 4-tuple to reuse: the next one allocates
        for _ in range(20):
            victim = p.allocate(4096)
            Releaser(victim)  # garbage, in a cycle: collected at the next collection
            threshold = gc.get_threshold()
            gc.set_threshold(1, 1, 1)
            try:
                view = victim.get_sub_region(0, 16, cl.mem_flags.READ_WRITE)
            except cl.LogicError:
                view = None
            finally:
                gc.set_threshold(*threshold)
            gc.collect()
            victim_mem = victim.int_ptr
            del victim
            gc.collect()
            if view is not None:
                self.assertNotEqual(p.allocate(4096).int_ptr, victim_mem)
            del view
        # The release did come in every round (here before the lookup: refused as released).
        self.assertEqual(len(finalized), 20)
        del keep
        # PyCUDA's flavour (PooledDeviceAllocation) has its own type: the same rule.
        import clpool.pycuda

        dp = clpool.pycuda.DeviceMemoryPool(cp.ImmediateAllocator(q))
        for divide in (lambda a: a[0:128], lambda a: a.get_sub_region(0, 128)):
            a = dp.allocate(4096)
            view = divide(a)
            a.free()
            self.assertEqual(dp.held_blocks, 0)
            del a, view
        dp.allocate(4096).free()
        self.assertEqual(dp.held_blocks, 1)

    def test_sizes_beyond_the_device(self):
        p = self.pool
        for size in (1 << 62, (1 << 64) - 1):
            with self.subTest(size=size):
                with self.assertRaises((clpool.CLError, clpool.OutOfMemoryError, ValueError)) as c:
                    p.allocate(size)
                self.assertIn(str(size), str(c.exception))
        self.assertEqual((p.active_blocks, p.managed_bytes), (0, 0))

    def test_other_opencl_failures_are_pyopencls_errors_too(self):
        # Above max alloc the device refuses the buffer (CL_INVALID_BUFFER_SIZE, on both POCL and
        # mockcl): PyOpenCL's pool raises pyopencl.LogicError there, and so does clpool's, a
        # clpool.CLError too, with PyOpenCL's code, routine and what beside its status.
        m = min(d.max_mem_alloc_size for d in self.ctx.devices)
        p = cp.MemoryPool(cp.DeferredAllocator(self.ctx))
        with self.assertRaises(cl.LogicError) as caught:
            p.allocate(m + 1)
        e = caught.exception
        self.assertIsInstance(e, clpool.CLError)
        self.assertIsInstance(e, RuntimeError)
        self.assertEqual((e.status, e.code, e.routine), (-61, -61, "clCreateBuffer"))
        self.assertIn("CL_INVALID_BUFFER_SIZE", str(e))
        self.assertIn(f"MemoryPool.allocate({m + 1} bytes)", str(e))
        self.assertEqual(e.what, str(e))
        self.assertEqual(p.active_blocks, 0)
        # It crosses process boundaries (multiprocessing pickles a worker's exception).
        again = pickle.loads(pickle.dumps(e))
        self.assertIs(type(again), type(e))
        self.assertEqual((str(again), again.status, again.routine), (str(e), -61, "clCreateBuffer"))

    def test_a_request_of_max_alloc_is_not_rounded_above_it(self):
        # PyOpenCL's pool rounds max_mem_alloc_size up to its bin and fails it with
        # INVALID_BUFFER_SIZE where the device enforces the limit; clpool's makes the buffer at
        # its own size and does not keep it. The deferred allocator commits nothing on POCL.
        m = min(d.max_mem_alloc_size for d in self.ctx.devices)
        p = cp.MemoryPool(cp.DeferredAllocator(self.ctx))
        dropped = max(m.bit_length() - 1 - p.leading_bits_in_bin_id, 0)
        bin_size = m | ((1 << dropped) - 1)  # PyOpenCL's rounding
        unpooled = bin_size > m
        b = p.allocate(m)
        self.assertEqual(b.size, m if unpooled else bin_size)
        del b
        self.assertEqual(p.held_blocks, 0 if unpooled else 1, f"max alloc {m}")
        self.assertEqual(p.active_bytes, 0)

    def test_bad_input(self):
        p = self.pool
        with self.assertRaisesRegex(ValueError, "negative"):
            p.allocate(-1)
        for bad in ("1", 1.5, None, True, np.True_):
            with self.assertRaisesRegex(TypeError, "integer"):
                p.allocate(bad)
        for allocator in (cp.ImmediateAllocator(self.queue), cp.DeferredAllocator(self.ctx)):
            with self.assertRaisesRegex(TypeError, "integer, not bool"):
                allocator(np.True_)
            with self.assertRaisesRegex(ValueError, "does not fit in 64 bits"):
                allocator(1 << 64)
        with self.assertRaisesRegex(TypeError, "integer, not bool"):
            p.trim(True)
        self.assertEqual(p.allocate(np.int64(100)).size, 103)  # 0b1100111
        with self.assertRaisesRegex(ValueError, "64 bits"):
            p.allocate(1 << 70)
        with self.assertRaisesRegex(TypeError, "pyopencl.Context"):
            cp.DeferredAllocator(object())
        with self.assertRaisesRegex(TypeError, "pyopencl.CommandQueue"):
            cp.ImmediateAllocator(self.ctx)
        with self.assertRaisesRegex(TypeError, "mem_flags"):
            cp.DeferredAllocator(self.ctx, mem_flags="rw")
        with self.assertRaisesRegex(ValueError, "USE_HOST_PTR"):
            cp.DeferredAllocator(self.ctx, mem_flags=cl.mem_flags.USE_HOST_PTR)
        with self.assertRaisesRegex(TypeError, "allocator"):
            cp.MemoryPool(object())
        with self.assertRaisesRegex(ValueError, "leading_bits"):
            cp.MemoryPool(cp.DeferredAllocator(self.ctx), leading_bits_in_bin_id=99)
        with self.assertRaises(ValueError):
            cp.MemoryPool(cp.DeferredAllocator(self.ctx), leading_bits_in_bin_id=-1)
        # Beyond a C++ unsigned: clpool's words, not pybind11's "incompatible constructor arguments".
        for pool_type in (cp.MemoryPool, cp.SVMPool):
            with self.subTest(pool=pool_type.__name__):
                allocator = (
                    cp.DeferredAllocator(self.ctx)
                    if pool_type is cp.MemoryPool
                    else cp.SVMAllocator(self.ctx, queue=self.queue)
                )
                with self.assertRaises(ValueError) as raised:
                    pool_type(allocator, leading_bits_in_bin_id=2**70)
                self.assertIn(
                    "leading_bits_in_bin_id 1180591620717411303424 is out of range; it must be 0 to 12",
                    str(raised.exception),
                )
        with self.assertRaises(TypeError):
            p.set_limit("big")
        with self.assertRaisesRegex(ValueError, "negative"):
            p.set_limit(-5)
        with self.assertRaises(TypeError):
            p.set_trim(ratio="half")
        with self.assertRaisesRegex(ValueError, "finite"):
            p.set_trim(ratio=float("nan"))

    def test_reclaim_callbacks(self):
        p = self.pool
        kept = p.allocate(MiB)
        p.set_limit(2 * MiB)
        calls = []

        def free_kept(needed):
            nonlocal kept
            calls.append(needed)
            kept = None

        cid = p.add_reclaim_callback(free_kept)
        b = p.allocate(MiB + MiB // 2)  # over the limit until the callback frees `kept`
        self.assertEqual(len(calls), 1)
        self.assertIsNone(kept)
        self.assertTrue(p.remove_reclaim_callback(cid))
        self.assertFalse(p.remove_reclaim_callback(cid))
        with self.assertRaises(clpool.OutOfMemoryError):
            p.allocate(2 * MiB)  # no callback now
        self.assertEqual(len(calls), 1)
        del b
        with self.assertRaisesRegex(TypeError, "callable"):
            p.add_reclaim_callback(3)

        # A callback that refers to its own pool is a cycle the collector frees, with the pool's
        # memory (held by C++ alone, it kept both to the end of the process).
        def make_and_drop():
            pool = cp.MemoryPool(cp.ImmediateAllocator(self.queue))
            pool.add_reclaim_callback(lambda n: pool.free_held())
            pool.allocate(MiB)  # dropped at once: held for reuse
            return weakref.ref(pool)

        ref = make_and_drop()
        gc.collect()
        self.assertIsNone(ref())

    def test_a_held_object_is_out_of_the_collectors_reach(self):
        # A block's object kept for reuse is reachable from the pool alone: gc.get_objects() could
        # hand it out (an attribute set on it reached the next user; one whose __del__ allocated
        # hung free_held(), which frees it under the pool's lock). Handed out, it is tracked again.
        p = self.pool
        b = p.allocate(4096)
        del b
        self.assertEqual(p.held_blocks, 1)
        self.assertEqual([o for o in gc.get_objects() if isinstance(o, cp.PooledBuffer)], [])
        b = p.allocate(4096)
        self.assertTrue(gc.is_tracked(b))
        self.assertIn(b, [o for o in gc.get_objects() if isinstance(o, cp.PooledBuffer)])
        b.note = "the first user's"
        del b
        b = p.allocate(4096)
        self.assertFalse(hasattr(b, "note"))

    def test_init_runs_once(self):
        # A second __init__ would replace the allocator the Python side shows and keep the C++
        # pool (another context's): refused on every pool.
        pools = [self.pool, clpool.PageLockedMemoryPool(self.queue)]
        if self.ctx.devices[0].svm_capabilities:
            pools.append(cp.SVMPool(cp.SVMAllocator(self.ctx, queue=self.queue)))
        for pool in pools:
            with self.subTest(pool=type(pool).__name__):
                with self.assertRaisesRegex(RuntimeError, "already initialised"):
                    pool.__init__(pool.allocator if hasattr(pool, "allocator") else self.queue)

    def test_a_pool_whose_init_did_not_run_is_refused(self):
        # A refused __init__ leaves `self` reachable (its traceback, a subclass's registry), and
        # __new__ alone makes one: every method and counter refuses it instead of reading memory
        # that was never constructed (a crash or a hang before).
        def half_made(pool_type):
            try:
                pool_type(object())
            except TypeError as e:
                tb = e.__traceback__
            while tb is not None:  # the frame of the pool's own __init__
                self_ = tb.tb_frame.f_locals.get("self")
                if isinstance(self_, pool_type):
                    return self_
                tb = tb.tb_next
            self.fail(f"no half-made {pool_type.__name__} in the traceback")

        pools = [
            half_made(cp.MemoryPool),
            half_made(clpool.PageLockedMemoryPool),
            cp.MemoryPool.__new__(cp.MemoryPool),
            clpool.PageLockedMemoryPool.__new__(clpool.PageLockedMemoryPool),
        ]
        if self.ctx.devices[0].svm_capabilities:
            pools += [half_made(cp.SVMPool), cp.SVMPool.__new__(cp.SVMPool)]
        for pool in pools:
            for use in (
                lambda: pool.held_blocks,
                lambda: pool.active_bytes,
                lambda: pool.free_held(),
                lambda: pool.statistics(),
                lambda: pool.set_limit(1),
                lambda: pool.allocate(4096)
                if not isinstance(pool, clpool.PageLockedMemoryPool)
                else pool.allocate((4,), np.float32),
            ):
                with self.subTest(pool=type(pool).__name__):
                    with self.assertRaisesRegex(TypeError, "not initialised"):
                        use()


# A program that keeps its pool in a module's globals until it exits, as scripts do: the pool dies
# while Python finalizes, and every cl_mem it held, and every buffer object it kept for reuse (with
# the object's own reference to its cl_mem), must be released then, as PyOpenCL's own pool does.
EXIT_SCRIPT = """
import sys
import pyopencl as cl
import clpool.pyopencl as cp
import cltest

ctx, queue = cltest.context_and_queue()
pool = cp.MemoryPool(cp.ImmediateAllocator(queue))
kept = pool.allocate(1 << 20)
del kept                                # its block and its object are held for reuse
live = pool.allocate(1 << 16)           # still a user's at exit
assert pool.held_blocks == 1 and pool.active_blocks == 1
print("done")
"""


class ExitTest(unittest.TestCase):
    def test_a_pool_in_a_modules_globals_releases_everything_at_exit(self):
        run = subprocess.run(
            [sys.executable, "-c", EXIT_SCRIPT], capture_output=True, text=True, timeout=120
        )
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.strip(), "done")
        # mockcl names, at exit, every OpenCL object the program left (on POCL there is no report).
        self.assertNotIn("objects alive at process exit", run.stderr)


if __name__ == "__main__":
    unittest.main()
