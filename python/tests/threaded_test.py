"""Python threads sharing one pool: every request is one hit or one miss, nothing leaks, and the
counters agree at the end (the pool releases the GIL around allocator calls)."""
import random
import threading
import unittest

import clpool
import clpool.pyopencl
import cltest

THREADS = 8
ROUNDS = 300
SIZES = [1000, 4096, 65536, 300000, 1 << 20]


class ThreadedTest(unittest.TestCase):
    def run_threads(self, pool):
        errors = []

        def worker(seed):
            rng = random.Random(seed)
            kept = []
            try:
                for _ in range(ROUNDS):
                    kept.append(pool.allocate(rng.choice(SIZES)))
                    if len(kept) > 4 or rng.random() < 0.5:
                        clpool.pyopencl.release(kept.pop(rng.randrange(len(kept))))
                    if rng.random() < 0.02:
                        pool.statistics()
                kept.clear()
            except Exception as e:  # reported below, in the main thread
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_shared_pool(self):
        ctx, queue = cltest.context_and_queue()
        pool = clpool.pyopencl.MemoryPool(clpool.pyopencl.ImmediateAllocator(queue))
        self.run_threads(pool)
        stats = pool.statistics()
        self.assertEqual(stats["hits"] + stats["misses"], THREADS * ROUNDS)
        self.assertEqual(pool.active_blocks, 0)
        self.assertEqual(pool.active_bytes, 0)
        self.assertEqual(pool.managed_bytes, pool.held_bytes)
        self.assertGreater(stats["hits"], stats["misses"])
        pool.free_held()
        self.assertEqual(pool.total_bytes(), 0)

    def test_shared_pool_with_trim_and_limit(self):
        ctx, queue = cltest.context_and_queue()
        pool = clpool.pyopencl.MemoryPool(clpool.pyopencl.ImmediateAllocator(queue))
        pool.set_trim(max_held_bytes=2 << 20)
        pool.set_limit(48 << 20)  # 8 threads x 5 blocks x 1.06 MiB fit
        self.run_threads(pool)
        self.assertEqual(pool.active_blocks, 0)
        self.assertLessEqual(pool.held_bytes, 2 << 20)
        self.assertLessEqual(pool.statistics()["peak_managed_bytes"], 48 << 20)


if __name__ == "__main__":
    unittest.main()
