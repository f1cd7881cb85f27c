"""Stress: what Python programs really do to pools, from many threads at once, for a bounded time.

Threads share buffer pools (immediate and deferred), an SVM pool and a page-locked pool, under
small garbage-collector thresholds and a thread that collects all the time. Each thread
allocates, writes a pattern through the device and reads it back (a block handed to two users
at once shows up as a wrong pattern), and gives blocks back every way a program does: `del`, the
last reference going, `release()`, `clpool.pyopencl.release()`, a reference cycle the collector
frees, a weak reference whose callback runs the collector, an attribute set on the buffer, a
sub-buffer that outlives its parent. Pool-wide calls (free_held, trim, set_trim, set_limit,
statistics, record_trace) come from random threads. Pools also outlive their context and queue,
and buffers outlive their pool.

CLPOOL_STRESS_SECONDS sets the duration (default 8; the soak target runs longer), CLPOOL_STRESS_SEED
the seed (default: time-based, printed). To narrow a crash down, CLPOOL_STRESS_THREADS sets the
number of worker threads (default 8) and CLPOOL_STRESS_OPS the kinds of operation, a comma list
of buffers (allocate, write and read back), svm, pinned, drops (every way to give a block back;
without it blocks go by `del`) and pool_calls (default: all). Any crash fails the test; so does a
wrong pattern, an unexpected exception, or a pool whose counters do not return to zero.
"""
import gc
import os
import random
import tempfile
import threading
import time
import unittest
import weakref
from unittest import mock

import numpy as np
import pyopencl as cl

import clpool
import clpool.pyopencl as cp
import cltest

GC_DEFECT_EXPOSED = cltest.binding_gc_defect_exposed()

SECONDS = float(os.environ.get("CLPOOL_STRESS_SECONDS", "8"))
SEED = int(os.environ.get("CLPOOL_STRESS_SEED", str(time.time_ns() % 1000000)))
OP_KINDS = ("buffers", "svm", "pinned", "drops", "pool_calls")


def _threads():
    text = os.environ.get("CLPOOL_STRESS_THREADS", "8")
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise ValueError(f"CLPOOL_STRESS_THREADS={text!r}: want a whole number from 1 to 64")
    return int(text)


def _ops():
    text = os.environ.get("CLPOOL_STRESS_OPS", ",".join(OP_KINDS))
    ops = {o.strip() for o in text.split(",") if o.strip()}
    unknown = sorted(ops - set(OP_KINDS))
    if unknown or not ops:
        raise ValueError(
            f"CLPOOL_STRESS_OPS={text!r}: want a comma list of {', '.join(OP_KINDS)}"
            + (f" (unknown: {', '.join(unknown)})" if unknown else "")
        )
    return ops


# What each of step()'s 20 draws does.
KIND_OF_STEP = ["buffers"] * 10 + ["svm"] * 2 + ["pinned"] + ["drops"] * 5 + ["pool_calls"] * 2
THREADS = _threads()
OPS = _ops()
SIZES = [1, 100, 4096, 5000, 65536, 300000, 1 << 20]


class Stress:
    def __init__(self, ctx, queue):
        self.ctx, self.queue = ctx, queue
        self.pools = [
            cp.MemoryPool(cp.ImmediateAllocator(queue)),
            cp.MemoryPool(cp.DeferredAllocator(ctx)),
        ]
        self.svm = None
        if ctx.devices[0].svm_capabilities:
            self.svm = cp.SVMPool(cp.SVMAllocator(ctx, queue=queue))
        self.pinned = clpool.PageLockedMemoryPool(queue)
        self.shared = []  # buffers any thread may drop
        self.lock = threading.Lock()
        self.errors = []
        self.stop = threading.Event()
        self.counts = {}
        self.trace_dir = tempfile.mkdtemp()

    def count(self, what):
        self.counts[what] = self.counts.get(what, 0) + 1

    def check_pattern(self, queue, buf, nbytes, value):
        n = min(nbytes, 4096)
        host = np.full(n, value, np.uint8)
        cl.enqueue_copy(queue, buf, host)
        back = np.empty(n, np.uint8)
        cl.enqueue_copy(queue, back, buf)
        queue.finish()
        if not (back == value).all():
            raise AssertionError(f"pattern {value} came back wrong: a block had two users")

    def drop(self, rng, buf):
        if "drops" not in OPS:
            self.count("del")
            return
        if not isinstance(buf, cp.PooledBuffer):
            # PyOpenCL's own objects (the sub-buffers) are freed by PyOpenCL 2022.3's dealloc,
            # which crashes when the collector runs during it (python/pooled_buffer_type.h):
            # nothing hostile on those.
            self.count("del (PyOpenCL's own)")
            return
        how = rng.randrange(7)
        if how == 0:
            buf.release()
            self.count("release()")
        elif how == 1:
            cp.release(buf)
            self.count("clpool.pyopencl.release")
        elif how == 2:
            cycle = [buf]
            cycle.append(cycle)  # freed by the collector only
            self.count("cycle")
        elif how == 3:
            if GC_DEFECT_EXPOSED and isinstance(buf, cl.Buffer):
                self.count("del (weakref+collect would hit PyOpenCL 2022.3's own defect)")
            else:
                self.keepalive_callback(buf)
                self.count("weakref+collect")
        elif how == 4:
            buf.note = [1, 2, 3]  # an attribute: the object cannot be reused
            self.count("attribute")
        elif how == 5 and isinstance(buf, cl.Buffer) and buf.size >= 256:
            sub = buf.get_sub_region(0, 128)  # keeps the parent's cl_mem alive
            with self.lock:
                self.shared.append(sub)
            self.count("sub-buffer")
        else:
            self.count("del")

    def keepalive_callback(self, buf):
        # A weak reference that survives the buffer, with a callback that runs the collector
        # while the buffer is being freed.
        ref = cltest.watch(buf, lambda r: (gc.collect(), self._refs.discard(r)))
        self._refs.add(ref)

    _refs = set()

    def worker(self, seed):
        rng = random.Random(seed)
        mine = []
        try:
            while not self.stop.is_set():
                try:
                    self.step(rng, seed, mine)
                except clpool.OutOfMemoryError:  # a full device (mockcl's is 64 MiB) is normal
                    self.count("oom")
        except Exception as e:  # reported by the main thread
            self.errors.append(f"{e!r}: {e}")
        finally:
            mine.clear()

    def step(self, rng, seed, mine):
        op = rng.randrange(20)
        if KIND_OF_STEP[op] not in OPS and KIND_OF_STEP[op] != "drops":
            pass  # nothing this step but the bound on blocks held below (without drops: `del`)
        elif op < 10:
            pool = rng.choice(self.pools)
            size = rng.choice(SIZES)
            buf = pool.allocate(size)
            self.check_pattern(self.queue, buf, size, seed % 251)
            (mine if rng.random() < 0.7 else self.shared).append(buf)
            self.count("buffer")
        elif op < 12 and self.svm is not None:
            size = rng.choice(SIZES[:5])
            s = self.svm.allocate(size, self.queue)
            cl.enqueue_copy(self.queue, s, np.full(size, seed % 251, np.uint8))
            if rng.random() < 0.5:
                s.enqueue_release(self.queue)
            self.count("svm")
        elif op < 13:
            try:  # under pool_call's small limit, the ladder runs its reclaim callbacks
                a = self.pinned.allocate((rng.choice([1, 10, 1000, 5000]),), np.float32)
            except clpool.OutOfMemoryError:
                self.count("pinned out of memory")
                return
            a[:] = seed
            if rng.random() < 0.5:
                a.base.free()
            self.count("pinned")
        elif op < 17 and mine:
            self.drop(rng, mine.pop(rng.randrange(len(mine))))
        elif op < 18:
            with self.lock:
                buf = self.shared.pop(rng.randrange(len(self.shared))) if self.shared else None
            if buf is not None:
                self.drop(rng, buf)
        else:
            self.pool_call(rng)
        if len(mine) > 12:
            self.drop(rng, mine.pop(0))

    def pool_call(self, rng):
        pool = rng.choice(self.pools + [self.pinned] + ([self.svm] if self.svm else []))
        call = rng.randrange(8)
        if call == 0:
            pool.free_held()
        elif call == 1:
            pool.trim(rng.choice([0, 1 << 20]))
        elif call == 2:
            pool.set_trim(
                max_held_bytes=rng.choice([None, 1 << 20, 8 << 20]),
                ratio=rng.choice([None, 0.5, 2.0]),
            )
        elif call == 3:
            small = [16 << 10] if pool is self.pinned else []  # the pinned pool's ladder runs
            try:
                pool.set_limit(rng.choice([None, 64 << 20, 256 << 20] + small))
            except ValueError:  # live allocations above the new limit
                pass
        elif call == 4:
            pool.statistics()
        elif call == 7:
            # A callback that removes itself when called, held by the pool alone (no weak
            # reference to it): PinnedPool runs it without the GIL, and the pool's copy is its
            # last owner (clpool's fix: released under the GIL; before, Python aborted).
            cb = _SelfRemover(pool)
            cb.id = pool.add_reclaim_callback(cb)
        elif call == 5 and pool in self.pools:
            path = os.path.join(self.trace_dir, f"t{threading.get_ident()}.trace")
            if os.path.exists(path):
                os.unlink(path)
            try:
                pool.record_trace(path)
            except (FileExistsError, RuntimeError):
                pass
        else:
            try:
                pool.stop_trace()
            except RuntimeError:
                pass
        self.count(f"pool call {call}")

    def collector(self):
        while not self.stop.is_set():
            gc.collect()
            time.sleep(0.001)


class _SelfRemover:
    __slots__ = ("pool", "id")

    def __init__(self, pool):
        # Weakly: the pool holds this callback strongly, a cycle through C++ the collector
        # cannot see (the pool, its context and its queue would never be freed).
        self.pool = weakref.ref(pool)

    def __call__(self, needed):
        pool = self.pool()
        if pool is not None:
            pool.remove_reclaim_callback(self.id)

    def __del__(self):
        pass  # Python code run when the last reference goes: needs the GIL


def orphaned_pool():
    """A pool whose context and queue the program no longer references."""
    ctx, queue = cltest.context_and_queue()
    return cp.MemoryPool(cp.ImmediateAllocator(queue)), queue


class StressTest(unittest.TestCase):
    def test_threads_gc_and_every_way_to_drop(self):
        print(
            f"stress: seed {SEED}, {SECONDS} s, {THREADS} threads, mode {cltest.MODE}, "
            f"operations {','.join(k for k in OP_KINDS if k in OPS)}"
        )
        rng = random.Random(SEED)
        old_threshold = gc.get_threshold()
        ctx, queue = cltest.context_and_queue()
        s = Stress(ctx, queue)
        threads = [
            threading.Thread(target=s.worker, args=(rng.randrange(1 << 30),))
            for _ in range(THREADS)
        ]
        threads.append(threading.Thread(target=s.collector))
        deadline = time.monotonic() + SECONDS
        for t in threads:
            t.start()
        try:
            while time.monotonic() < deadline and not s.errors:
                gc.set_threshold(
                    rng.choice([1, 10, 50, 700]), rng.choice([1, 10]), rng.choice([1, 10])
                )
                time.sleep(0.05)
        finally:
            s.stop.set()
            for t in threads:
                t.join()
            gc.set_threshold(*old_threshold)
        self.assertEqual(s.errors, [])
        s.shared.clear()
        gc.collect()
        for pool in s.pools + [s.pinned] + ([s.svm] if s.svm else []):
            self.assertEqual(pool.active_blocks, 0, pool)
            try:
                pool.stop_trace()
            except RuntimeError:
                pass
        print("stress: operations", dict(sorted(s.counts.items())))
        if "buffers" in OPS:  # it did something (fewer threads and seconds do less)
            self.assertGreater(s.counts.get("buffer", 0), min(100, 10 * THREADS * SECONDS))
        for pool in s.pools:
            pool.free_held()
        self.assertEqual(cp._core.pooled_buffer_objects(), 0)

    def test_bad_settings_are_refused_with_what_they_want(self):
        for env, read, want in [
            ({"CLPOOL_STRESS_THREADS": "0"}, _threads, "want a whole number from 1 to 64"),
            ({"CLPOOL_STRESS_THREADS": "65"}, _threads, "want a whole number from 1 to 64"),
            ({"CLPOOL_STRESS_THREADS": "two"}, _threads, "'two': want a whole number"),
            ({"CLPOOL_STRESS_OPS": "svm,bogus"}, _ops, "(unknown: bogus)"),
            ({"CLPOOL_STRESS_OPS": " , "}, _ops, "want a comma list of buffers, svm, pinned"),
        ]:
            with self.subTest(env=env), mock.patch.dict(os.environ, env):
                with self.assertRaises(ValueError) as caught:
                    read()
                self.assertIn(want, str(caught.exception))
        with mock.patch.dict(
            os.environ, {"CLPOOL_STRESS_OPS": "svm, pinned", "CLPOOL_STRESS_THREADS": "3"}
        ):
            self.assertEqual(_ops(), {"svm", "pinned"})
            self.assertEqual(_threads(), 3)

    def test_pool_outlives_context_and_queue(self):
        pool, queue = orphaned_pool()
        bufs = [pool.allocate(4096) for _ in range(4)]
        for i, b in enumerate(bufs):
            host = np.full(4096, i, np.uint8)
            cl.enqueue_copy(queue, b, host)
        del queue
        gc.collect()
        del bufs
        b = pool.allocate(4096)  # a hit, after everything but the pool is gone
        self.assertEqual(pool.statistics()["hits"], 1)
        del b
        pool.free_held()
        self.assertEqual(pool.managed_bytes, 0)

    def test_svm_and_pinned_pools_outlive_their_context_and_queue(self):
        ctx, queue = cltest.context_and_queue()
        pinned = clpool.PageLockedMemoryPool(queue)
        svm = None
        if ctx.devices[0].svm_capabilities:
            svm = cp.SVMPool(cp.SVMAllocator(ctx, queue=queue))
        del ctx, queue
        gc.collect()
        a = pinned.allocate((1000,), np.float32)
        a[:] = 7
        self.assertTrue((a == 7).all())
        del a
        if svm is not None:
            s = svm.allocate(4096)
            s.release()
            self.assertEqual(svm.held_blocks, 1)
        del pinned, svm  # and their blocks, with their queue and context, go last
        gc.collect()

    def test_svm_blocks_and_arrays_outlive_their_pool(self):
        ctx, queue = cltest.context_and_queue()
        pinned = clpool.PageLockedMemoryPool(queue)
        arrays = [pinned.allocate((n,), np.int32) for n in (1, 100, 10000)]
        blocks = []
        if ctx.devices[0].svm_capabilities:
            svm = cp.SVMPool(cp.SVMAllocator(ctx, queue=queue))
            blocks = [svm.allocate(4096, queue) for _ in range(3)]
            del svm
        del pinned
        gc.collect()
        for i, a in enumerate(arrays):
            a[:] = i
            self.assertTrue((a == i).all())
        for b in blocks:
            cl.enqueue_copy(queue, b, np.ones(4096, np.uint8))
        queue.finish()
        arrays[0].base.free()  # straight back to the device: the pool is gone
        del arrays, blocks, a
        gc.collect()

    def test_buffers_outlive_their_pool(self):
        ctx, queue = cltest.context_and_queue()
        pool = cp.MemoryPool(cp.ImmediateAllocator(queue))
        keep = [pool.allocate(size) for size in (100, 4096, 1 << 20)]
        spare = pool.allocate(4096)
        del spare  # held by the pool when it goes
        del pool
        gc.collect()
        for i, b in enumerate(keep):
            host = np.full(64, i + 1, np.uint8)
            cl.enqueue_copy(queue, b, host)
            back = np.empty(64, np.uint8)
            cl.enqueue_copy(queue, back, b)
            queue.finish()
            self.assertTrue((back == i + 1).all())
        keep[0].release()  # straight back to the device: the pool is gone
        del keep, b
        gc.collect()
        self.assertEqual(cp._core.pooled_buffer_objects(), 0)


if __name__ == "__main__":
    unittest.main()
