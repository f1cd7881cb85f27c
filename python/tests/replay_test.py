"""clpool.replay: the replay engine in-process returns what clpool_replay --json prints, on a
capacity that fits and on one that runs out, with the minimum-capacity search, and refuses bad
values as the command line does; clpool.replay.diff returns what clpool_replay --diff --format json
prints, and refuses bad values likewise."""
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

import clpool.replay

MiB = 1 << 20

# The two traces' header and sites: main calls Cache.keep (stack 2) and scratch (stack 3).
SITES = (
    "clpool-trace 2\n"
    "frame 1 py 40 app.py main\n"
    "stack 1 0 1\n"
    "frame 2 py 12 app.py Cache.keep\n"
    "stack 2 1 2\n"
    "frame 3 py 20 app.py scratch\n"
    "stack 3 1 3\n"
)

# A version-2 trace: a cache that keeps 3 MiB blocks (site Cache.keep) and a scratch buffer.
TRACE = SITES + (
    "0 0 0 0 alloc 1 3145728 buffer 0 2\n"
    "1 0 0 0 alloc 2 1048576 buffer 0 3\n"
    "2 0 0 0 free 2 0 buffer 0\n"
    "3 0 0 0 alloc 3 3145728 buffer 0 2\n"
    "4 0 0 0 alloc 4 3145728 buffer 0 2\n"
    "5 0 0 0 alloc 5 2097152 buffer 0 3\n"
)

# TRACE before a change: its cache kept two blocks, not three (Cache.keep's 6 MiB became 9 MiB).
OLD_TRACE = SITES + (
    "0 0 0 0 alloc 1 3145728 buffer 0 2\n"
    "1 0 0 0 alloc 2 1048576 buffer 0 3\n"
    "2 0 0 0 free 2 0 buffer 0\n"
    "3 0 0 0 alloc 3 3145728 buffer 0 2\n"
    "4 0 0 0 alloc 5 2097152 buffer 0 3\n"
)


class ReplayTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        cls.trace = os.path.join(cls.dir, "app.trace")
        with open(cls.trace, "w") as f:
            f.write(TRACE)

    def cli(self, *args):
        binary = os.environ.get("CLPOOL_REPLAY")
        if not binary:
            self.skipTest("CLPOOL_REPLAY (clpool_replay) not given")
        run = subprocess.run(
            [binary, self.trace, "--no-progress", "--json", *args], capture_output=True, text=True
        )
        self.assertIn(run.returncode, (0, 1), run.stderr)
        document = json.loads(run.stdout)
        self.assertEqual(document["exit_code"], run.returncode)
        return document

    def test_a_capacity_that_fits(self):
        result = clpool.replay(self.trace, capacity="64MiB")
        self.assertEqual(result["exit_code"], 0)
        (only,) = result["results"]
        self.assertEqual(only["config"], "pool:lb=4")
        replay = only["replay"]
        self.assertTrue(replay["ok"])
        self.assertIsNone(replay["oom"])
        self.assertEqual(replay["device"], "sim")
        self.assertEqual(replay["capacity"], 64 * MiB)
        self.assertEqual(replay["profile"], "nvidia")
        self.assertEqual(replay["semantics"], "deferred")
        self.assertEqual(replay["events"], 6)
        self.assertIsNone(only["min_capacity"])
        self.assertEqual(result, self.cli("--capacity", "64MiB"))

    def test_a_capacity_that_runs_out(self):
        result = clpool.replay(self.trace, capacity=18 * MiB)
        self.assertEqual(result["exit_code"], 1)
        replay = result["results"][0]["replay"]
        self.assertFalse(replay["ok"])
        oom = replay["oom"]
        self.assertEqual(oom["event_index"], 5)
        self.assertEqual(oom["requested_bytes"], 2 * MiB)
        self.assertEqual(oom["cause"], "deferred allocation failed at first use")
        self.assertEqual(oom["site"], "scratch (app.py:20)")
        self.assertEqual(oom["live_sites"][0]["site"], "Cache.keep (app.py:12)")
        self.assertEqual(oom["live_sites"][0]["requested_bytes"], 9 * MiB)
        self.assertEqual(result, self.cli("--capacity", "18MiB"))

    def test_the_same_document_as_the_command_line(self):
        for kwargs, args in [
            (dict(capacity="12MiB", config="nopool"), ["--capacity", "12MiB", "--no-pool"]),
            (
                dict(capacity="12MiB", profile="exact", semantics="immediate"),
                ["--capacity", "12MiB", "--profile", "exact", "--semantics", "immediate"],
            ),
            (
                dict(min_capacity=True, compare=["nopool", "pool:lb=2,trim-ratio=0.5"]),
                ["--min-capacity", "--compare", "nopool", "pool:lb=2,trim-ratio=0.5"],
            ),
            (
                dict(capacity="10MiB", min_capacity=True, granule="256KiB"),
                ["--capacity", "10MiB", "--min-capacity", "--granule", "256KiB"],
            ),
            (
                dict(capacity="64MiB", profile="exact", max_alloc="2MiB"),
                ["--capacity", "64MiB", "--profile", "exact", "--max-alloc", "2MiB"],
            ),
        ]:
            with self.subTest(kwargs=kwargs):
                self.assertEqual(clpool.replay(self.trace, **kwargs), self.cli(*args))

    def test_the_minimum_capacity(self):
        result = clpool.replay(self.trace, min_capacity=True, config="nopool", profile="exact")
        search = result["results"][0]["min_capacity"]
        self.assertTrue(search["found"])
        self.assertEqual(search["capacity"], 11 * MiB)  # 3 x 3 MiB + 2 MiB live at the end
        self.assertIsNone(result["results"][0]["replay"])

    def test_a_request_above_the_maximum_allocation(self):
        """Where the profile enforces the maximum allocation, a 3 MiB request above 2 MiB is
        refused for its size, and no capacity helps; nvidia's is not enforced."""
        result = clpool.replay(self.trace, capacity="64MiB", profile="pocl", max_alloc=2 * MiB)
        replay = result["results"][0]["replay"]
        self.assertEqual(replay["max_alloc"], 2 * MiB)
        self.assertEqual(replay["oom"]["event_index"], 0)
        self.assertTrue(replay["oom"]["refused_for_size"])
        self.assertEqual(replay["oom"]["cause"], "above the device's maximum allocation")
        search = clpool.replay(self.trace, min_capacity=True, profile="pocl", max_alloc="2MiB")
        self.assertIn("no capacity changes", search["results"][0]["min_capacity"]["why_not"])
        nvidia = clpool.replay(self.trace, capacity="64MiB", max_alloc="2MiB")
        self.assertTrue(nvidia["results"][0]["replay"]["ok"])
        self.assertIsNone(
            clpool.replay(self.trace, capacity="64MiB")["results"][0]["replay"]["max_alloc"]
        )
        # A diff whose new trace is refused for its size stops there: the gate says so.
        growth = clpool.replay.diff(
            self.trace, self.trace, profile="pocl", max_alloc="2MiB", max_growth="5%"
        )
        self.assertFalse(growth["passed"])
        self.assertIn("max alloc 2 MiB", growth["device"])
        self.assertEqual(growth["configurations"][0]["new"]["refused_for_size_at_event"], 0)
        self.assertIn("above the device's maximum allocation", growth["exceeded"][0])
        fits = clpool.replay.diff(
            self.trace, self.trace, profile="pocl", max_alloc="4MiB", max_growth="5%"
        )
        self.assertTrue(fits["passed"])
        self.assertIsNone(fits["configurations"][0]["new"]["refused_for_size_at_event"])

    def test_bad_values_are_refused_as_the_command_line_refuses_them(self):
        for kwargs, message in [
            (dict(capacity="8GB"), "capacity: '8GB' is ambiguous"),
            (dict(capacity=0), "capacity: must be positive"),
            (dict(), "capacity is required"),
            (dict(capacity="1GiB", config="pool:lb=13"), "lb '13' must be a whole number"),
            (dict(capacity="1GiB", profile="no-such-profile"), "no-such-profile"),
            (dict(capacity="1GiB", semantics="lazy"), "semantics: 'lazy'"),
            (dict(capacity="1MiB"), "headroom"),
        ]:
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(ValueError) as raised:
                    clpool.replay(self.trace, **kwargs)
                self.assertIn(message, str(raised.exception))
        with self.assertRaises(ValueError) as raised:
            clpool.replay(os.path.join(self.dir, "missing.trace"), capacity="1GiB")
        self.assertIn("missing.trace", str(raised.exception))
        with self.assertRaises(TypeError):
            clpool.replay(self.trace, capacity=1.5)
        with self.assertRaises(ValueError):
            clpool.replay(self.trace, capacity="1GiB", config="nopool", compare=["pool"])

    def test_a_malformed_trace_names_its_line(self):
        bad = os.path.join(self.dir, "bad.trace")
        with open(bad, "w") as f:
            f.write("clpool-trace 1\n0 0 0 0 alloc 1 4096 buffer 0\n1 0 0 0 free 7 0 buffer 0\n")
        with self.assertRaises(ValueError) as raised:
            clpool.replay(bad, capacity="1GiB")
        self.assertIn("bad.trace", str(raised.exception))
        self.assertIn("bad.trace:3: free of id 7", str(raised.exception))

    def test_frees_at_on_a_trace_with_both_moments_of_a_free(self):
        # Version 3: the program releases each 2 MiB block before the next; the driver freed them
        # all at the end (FORMAT.md "Two moments of a free").
        v3 = os.path.join(self.dir, "v3.trace")
        with open(v3, "w") as f:
            f.write(
                "clpool-trace 3\n0 0 0 0 alloc 1 2097152 buffer 0\n1 0 0 0 release 1 2097152 buffer 0\n"
                "2 0 0 0 alloc 2 2097152 buffer 0\n3 0 0 0 release 2 2097152 buffer 0\n"
                "4 0 0 0 free 1 2097152 buffer 0\n5 0 0 0 free 2 2097152 buffer 0\n"
            )
        peaks = {}
        for frees_at in ("release", "driver", None):
            result = clpool.replay(
                v3, capacity="64MiB", config="nopool", profile="exact", frees_at=frees_at
            )
            replay = result["results"][0]["replay"]
            peaks[frees_at] = replay["peak_active_bytes"]
            self.assertEqual(replay["frees_at"]["moment"], frees_at or "release")
            self.assertEqual(replay["frees_at"]["given"], frees_at is not None)
        self.assertEqual(peaks, {"release": 2 * MiB, "driver": 4 * MiB, None: 2 * MiB})
        with self.assertRaises(ValueError) as raised:
            clpool.replay(v3, capacity="64MiB", frees_at="later")
        self.assertIn("frees_at: 'later'", str(raised.exception))

    def test_first_uses_commit_where_a_version_4_trace_says(self):
        # Version 4 (FORMAT.md "First uses"): two 40 MiB buffers, the first dropped before the
        # second's first use: never committed at once on a device that commits at first use.
        v4 = os.path.join(self.dir, "v4.trace")
        events = (
            "0 0 0 0 alloc 1 41943040 buffer 0\n1 0 0 0 use 1 41943040 buffer 0\n"
            "2 0 0 0 alloc 2 41943040 buffer 0\n3 0 0 0 free 1 41943040 buffer 0\n"
            "4 0 0 0 use 2 41943040 buffer 0\n5 0 0 0 free 2 41943040 buffer 0\n"
        )
        with open(v4, "w") as f:
            f.write("clpool-trace 4\n# first_uses: buffer\n" + events)
        result = clpool.replay(v4, capacity="64MiB", config="nopool")
        replay = result["results"][0]["replay"]
        self.assertIsNone(replay["oom"])
        self.assertEqual(
            replay["first_uses"], {"kinds": "buffer", "use_events": 2, "use_events_in_trace": 2}
        )
        self.assertEqual(replay["peak_device_bytes"], 40 * MiB)
        # Without the comment the same events count each buffer from its creation.
        bare = os.path.join(self.dir, "v4_bare.trace")
        with open(bare, "w") as f:
            f.write("clpool-trace 4\n" + events)
        replay = clpool.replay(bare, capacity="64MiB", config="nopool")["results"][0]["replay"]
        self.assertEqual(replay["oom"]["action"], "alloc")
        self.assertNotIn("first_uses", replay)

    def test_paths_the_tools_refuse_are_refused_before_opening(self):
        """A NUL in the path (it used to open the part before it), a directory, a FIFO (it used to
        wait forever for a writer) and a socket: ValueError in clpool_replay's words, at once; a
        device is read and judged by what it holds, as clpool_replay judges it."""
        fifo = os.path.join(self.dir, "fifo.trace")
        os.mkfifo(fifo)
        sock_path = os.path.join(self.dir, "sock.trace")
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(sock_path)
        self.addCleanup(sock.close)
        for path, message in [
            (self.trace + "\0.old", "trace: '%s\\x00.old' holds a NUL byte" % self.trace),
            (self.dir, "trace: '%s' is a directory, not a trace" % self.dir),
            (fifo, "trace: '%s' is a FIFO (a named pipe): it can be read only once" % fifo),
            (sock_path, "trace: '%s' is a socket" % sock_path),
            ("/dev/zero", "/dev/zero:1: not a clpool trace: it starts with NUL bytes"),
            ("/dev/null", "/dev/null:1: empty: no header"),
            # Standard input to the command line; the replay reads the trace more than once (it
            # said "<stdin>:1: empty: no header" of a valid trace on stdin).
            ("-", "trace: the trace is read more than once; give a file, not '-'"),
        ]:
            with self.subTest(path=path):
                start = time.monotonic()
                with self.assertRaises(ValueError) as raised:
                    clpool.replay(path, capacity="1GiB")
                self.assertIn(message, str(raised.exception))
                self.assertLess(time.monotonic() - start, 5)
                if os.path.exists(path) and not os.path.isdir(path) and path.startswith(self.dir):
                    cli = subprocess.run(
                        [os.environ["CLPOOL_REPLAY"], path, "--capacity", "1GiB"],
                        capture_output=True,
                        text=True,
                        timeout=60,
                    )
                    self.assertEqual(cli.returncode, 2, cli.stderr)
                    self.assertIn(message.split("' ", 1)[1], cli.stderr)
        with self.assertRaises(ValueError) as raised:
            clpool.replay(self.trace, capacity="1GiB", profile="nvidia\0")
        self.assertIn("profile: 'nvidia\\x00' holds a NUL byte", str(raised.exception))
        self.assertEqual(
            clpool.replay(os.fsencode(self.trace), capacity="64MiB")["exit_code"], 0
        )  # bytes: a path

    def test_wrong_types_and_out_of_range_values_are_errors_in_clpools_words(self):
        for kwargs, error, message in [
            (
                dict(capacity="1GiB", semantics=3),
                TypeError,
                "semantics: 'immediate', 'deferred' or 'host_oom', not int",
            ),
            (
                dict(capacity="1GiB", frees_at=3),
                TypeError,
                "frees_at: 'release', 'wait' or 'driver', not int",
            ),
            (
                dict(capacity="1GiB", config=3),
                TypeError,
                "config: a configuration such as 'pool:lb=4' or 'nopool', not int",
            ),
            (dict(capacity="1GiB", compare=[3]), TypeError, "compare: each configuration a str"),
            (
                dict(capacity="1GiB", compare=3),
                TypeError,
                "compare: a list of configurations, not int",
            ),
            (
                dict(capacity="1GiB", min_capacity="yes"),
                TypeError,
                "min_capacity: True or False, not str",
            ),
            (dict(capacity="1GiB", profile=3), TypeError, "profile: a profile's name"),
            (dict(capacity=b"1GiB"), TypeError, "capacity: a size is an int or a str"),
            (
                dict(capacity=2**70),
                ValueError,
                "capacity: '1180591620717411303424' is larger than 2^64 - 1 bytes",
            ),
            (
                dict(capacity="8MiB", granule="1MiB"),
                ValueError,
                "granule is the step of min_capacity's search; pass min_capacity=True",
            ),
            (
                dict(capacity="1GiB", min_capacity=True, granule=2**70),
                ValueError,
                "granule: '1180591620717411303424'",
            ),
            (
                dict(capacity="1GiB", config="pool:lb=%d" % 2**70),
                ValueError,
                "lb '1180591620717411303424'",
            ),
            (
                dict(capacity="1GiB", host_capacity=-1),
                ValueError,
                "host_capacity: '-1' is negative",
            ),
            (
                dict(capacity="1GiB", max_alloc=0),
                ValueError,
                "max_alloc: must be positive, got '0'",
            ),
            (
                dict(capacity="1GiB", max_alloc=1.5),
                TypeError,
                "max_alloc: a size is an int or a str",
            ),
        ]:
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(error) as raised:
                    clpool.replay(self.trace, **kwargs)
                self.assertIn(message, str(raised.exception))
                self.assertNotIn("Invoked with", str(raised.exception))
                self.assertNotIn("incompatible function arguments", str(raised.exception))
        with self.assertRaisesRegex(ValueError, "^trace: an empty path names no trace$"):
            clpool.replay("", capacity="1GiB")
        with self.assertRaisesRegex(ValueError, "^new: an empty path names no trace$"):
            clpool.replay.diff(self.trace, "")
        with self.assertRaises(TypeError) as raised:
            clpool.replay(3, capacity="1GiB")
        self.assertEqual(
            str(raised.exception), "trace: a path (str, bytes or os.PathLike), not int"
        )

    def test_ctrl_c_stops_the_replay_and_raises_keyboard_interrupt(self):
        """SIGINT during a long search (the replay runs with the GIL released) raises
        KeyboardInterrupt within a fraction of a second."""
        big = os.path.join(self.dir, "big.trace")
        with open(big, "w") as f:
            f.write("clpool-trace 1\n")
            seq = 0
            for i in range(1, 150001):  # 300,000 events of growing blocks, freed one behind
                f.write(f"{seq} 0 0 0 alloc {i} {4096 + (i % 4096) * 256} buffer 0\n")
                seq += 1
                if i > 1:
                    f.write(f"{seq} 0 0 0 free {i - 1} 0 buffer 0\n")
                    seq += 1
        code = textwrap.dedent(
            f"""
            import sys, time
            import clpool.replay
            print("started", flush=True)
            start = time.monotonic()
            try:
                clpool.replay({big!r}, min_capacity=True, granule="4KiB", compare=["nopool", "pool"])
                print("finished", time.monotonic() - start, flush=True)
            except KeyboardInterrupt:
                print("interrupted", time.monotonic() - start, flush=True)
        """
        )
        child = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.assertEqual(child.stdout.readline().strip(), "started")
        time.sleep(1.0)  # well into the search (a search of both configurations takes seconds)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
        latency = time.monotonic() - sent
        print(f"SIGINT to exit: {latency * 1000:.0f} ms; child: {out.strip()}", file=sys.stderr)
        self.assertEqual(child.returncode, 0, err)
        self.assertTrue(out.startswith("interrupted"), out + err)
        self.assertLess(latency, 0.5)
        self.assertEqual(err, "")

    def cli_diff(self, *args, new=None):
        binary = os.environ.get("CLPOOL_REPLAY")
        if not binary:
            self.skipTest("CLPOOL_REPLAY (clpool_replay) not given")
        run = subprocess.run(
            [
                binary,
                "--diff",
                self.old,
                new or self.trace,
                "--no-progress",
                "--format",
                "json",
                *args,
            ],
            capture_output=True,
            text=True,
        )
        self.assertIn(run.returncode, (0, 1), run.stderr)
        document = json.loads(run.stdout)
        self.assertEqual(document["passed"], run.returncode == 0)
        return document

    def write_old(self):
        self.old = os.path.join(self.dir, "old.trace")
        with open(self.old, "w") as f:
            f.write(OLD_TRACE)

    def test_diff_names_what_grew(self):
        self.write_old()
        result = clpool.replay.diff(self.old, self.trace, config="nopool", profile="exact")
        self.assertEqual(result["schema_version"], 1)
        self.assertEqual((result["old"], result["new"]), (self.old, self.trace))
        self.assertEqual(result["device"], "sim, immediate allocation, exact profile")
        self.assertEqual(result["granule_bytes"], MiB)
        (config,) = result["configurations"]
        self.assertEqual(config["config"], "nopool")
        self.assertEqual(
            config["old"],
            {
                "peak_device_bytes": 8 * MiB,
                "min_capacity": 8 * MiB,
                "refused_for_size_at_event": None,
            },
        )
        self.assertEqual(
            config["new"],
            {
                "peak_device_bytes": 11 * MiB,
                "min_capacity": 11 * MiB,
                "refused_for_size_at_event": None,
            },
        )
        self.assertAlmostEqual(config["peak_growth"], 3 / 8)
        self.assertAlmostEqual(config["min_capacity_growth"], 3 / 8)
        grew, same = result["sites"]
        self.assertEqual(
            (grew["site"], grew["old_peak_bytes"], grew["new_peak_bytes"], grew["change_bytes"]),
            ("Cache.keep (app.py:12)", 6 * MiB, 9 * MiB, 3 * MiB),
        )
        self.assertEqual(
            [(c["caller"], c["requested_bytes"], c["blocks"]) for c in grew["callers"]],
            [("main (app.py:40)", 9 * MiB, 3)],
        )
        self.assertEqual((same["site"], same["change_bytes"]), ("scratch (app.py:20)", 0))
        self.assertEqual(
            (result["max_growth"], result["exceeded"], result["passed"]), (None, [], True)
        )
        # The other way round the cache shrank; a trace against itself changes nothing.
        back = clpool.replay.diff(self.trace, self.old, config="nopool", profile="exact")
        self.assertEqual(back["sites"][-1]["change_bytes"], -3 * MiB)
        itself = clpool.replay.diff(
            self.old, pathlib.Path(self.old), config="nopool", profile="exact"
        )
        self.assertEqual({s["change_bytes"] for s in itself["sites"]}, {0})
        self.assertEqual(itself["configurations"][0]["peak_growth"], 0.0)

    def test_diff_gate(self):
        self.write_old()
        over = clpool.replay.diff(
            self.old, self.trace, config="nopool", profile="exact", max_growth="5%"
        )
        self.assertEqual(over["max_growth"], 0.05)
        self.assertEqual(
            over["exceeded"],
            ["nopool's peak device memory grew +37.5%", "nopool's minimum capacity grew +37.5%"],
        )
        self.assertFalse(over["passed"])
        within = clpool.replay.diff(
            self.old, self.trace, config="nopool", profile="exact", max_growth=" 37.5 %"
        )
        self.assertEqual((within["exceeded"], within["passed"]), ([], True))

    def test_diff_the_same_document_as_the_command_line(self):
        self.write_old()
        for kwargs, args in [
            (dict(), []),
            (dict(config="nopool", max_growth="5%"), ["--no-pool", "--max-growth", "5%"]),
            (
                dict(
                    compare=["nopool", "pool:lb=2,trim-ratio=0.5"],
                    granule="256KiB",
                    max_growth="50%",
                ),
                [
                    "--compare",
                    "nopool",
                    "pool:lb=2,trim-ratio=0.5",
                    "--granule",
                    "256KiB",
                    "--max-growth",
                    "50%",
                ],
            ),
            (
                dict(profile="pocl", semantics="immediate", frees_at="driver"),
                ["--profile", "pocl", "--semantics", "immediate", "--frees-at", "driver"],
            ),
        ]:
            with self.subTest(kwargs=kwargs):
                self.assertEqual(
                    clpool.replay.diff(self.old, self.trace, **kwargs), self.cli_diff(*args)
                )

    def test_diff_follows_frees_at(self):
        """A version-3 trace: the program releases each 2 MiB block before the next, the driver
        freed them all at the end (FORMAT.md "Two moments of a free"). Freed at the release the
        peak is one block, at the driver's free both: the diff's figures and its site follow."""
        v1 = os.path.join(self.dir, "diff_v1.trace")
        with open(v1, "w") as f:
            f.write("clpool-trace 1\n0 0 0 0 alloc 1 2097152 buffer 0\n")
        v3 = os.path.join(self.dir, "diff_v3.trace")
        with open(v3, "w") as f:
            f.write(
                "clpool-trace 3\n0 0 0 0 alloc 1 2097152 buffer 0\n1 0 0 0 release 1 2097152 buffer 0\n"
                "2 0 0 0 alloc 2 2097152 buffer 0\n3 0 0 0 release 2 2097152 buffer 0\n"
                "4 0 0 0 free 1 2097152 buffer 0\n5 0 0 0 free 2 2097152 buffer 0\n"
            )
        self.old = v1
        for frees_at, new_peak in [("release", 2 * MiB), ("driver", 4 * MiB)]:
            with self.subTest(frees_at=frees_at):
                result = clpool.replay.diff(
                    v1, v3, config="nopool", profile="exact", frees_at=frees_at
                )
                self.assertEqual(result["configurations"][0]["new"]["peak_device_bytes"], new_peak)
                self.assertEqual(result["sites"][0]["new_peak_bytes"], new_peak)
                self.assertEqual(
                    result,
                    self.cli_diff(
                        "--no-pool", "--profile", "exact", "--frees-at", frees_at, new=v3
                    ),
                )

    def test_diff_refuses_bad_values_and_paths_in_clpools_words(self):
        self.write_old()
        fifo = os.path.join(self.dir, "diff_fifo.trace")
        os.mkfifo(fifo)
        for args, kwargs, error, message in [
            (
                (self.old, self.trace),
                dict(max_growth="5"),
                ValueError,
                "max_growth: '5' needs a percent sign, e.g. 5%",
            ),
            (
                (self.old, self.trace),
                dict(max_growth="-1%"),
                ValueError,
                "max_growth: '-1%' is negative",
            ),
            (
                (self.old, self.trace),
                dict(max_growth=5),
                TypeError,
                "max_growth: a percentage such as '5%', not int",
            ),
            (
                (self.old, self.trace),
                dict(config="pool:lb=13"),
                ValueError,
                "lb '13' must be a whole number",
            ),
            ((self.old, self.trace), dict(granule=0), ValueError, "granule: must be positive"),
            (
                (self.old, self.trace),
                dict(granule=None),
                TypeError,
                "granule: a size such as '1MiB', not None",
            ),
            (
                (self.old, self.trace),
                dict(profile="no-such-profile"),
                ValueError,
                "no-such-profile",
            ),
            ((self.old, self.trace), dict(semantics="lazy"), ValueError, "semantics: 'lazy'"),
            (
                (self.old, self.trace),
                dict(frees_at=3),
                TypeError,
                "frees_at: 'release', 'wait' or 'driver', not int",
            ),
            (
                (self.old, self.trace),
                dict(compare=3),
                TypeError,
                "compare: a list of configurations, not int",
            ),
            (
                (self.old, self.trace),
                dict(config="nopool", compare=["pool"]),
                ValueError,
                "config and compare",
            ),
            (
                (3, self.trace),
                dict(),
                TypeError,
                "old: a path (str, bytes or os.PathLike), not int",
            ),
            (
                (self.old, None),
                dict(),
                TypeError,
                "new: a path (str, bytes or os.PathLike), not NoneType",
            ),
            (
                ("-", self.trace),
                dict(),
                ValueError,
                "old: each trace is replayed several times; give a file, not '-'",
            ),
            (
                (self.old, self.dir),
                dict(),
                ValueError,
                "new: '%s' is a directory, not a trace" % self.dir,
            ),
            ((fifo, self.trace), dict(), ValueError, "old: '%s' is a FIFO (a named pipe)" % fifo),
            (
                (self.old, self.trace + "\0.x"),
                dict(),
                ValueError,
                "new: '%s\\x00.x' holds a NUL byte" % self.trace,
            ),
            (
                (os.path.join(self.dir, "missing.trace"), self.trace),
                dict(),
                ValueError,
                "missing.trace: cannot open",
            ),
            (("/dev/zero", self.trace), dict(), ValueError, "/dev/zero:1: not a clpool trace"),
        ]:
            with self.subTest(args=args, kwargs=kwargs):
                start = time.monotonic()
                with self.assertRaises(error) as raised:
                    clpool.replay.diff(*args, **kwargs)
                self.assertIn(message, str(raised.exception))
                self.assertNotIn("incompatible function arguments", str(raised.exception))
                self.assertLess(time.monotonic() - start, 5)
        with self.assertRaises(TypeError):  # a diff has no capacity: each configuration is searched
            clpool.replay.diff(self.old, self.trace, capacity="1GiB")
        # What the command line refuses alike, exit 2.
        cli = subprocess.run(
            [os.environ["CLPOOL_REPLAY"], "--diff", self.old, self.trace, "--max-growth", "5"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        self.assertEqual(cli.returncode, 2, cli.stderr)
        self.assertIn("'5' needs a percent sign, e.g. 5%", cli.stderr)

    def test_the_module_is_the_function(self):
        from clpool.replay import replay

        self.assertEqual(
            replay(self.trace, capacity="64MiB"), clpool.replay(self.trace, capacity="64MiB")
        )
        from clpool.replay import diff

        self.assertIs(diff, clpool.replay.diff)
        self.assertEqual(clpool.replay.__all__, ["replay", "diff"])


if __name__ == "__main__":
    unittest.main()
