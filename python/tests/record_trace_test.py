"""pool.record_trace(path): the project's rule for outputs (only an empty file or a trace
record_trace wrote is replaced), and a file that is complete after stop_trace(), a `with` block
or the interpreter's exit, and readable after a crash."""
import gc
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import unittest

import clpool.pyopencl as cp
import cltest

HEADER = "clpool-trace 2\n# source: record_trace\n"


def events(path):
    with open(path) as f:
        return [line.split()[4] for line in f if line[0].isdigit()]


class RecordTraceTest(unittest.TestCase):
    def setUp(self):
        self.ctx, self.queue = cltest.context_and_queue()
        self.pool = cp.MemoryPool(cp.ImmediateAllocator(self.queue))
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "app.trace")

    def test_other_files_are_never_replaced(self):
        cases = {
            "script.py": "print('hello')\n",
            "layer.trace": "clpool-trace 1\n# source: layer\n",
            "binary": "\0\1\2",
        }
        for name, content in cases.items():
            path = os.path.join(self.dir, name)
            with open(path, "w") as f:
                f.write(content)
            with self.subTest(name=name), self.assertRaises(FileExistsError):
                self.pool.record_trace(path)
            with open(path) as f:
                self.assertEqual(f.read(), content)
        with self.assertRaises(IsADirectoryError):
            self.pool.record_trace(self.dir)
        with self.assertRaises(FileNotFoundError):
            self.pool.record_trace(os.path.join(self.dir, "no", "such", "dir.trace"))
        with self.assertRaises(TypeError):
            self.pool.record_trace(42)
        with self.assertRaises(ValueError):
            self.pool.record_trace("")
        self.assertEqual(self.pool.stop_trace(), 0)  # nothing was started

    def test_a_device_or_fifo_is_written_as_it_is(self):
        with self.pool.record_trace("/dev/null"):
            b = self.pool.allocate(4096)
            del b
        self.assertGreater(self.pool.stop_trace(), -1)

    def test_a_second_recording_is_refused_and_the_first_kept(self):
        other = os.path.join(self.dir, "other.trace")
        with self.pool.record_trace(self.path):
            b = self.pool.allocate(4096)
            with self.assertRaises(RuntimeError) as caught:
                self.pool.record_trace(other)
            self.assertIn("already recording", str(caught.exception))
            del b
        self.assertFalse(os.path.exists(other))
        with open(self.path) as f:
            events = [line.split()[4] for line in f if line[0].isdigit()]
        self.assertIn("alloc", events)
        self.assertIn("free", events)

    def test_empty_files_and_its_own_traces_are_replaced(self):
        open(self.path, "w").close()
        with self.pool.record_trace(self.path):
            b = self.pool.allocate(4096)
            del b
        self.assertEqual(events(self.path), ["alloc", "free"])
        with self.pool.record_trace(self.path):  # its own trace: replaced
            b = self.pool.allocate(100)
        self.assertEqual(events(self.path), ["alloc"])
        with open(self.path) as f:
            self.assertTrue(f.read().startswith(HEADER))
        del b

    def test_each_allocation_carries_its_python_stack(self):
        def fill_cache(cache, n):
            cache.append(self.pool.allocate(n))  # the frame the trace names

        cache = []
        with self.pool.record_trace(self.path):
            fill_cache(cache, 4096)
            fill_cache(cache, 8192)
        frames, stacks, allocs = {}, {}, []
        with open(self.path) as f:
            for line in f:
                w = line.split()
                if w[0] == "frame":
                    frames[int(w[1])] = (w[2], int(w[3]), w[4], w[5])
                elif w[0] == "stack":
                    stacks[int(w[1])] = (int(w[2]), int(w[3]))
                elif w[0].isdigit() and w[4] == "alloc":
                    allocs.append(int(w[9]))
        self.assertEqual(len(allocs), 2)
        for stack in allocs:
            parent, frame = stacks[stack]
            self.assertEqual(frames[frame][0], "py")
            self.assertTrue(frames[frame][3].endswith("fill_cache"), frames[frame])
            self.assertTrue(frames[frame][2].endswith("record_trace_test.py"), frames[frame])
            self.assertTrue(
                frames[stacks[parent][1]][3].endswith(
                    "test_each_allocation_carries_its_python_stack"
                )
            )
        self.assertEqual(stacks[allocs[0]][1], stacks[allocs[1]][1])  # the same line of fill_cache
        del cache

    def test_with_block_ends_only_its_own_recording(self):
        first = self.pool.record_trace(self.path)
        self.pool.stop_trace()
        other = os.path.join(self.dir, "other.trace")
        with self.pool.record_trace(other):
            first.stop()  # no longer the pool's recording: no effect
            b = self.pool.allocate(4096)
        self.assertEqual(events(other), ["alloc"])
        self.assertEqual(events(self.path), [])
        del b

    def replay_accepts(self, path):
        replay = os.environ.get("CLPOOL_REPLAY")
        self.assertTrue(replay, "the test runs with CLPOOL_REPLAY (run_py_test.sh)")
        run = subprocess.run(
            [replay, path, "--capacity", "1GiB", "--no-progress"], capture_output=True, text=True
        )
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)

    def check_started_while_live(self, allocate):
        """python/README: a free of an allocation made before recording is not in the trace, and
        clpool_replay replays what is."""
        before = [allocate(100), allocate(5000)]
        with self.pool.record_trace(self.path):
            during = allocate(300)
            del before[0]  # allocated before the trace: its free is left out
            gc.collect()
            kept = allocate(700)
            del during
            gc.collect()
        self.assertEqual(events(self.path), ["alloc", "alloc", "free"])
        self.replay_accepts(self.path)
        with self.pool.record_trace(self.path):  # and a trace of frees of earlier blocks only
            del before[:]
            del kept
            gc.collect()
        self.assertEqual(events(self.path), [])
        self.replay_accepts(self.path)

    def test_started_while_buffers_are_live(self):
        self.check_started_while_live(self.pool.allocate)

    def test_started_while_svm_is_live(self):
        if not self.ctx.devices[0].svm_capabilities:
            self.skipTest("no SVM")
        self.pool = cp.SVMPool(cp.SVMAllocator(self.ctx, queue=self.queue))
        self.check_started_while_live(lambda n: self.pool.allocate(n, self.queue))

    def run_child(self, body):
        code = (
            textwrap.dedent(
                f"""
            import os, sys, time, signal
            sys.path[:0] = {sys.path[:3]!r}
            import cltest, clpool.pyopencl as cp
            ctx, queue = cltest.context_and_queue()
            pool = cp.MemoryPool(cp.ImmediateAllocator(queue))
            pool.record_trace({self.path!r})
            bufs = [pool.allocate(4096 * (i + 1)) for i in range(5)]
            del bufs[0]
        """
            )
            + textwrap.dedent(body)
        )
        return subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        )

    def test_complete_at_exit(self):
        r = self.run_child("")  # never calls stop_trace
        self.assertEqual(r.returncode, 0, r.stderr)
        # Finished at exit, before the interpreter frees what is still alive: those four
        # buffers stay live in the trace, as the program left them.
        self.assertEqual(events(self.path), ["alloc"] * 5 + ["free"])

    def test_readable_after_a_crash(self):
        r = self.run_child(
            """
            time.sleep(0.3)                   # longer than the flush interval
            pool.allocate(1 << 20)            # the flush happens with this event
            os.kill(os.getpid(), signal.SIGKILL)
        """
        )
        self.assertEqual(r.returncode, -signal.SIGKILL)
        got = events(self.path)
        self.assertGreaterEqual(len(got), 6)  # everything up to the flush
        self.assertEqual(got[:6], ["alloc"] * 5 + ["free"])
        replay = os.environ.get("CLPOOL_REPLAY")
        if replay:
            run = subprocess.run(
                [replay, self.path, "--capacity", "1GiB", "--no-progress"],
                capture_output=True,
                text=True,
            )
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)


if __name__ == "__main__":
    unittest.main()
