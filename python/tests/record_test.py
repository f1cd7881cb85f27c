"""clpool.record on POCL: sizes as requested, frees when the application drops a buffer, the trace
replays with clpool_replay, and bad arguments are refused."""
import gc
import os
import subprocess
import sys
import tempfile
import threading
import unittest
import warnings

import pyopencl as cl
import pyopencl.tools as cl_tools

import cltest
import clpool.record

MiB = cltest.MiB


def events(path):
    """The trace's event lines as (action, id, size, kind)."""
    with open(path) as f:
        lines = f.read().splitlines()
    assert lines[0] in ("clpool-trace 1", "clpool-trace 2"), lines[0]
    out = []
    for line in lines[1:]:
        if line.startswith(("#", "frame ", "stack ")):
            continue
        fields = line.split()
        assert len(fields) == (
            10 if fields[4].startswith("alloc") and lines[0][-1] == "2" else 9
        ), line
        out.append((fields[4], int(fields[5]), int(fields[6]), fields[7]))
    return out


class RecordTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctx, cls.queue = cltest.context_and_queue()

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "app.trace")

    def test_pool_sizes_as_requested_and_frees_when_dropped(self):
        pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(self.queue))
        with clpool.record.recording(pool, self.path) as allocator:
            a = allocator(1000)  # the pool rounds it up; the trace keeps 1000
            b = allocator.allocate(3 * MiB)
            self.assertIsInstance(a, cl.MemoryObjectHolder)
            cl.enqueue_fill_buffer(self.queue, a, b"\x01", 0, 1000).wait()
            self.assertEqual(
                events(self.path), [("alloc", 1, 1000, "buffer"), ("alloc", 2, 3 * MiB, "buffer")]
            )
            del a  # back to the pool: an app-level free
            self.assertEqual(events(self.path)[-1], ("alloc", 2, 3 * MiB, "buffer"))
            allocator.flush()  # frees are written before the next event, or now
            self.assertEqual(events(self.path)[-1], ("free", 1, 1000, "buffer"))
            self.assertEqual(pool.held_blocks, 1)  # the pool still holds the memory
            self.assertEqual(allocator.held_blocks, 1)  # attributes of the pool pass through
            allocator.free_held()
            del b
        self.assertEqual(
            events(self.path)[2:],
            [
                ("free", 1, 1000, "buffer"),
                ("free_held", 0, 0, "buffer"),
                ("free", 2, 3 * MiB, "buffer"),
            ],
        )

    def test_a_free_carries_the_time_the_buffer_died(self):
        import time

        with clpool.record.recording(cl_tools.ImmediateAllocator(self.queue), self.path) as rec:
            a = rec(4096)
            del a  # dies now; written at the next event
            time.sleep(0.3)
            b = rec(100)
        with open(self.path) as f:
            lines = [ln.split() for ln in f if ln[0].isdigit()]
        self.assertEqual([ln[4] for ln in lines], ["alloc", "free", "alloc"])
        freed, allocated = int(lines[1][1]), int(lines[2][1])
        self.assertGreater(allocated - freed, 250_000_000)  # ns: the 0.3 s sleep is between
        del b

    def test_plain_allocators_and_threads(self):
        for allocator in (
            cl_tools.ImmediateAllocator(self.queue),
            cl_tools.DeferredAllocator(self.ctx),
        ):
            path = os.path.join(self.dir, type(allocator).__name__ + ".trace")
            rec = clpool.record.recording(allocator, path)
            kept = []
            lock = threading.Lock()

            def work():
                for i in range(50):
                    buf = rec(4096 + i)
                    if i % 5 == 0:
                        with lock:
                            kept.append(buf)

            threads = [threading.Thread(target=work) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            kept.clear()
            gc.collect()
            rec.close()
            ev = events(path)
            self.assertEqual(sum(1 for e in ev if e[0] == "alloc"), 200)
            self.assertEqual(sum(1 for e in ev if e[0] == "free"), 200)
            with open(path) as f:
                seqs = [int(ln.split()[0]) for ln in f if ln[0].isdigit()]
            self.assertEqual(seqs, list(range(400)))

    def test_out_of_memory_is_alloc_failed(self):
        def refusing(size):
            raise cl.MemoryError(
                "clCreateBuffer", cl.status_code.MEM_OBJECT_ALLOCATION_FAILURE, "no memory"
            )

        with clpool.record.recording(refusing, self.path) as rec:
            with self.assertRaises(cl.MemoryError):
                rec(1 << 40)
        self.assertEqual(events(self.path), [("alloc_failed", 0, 1 << 40, "buffer")])

    def test_each_alloc_carries_its_python_stack(self):
        def grow_cache(rec, cache, n):
            cache.append(rec(n))  # the line the trace names

        def refusing(size):
            raise cl.MemoryError(
                "clCreateBuffer", cl.status_code.MEM_OBJECT_ALLOCATION_FAILURE, "no"
            )

        cache = []
        with clpool.record.recording(cl_tools.ImmediateAllocator(self.queue), self.path) as rec:
            grow_cache(rec, cache, 4096)
            grow_cache(rec, cache, 8192)  # the same frames but the caller's line
            other = rec.allocate(100)  # through allocate(): record.py's own frames skipped
        with clpool.record.recording(refusing, os.path.join(self.dir, "f.trace")) as failing:
            with self.assertRaises(cl.MemoryError):
                grow_cache(failing, cache, 1 << 40)
        frames, stacks, allocs = {}, {}, []
        for path in (self.path, os.path.join(self.dir, "f.trace")):
            with open(path) as f:
                text = f.read()
            self.assertTrue(text.startswith("clpool-trace 2\n"))
            frames, stacks = {}, {}
            for line in text.splitlines():
                w = line.split()
                if w[0] == "frame":
                    frames[int(w[1])] = (w[2], int(w[3]), w[4], w[5])
                elif w[0] == "stack":
                    stacks[int(w[1])] = (int(w[2]), int(w[3]))
                elif w[0].isdigit() and w[4].startswith("alloc"):
                    allocs.append((path, int(w[9]), frames.copy(), stacks.copy()))

        def chain(entry):
            _, stack, frames, stacks = entry
            out = []
            while stack:
                parent, frame = stacks[stack]
                out.append(frames[frame])
                stack = parent
            return out

        first, second, third, failed = (chain(a) for a in allocs)
        me = os.path.abspath(__file__)
        self.assertEqual(first[0][0], "py")
        self.assertEqual(
            first[0][3], "RecordTest.test_each_alloc_carries_its_python_stack.<locals>.grow_cache"
        )
        self.assertEqual(os.path.abspath(first[0][2]), me)
        self.assertEqual(first[1][3], "RecordTest.test_each_alloc_carries_its_python_stack")
        self.assertEqual(first[0], second[0])  # the same line in grow_cache
        self.assertEqual(first[1][1] + 1, second[1][1])  # called from the next line
        self.assertEqual(first[2:], second[2:])  # from the same callers
        self.assertEqual(third[0][3], "RecordTest.test_each_alloc_carries_its_python_stack")
        self.assertNotIn("record.py", " ".join(f[2] for f in third))
        self.assertTrue(failed[0][3].endswith("grow_cache"))
        del cache, other

    def test_stacks_false_writes_version_1(self):
        with clpool.record.recording(
            cl_tools.ImmediateAllocator(self.queue), self.path, stacks=False
        ) as rec:
            a = rec(64)
        with open(self.path) as f:
            self.assertEqual(f.readline(), "clpool-trace 1\n")
        self.assertEqual(events(self.path), [("alloc", 1, 64, "buffer")])
        del a

    def test_replays_with_clpool_replay(self):
        replay = os.environ.get("CLPOOL_REPLAY")
        if not replay:
            self.fail("CLPOOL_REPLAY is not set (run through run_py_test.sh)")
        pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(self.queue))
        with clpool.record.recording(pool, self.path) as rec:
            bufs = [rec(MiB + i) for i in range(8)]
            del bufs[::2]
            bufs.append(rec(5 * MiB))
            del bufs
        result = subprocess.run(
            [replay, "--no-progress", self.path, "--capacity", "64MiB", "--profile", "exact"],
            capture_output=True,
            text=True,
        )
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("looks recorded below a pool", result.stderr + result.stdout)

    def test_bad_arguments(self):
        with self.assertRaises(TypeError):
            clpool.record.recording(42, self.path)
        with self.assertRaises(TypeError):
            clpool.record.recording(cl_tools.DeferredAllocator(self.ctx), 3.5)
        with self.assertRaises(ValueError):
            clpool.record.recording(cl_tools.DeferredAllocator(self.ctx), "")
        with self.assertRaises(FileNotFoundError):
            clpool.record.recording(
                cl_tools.DeferredAllocator(self.ctx), os.path.join(self.dir, "no", "such.trace")
            )
        with clpool.record.recording(cl_tools.DeferredAllocator(self.ctx), self.path) as rec:
            with self.assertRaises(TypeError):
                rec(1.5)
            with self.assertRaisesRegex(TypeError, "size must be an int, not bool"):
                rec(True)
            for bad in (-1, 2**64, 2**70):
                with self.assertRaisesRegex(ValueError, "is not a byte count"):
                    rec(bad)
        self.assertEqual(events(self.path), [])

    def test_an_allocation_after_close_warns_once_and_is_not_recorded(self):
        rec = clpool.record.recording(cl_tools.DeferredAllocator(self.ctx), self.path)
        kept = rec(4096)
        rec.close()
        rec.close()  # a second close does nothing
        with self.assertWarnsRegex(RuntimeWarning, "was closed; this allocation and later ones"):
            late = rec(8192)
        self.assertIsNotNone(late)  # the allocator still answers
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            rec(8192)  # once only
        self.assertEqual(events(self.path), [("alloc", 1, 4096, "buffer")])
        del kept, late

    def test_how_a_death_is_seen_follows_the_binding_seam(self):
        # clpool.record asks the seam (clpool._core.binding_of) how a buffer tells its death,
        # rather than deciding by trial; CLPOOL_PYTHON_BINDING=generic governs it as it governs
        # the pools.
        import weakref

        import clpool._core

        kind, detail, signal = clpool._core.binding_of(cl.Buffer)
        if os.environ.get("CLPOOL_PYTHON_BINDING") == "generic":
            self.assertEqual(kind, "generic")
            self.assertIn("CLPOOL_PYTHON_BINDING", detail)
        self.assertEqual(signal, "attribute" if cl.VERSION >= (2024, 2) else "weakref")
        with clpool.record.recording(cl_tools.ImmediateAllocator(self.queue), self.path) as rec:
            b = rec(4096)
            self.assertIsInstance(b, cl.Buffer)
            sentinel = hasattr(b, clpool.record.SENTINEL_ATTRIBUTE)
            self.assertEqual(sentinel, signal == "attribute")
            if signal == "weakref":
                self.assertEqual(weakref.getweakrefcount(b), 1)
            del b
            rec.flush()
            self.assertEqual(events(self.path)[-1], ("free", 1, 4096, "buffer"))

    def test_bad_binding_setting_is_refused_before_any_file(self):
        code = (
            "import sys, clpool.record\n"
            "clpool.record.recording(lambda size: None, sys.argv[1])\n"
        )
        r = subprocess.run(
            [sys.executable, "-c", code, self.path],
            env=dict(os.environ, CLPOOL_PYTHON_BINDING="fast"),
            capture_output=True,
            text=True,
            timeout=120,
        )
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ValueError: CLPOOL_PYTHON_BINDING=fast", r.stderr)
        self.assertFalse(os.path.exists(self.path))

    def test_existing_file_that_is_not_its_trace_is_refused(self):
        for content in ("a,b,c\n", "clpool-trace 1\n# source: layer\n"):
            other = os.path.join(self.dir, "other.csv")
            with open(other, "w") as f:
                f.write(content)
            with self.assertRaises(FileExistsError):
                clpool.record.recording(cl_tools.DeferredAllocator(self.ctx), other)
            with open(other) as f:
                self.assertEqual(f.read(), content)
        # Its own earlier trace is replaced.
        for _ in range(2):
            with clpool.record.recording(cl_tools.DeferredAllocator(self.ctx), self.path) as rec:
                rec(64)
            self.assertEqual(
                events(self.path), [("alloc", 1, 64, "buffer"), ("free", 1, 64, "buffer")]
            )

    def test_frame_names_in_the_trace_modules_form(self):
        # A file and a function whose names hold a blank, '#', '%' and a non-ASCII letter: written
        # as the trace module escapes them (FORMAT.md: blanks, '#' and '%' as %XX), read back whole.
        src = "def make(rec):\n    return rec(4096)\n"
        space = {}
        exec(compile(src, "/tmp/my dir/#odd%é.py", "exec"), space)
        with clpool.record.recording(cl_tools.ImmediateAllocator(self.queue), self.path) as rec:
            a = space["make"](rec)
        with open(self.path, encoding="utf-8") as f:
            frames = [ln.split() for ln in f if ln.startswith("frame ")]
        self.assertIn(["py", "2", "/tmp/my%20dir/%23odd%25é.py", "make"], [f[2:] for f in frames])
        # Replayed where it cannot fit, the failing request's site is named with the names as given.
        result = subprocess.run(
            [
                os.environ["CLPOOL_REPLAY"],
                "--no-progress",
                self.path,
                "--capacity",
                "1KiB",
                "--profile",
                "exact",
            ],
            capture_output=True,
            text=True,
        )
        self.assertIn(
            "make (/tmp/my dir/#odd%é.py:2)", result.stdout, result.stdout + result.stderr
        )
        del a

    def test_a_failed_write_raises(self):
        # The header is written at once: a full device fails the call, naming the path.
        with self.assertRaisesRegex(RuntimeError, r'clpool\.record\("/dev/full"\): .*failed'):
            clpool.record.recording(cl_tools.ImmediateAllocator(self.queue), "/dev/full")


if __name__ == "__main__":
    unittest.main()
