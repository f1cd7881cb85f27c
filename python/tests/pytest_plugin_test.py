"""clpool.pytest_plugin, tested with pytest's own pytester: each marker passing and failing, the
summary, the artifacts, xdist, the observed system device, bad markers and options, and OpenCL
initialised before the plugin. Run by run_plugin_test.sh (python -m pytest -p pytester), which
puts the clpool package, the layer, mockcl and clpool_replay where the plugin finds them.
"""
import re
import sys

import pytest

DEVICE = ["-p", "clpool.pytest_plugin", "--clpool-device", "nvidia:1GiB"]

CONFTEST = """
import pytest, pyopencl as cl

@pytest.fixture(scope="session")
def queue():
    ctx = cl.create_some_context(interactive=False)
    return cl.CommandQueue(ctx)

MiB = 1 << 20

def commit(queue, b):
    # Commits the buffer on the device now (PyOpenCL's ImmediateAllocator does the same).
    cl.enqueue_migrate_mem_objects(queue, [b], cl.mem_migration_flags.CONTENT_UNDEFINED)
    return b

def buffer(queue, n):
    return cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, n)
"""

SUITE = """
import numpy as np, pyopencl as cl, pytest
from conftest import commit, MiB

kept = []

def make(queue, n):
    return commit(queue, cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, n))

def hold(queue, n):
    kept.append(commit(queue, cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, n)))

def grow(queue, count):
    out = []
    for _ in range(count):
        out.append(commit(queue, cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 4 * MiB)))
    return out

def test_no_device_memory():
    pass

@pytest.mark.limit_device_memory("16 MiB")
def test_peak_within(queue):
    grow(queue, 3)

@pytest.mark.limit_device_memory("8 MiB")
def test_peak_above(queue):
    grow(queue, 3)

@pytest.mark.limit_device_leaks("1 MiB")
def test_leak_within(queue):
    a = make(queue, 2 * MiB)
    del a

@pytest.mark.limit_device_leaks(limit="1 MiB")
def test_leak_above(queue):
    hold(queue, 3 * MiB)

@pytest.mark.device_capacity("64 MiB")
def test_capacity_fits(queue):
    a = make(queue, 24 * MiB)
    b = make(queue, 24 * MiB)
    assert queue.device.global_mem_size == 64 * MiB

@pytest.mark.device_capacity("32 MiB", profile="nvidia")
def test_capacity_too_small(queue):
    a = make(queue, 24 * MiB)
    b = make(queue, 24 * MiB)

def test_kernel_computes(queue):
    prg = cl.Program(queue.context, "__kernel void k(__global int* a) { a[get_global_id(0)] = 7; }").build()
    buf = make(queue, 16)
    prg.k(queue, (4,), None, buf)
    out = np.zeros(4, np.int32)
    cl.enqueue_copy(queue, out, buf)
    assert list(out) == [7, 7, 7, 7]
"""


@pytest.fixture
def suite(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def outcomes(result):
    return result.parseoutcomes()


def test_markers_summary_and_artifacts(suite):
    art = suite.path / "art"
    r = suite.runpytest_subprocess(
        *DEVICE, "--clpool-artifacts", str(art), "-p", "no:cacheprovider"
    )
    out = r.stdout.str()
    o = outcomes(r)
    assert o.get("passed") == 5 and o.get("failed") == 3, out
    # The short summary carries the test and clpool's reason.
    r.stdout.fnmatch_lines(
        [
            "FAILED test_suite.py::test_peak_above - test_peak_above: clpool: peak*",
            "FAILED test_suite.py::test_leak_above - test_leak_above: clpool: 3 MiB*",
            "FAILED test_suite.py::test_capacity_too_small - test_capacity_too_small: c*",
        ],
        consecutive=False,
    )
    # limit_device_memory: the peak, the limit, the site holding the memory at the peak.
    assert (
        "clpool: peak device memory 12 MiB (12582912 bytes) is above the limit_device_memory "
        "limit of 8 MiB (8388608 bytes)"
    ) in out
    # Sites by their path from the allocation out to the test (--clpool-site-frames auto).
    assert re.search(
        r"1\. grow \(test_suite\.py:\d+\) ← test_peak_above \(test_suite\.py:\d+\)\n"
        r"\s+12 MiB \(12582912 bytes\) in 3 blocks",
        out,
    ), out
    # limit_device_leaks: what is left, and where it was allocated.
    assert (
        "clpool: 3 MiB (3145728 bytes) of device memory the test allocated is still allocated "
        "after it returned, above the limit_device_leaks limit of 1 MiB"
    ) in out
    assert re.search(
        r"1\. hold \(test_suite\.py:\d+\) ← test_leak_above \(test_suite\.py:\d+\)\n"
        r"\s+3 MiB \(3145728 bytes\) in 1 block",
        out,
    ), out
    # device_capacity: clpool's report, then the MemoryError.
    assert (
        "clpool: out of device memory: a request of 24 MiB (25165824 bytes) failed at first use "
        "by clEnqueueMigrateMemObjects"
    ) in out
    assert "32 MiB (33554432 bytes), nvidia profile (device_capacity marker)" in out
    assert "failing request's site    make (test_suite.py:" in out
    assert "MemoryError" in out
    # The passing tests did not fail for clpool's reasons.
    for name in (
        "test_peak_within",
        "test_leak_within",
        "test_capacity_fits",
        "test_kernel_computes",
    ):
        assert f"FAILED test_suite.py::{name}" not in out
    # The summary, largest peak first, with the top site.
    summary = out[out.index("clpool device memory") :]
    assert "device: mockcl, 1 GiB (1073741824 bytes), nvidia profile" in summary
    rows = re.findall(r"^\s+(\S+ \S+)\s+(\S+ \S+)\s+(\d+)\s+(test_suite\.py::\S+)$", summary, re.M)
    names = [row[3].split("::")[1] for row in rows]
    assert names[:2] == ["test_capacity_fits", "test_capacity_too_small"], summary
    assert (
        names.index("test_peak_above")
        < names.index("test_leak_above")
        < names.index("test_leak_within")
    )
    assert "test_no_device_memory" not in names
    row = dict((r[3].split("::")[1], r) for r in rows)
    assert row["test_capacity_fits"][0] == "48 MiB" and row["test_capacity_fits"][2] == "2"
    assert row["test_leak_above"][1] == "3 MiB"
    assert re.search(
        r"test_suite\.py::test_peak_above\n\s+grow \(test_suite\.py:\d+\) ← test_peak_above "
        r"\(test_suite\.py:\d+\): 12 MiB",
        summary,
    ), summary
    # Artifacts: a trace and a page per failing test, none for the passing ones.
    dirs = sorted(p.name for p in art.iterdir() if p.is_dir())
    assert dirs == [
        "test_suite.py%3A%3Atest_capacity_too_small",
        "test_suite.py%3A%3Atest_leak_above",
        "test_suite.py%3A%3Atest_peak_above",
    ], dirs
    for d in dirs:
        trace = (art / d / "device.trace").read_text()
        assert trace.startswith("clpool-trace 3\n# source: clpool pytest plugin\n")
        page = (art / d / "device.html").read_text()
        assert "<html" in page
    page = (art / "test_suite.py%3A%3Atest_peak_above" / "device.html").read_text()
    assert "grow" in page
    replay = (art / "test_suite.py%3A%3Atest_capacity_too_small" / "replay.txt").read_text()
    assert "OUT OF MEMORY" in replay and "test_capacity_too_small" in replay, replay
    replay = (art / "test_suite.py%3A%3Atest_peak_above" / "replay.txt").read_text()
    assert "OUT OF MEMORY" in replay and "grow" in replay, replay
    # Which device each report is of, beside it.
    assert "; on the test's device)" in out, out
    assert "; on a device of the test's limit: it runs out where the test went over it)" in out
    # The layer's trace: version 4, as a device charged at first use records its first uses.
    assert (
        (art / "session.trace")
        .read_text()
        .startswith("clpool-trace 4\n# source: layer\n# first_uses: buffer\n")
    )
    assert "artifacts: " + str(art) in out


def test_xdist_workers(suite):
    pytest.importorskip("xdist")
    art = suite.path / "art"
    r = suite.runpytest_subprocess(
        *DEVICE, "-n", "2", "--clpool-artifacts", str(art), "-p", "no:cacheprovider"
    )
    out = r.stdout.str()
    o = outcomes(r)
    assert o.get("passed") == 5 and o.get("failed") == 3, out
    summary = out[out.index("clpool device memory") :]
    assert "device: mockcl, 1 GiB (1073741824 bytes), nvidia profile" in summary
    assert re.search(r"12 MiB\s+0 B\s+3\s+test_suite\.py::test_peak_above", summary), summary
    traces = sorted(p.name for p in art.glob("session-gw*.trace"))
    assert traces == ["session-gw0.trace", "session-gw1.trace"], traces
    assert (art / "test_suite.py%3A%3Atest_leak_above" / "device.html").exists()


def test_bad_marker_under_xdist_is_one_usage_error(pytester):
    """A bad marker under xdist: the workers run nothing, the controller says it once, exit 4."""
    pytest.importorskip("xdist")
    pytester.makepyfile(
        test_it="""
        import pytest

        @pytest.mark.limit_device_memory("24 MB")
        def test_bad():
            pass

        def test_good():
            pass
    """
    )
    r = pytester.runpytest_subprocess(*DEVICE, "-n", "2", "-p", "no:cacheprovider")
    out, err = r.stdout.str(), r.stderr.str()
    assert r.ret == 4, out + err
    assert err.count("ERROR: ") == 1, err
    assert (
        "ERROR: test_it.py::test_bad: @pytest.mark.limit_device_memory: the size '24 MB' "
        "is ambiguous: decimal units are not accepted; write 24MiB"
    ) in err
    assert "INTERNALERROR" not in out + err and "Traceback" not in out + err
    assert "passed" not in out and "crashed" not in out


def test_a_released_buffer_is_free_for_the_peak(pytester):
    """On POCL, observed: buffers filled on the queue and dropped without a wait are freed by the
    driver only once the fills have run (at the end here); the test's peak and leaks count each
    free from the program's release, as clpool_replay's rule for a real device does, so the peak
    is one buffer, not eight, and the artifact trace ends every block: with its `release`, or
    with only its `free` where the fill had already run and POCL destroyed the buffer inside the
    program's clReleaseMemObject (FORMAT.md "Two moments of a free"); which one is a race."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_late="""
        import numpy as np, pyopencl as cl, pytest
        from conftest import MiB

        def fill_and_drop(queue):
            for _ in range(8):
                b = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 4 * MiB)
                cl.enqueue_fill_buffer(queue, b, np.float32(1), 0, 4 * MiB)
                del b

        @pytest.mark.limit_device_memory("6 MiB")
        @pytest.mark.limit_device_leaks("1 MiB")
        def test_within(queue):
            fill_and_drop(queue)

        @pytest.mark.limit_device_memory("3 MiB")
        def test_above(queue):
            fill_and_drop(queue)
    """
    )
    art = pytester.path / "art"
    r = pytester.runpytest_subprocess(
        "-p",
        "clpool.pytest_plugin",
        "--clpool",
        "--clpool-artifacts",
        str(art),
        "-p",
        "no:cacheprovider",
    )
    out = r.stdout.str()
    assert outcomes(r).get("passed") == 1 and outcomes(r).get("failed") == 1, out
    assert (
        "peak device memory 4 MiB (4194304 bytes) is above the limit_device_memory limit of 3 MiB"
        in out
    ), out
    trace = (art / "test_late.py%3A%3Atest_above" / "device.trace").read_text()
    assert trace.startswith("clpool-trace 3\n"), trace[:40]
    allocated = set(re.findall(r"^\d+ \d+ \d+ \d+ alloc (\d+) ", trace, re.M))
    ended = set(re.findall(r"^\d+ \d+ \d+ \d+ (?:release|free) (\d+) ", trace, re.M))
    assert len(allocated) == 8 and ended == allocated, trace


def test_system_device_observed(pytester):
    """Without --clpool-device, the tests' own device (POCL here), observed through the layer."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_pocl="""
        import pytest
        import pyopencl as cl
        from conftest import commit, MiB

        def alloc_twice(queue):
            out = []
            for _ in range(2):
                out.append(commit(queue, cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 3 * MiB)))
            return out

        @pytest.mark.limit_device_memory("4 MiB")
        def test_above(queue):
            alloc_twice(queue)

        @pytest.mark.device_capacity("4 MiB")
        def test_small_device(queue):
            assert queue.device.global_mem_size == 4 * MiB
            alloc_twice(queue)
    """
    )
    r = pytester.runpytest_subprocess(
        "-p", "clpool.pytest_plugin", "--clpool", "-p", "no:cacheprovider"
    )
    out = r.stdout.str()
    assert outcomes(r).get("failed") == 2, out
    assert "device: the system's OpenCL (Portable Computing Language), observed" in out
    assert re.search(
        r"1\. alloc_twice \(test_pocl\.py:\d+\) ← test_above \(test_pocl\.py:\d+\)\n\s+6 MiB", out
    ), out
    # The exact profile (the default without --clpool-device): refused at creation.
    assert (
        "clpool: out of device memory: a request of 3 MiB (3145728 bytes) failed at allocation"
        in out
    ), out
    assert "4 MiB (4194304 bytes), exact profile (device_capacity marker)" in out


BAD_MARKERS = [
    (
        'limit_device_memory("24 MB")',
        "test_it.py::test_it: @pytest.mark.limit_device_memory: the size '24 MB' is ambiguous: decimal "
        "units are not accepted; write 24MiB",
    ),
    (
        "limit_device_memory()",
        "test_it.py::test_it: @pytest.mark.limit_device_memory: takes one size, got 0 arguments; write "
        "limit_device_memory(SIZE) with SIZE a string such as '512 MiB' or an int of bytes",
    ),
    (
        'limit_device_leaks("1 MiB", "2 MiB")',
        "@pytest.mark.limit_device_leaks: takes one size, got 2 arguments",
    ),
    ("limit_device_leaks(-1)", "@pytest.mark.limit_device_leaks: the size -1 is negative"),
    (
        "limit_device_memory(1.5)",
        "@pytest.mark.limit_device_memory: the size 1.5 is not a size: give a string such as '512 MiB'",
    ),
    (
        'device_capacity("2 GiB", profil="nvidia")',
        "@pytest.mark.device_capacity: unknown argument 'profil'; write device_capacity(SIZE, profile=NAME)",
    ),
    (
        'device_capacity("2 GiB", profile="pocl")',
        "test_it.py::test_it: @pytest.mark.device_capacity(profile='pocl'): this session's device commits "
        "memory by the nvidia profile; run with --clpool-device pocl:SIZE",
    ),
    (
        'device_capacity("2 MiB")',
        "test_it.py::test_it: @pytest.mark.device_capacity: 2 MiB is not more than the headroom of "
        "profile 'nvidia', 2688 KiB: nothing would be usable",
    ),
    ('device_capacity("lots")', "@pytest.mark.device_capacity: the size 'lots' is not a number"),
    (
        'limit_device_memory("1 MiB")\n        @pytest.mark.limit_device_memory("100 MiB")',
        "test_it.py::test_it: @pytest.mark.limit_device_memory: given more than once on the test; "
        "give it once",
    ),
]


@pytest.mark.parametrize("marker,message", BAD_MARKERS, ids=[m for m, _ in BAD_MARKERS])
def test_bad_marker_is_a_usage_error(pytester, marker, message):
    pytester.makepyfile(
        test_it=f"""
        import pytest

        @pytest.mark.{marker}
        def test_it():
            pass
    """
    )
    r = pytester.runpytest_subprocess(*DEVICE, "-p", "no:cacheprovider")
    assert r.ret == 4, r.stdout.str() + r.stderr.str()
    err = r.stderr.str()
    assert "ERROR: " in err and message in err, err


BAD_OPTIONS = [
    (
        ["--clpool-device", "nvidia:4GB"],
        "ERROR: clpool: --clpool-device 'nvidia:4GB': the capacity '4GB' is ambiguous: decimal units "
        "are not accepted; write 4GiB",
    ),
    (
        ["--clpool-device", "4GiB"],
        "ERROR: clpool: --clpool-device '4GiB': write PROFILE:CAPACITY, e.g. nvidia:4GiB",
    ),
    (
        ["--clpool-device", "amd:4GiB"],
        "ERROR: clpool: --clpool-device 'amd:4GiB': profile 'amd': no such built-in profile (exact, "
        "nvidia, pocl); a profile file's path must contain '/' or end in .profile",
    ),
    (
        ["--clpool-device", "nvidia:4GiB:extra"],
        "ERROR: clpool: --clpool-device 'nvidia:4GiB:extra': the capacity 'extra' ",
    ),
    (
        ["--clpool-device", "nvidia:1MiB"],
        "ERROR: clpool: --clpool-device 'nvidia:1MiB': 1 MiB is not more than the headroom of profile "
        "'nvidia', 2688 KiB: nothing would be usable",
    ),
    (
        ["--clpool", "--clpool-profile", "fast"],
        "ERROR: clpool: --clpool-profile: profile 'fast': no such built-in profile",
    ),
    (
        ["--clpool", "--clpool-replay-timeout", "inf"],
        "ERROR: clpool: --clpool-replay-timeout: inf is more than a week (604800 s)",
    ),
]


@pytest.mark.parametrize("args,message", BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS])
def test_bad_option_is_a_usage_error(pytester, args, message):
    pytester.makepyfile(test_it="def test_it():\n    pass\n")
    r = pytester.runpytest_subprocess("-p", "clpool.pytest_plugin", *args, "-p", "no:cacheprovider")
    assert r.ret == 4, r.stdout.str() + r.stderr.str()
    assert message in r.stderr.str(), r.stderr.str()


def test_opencl_initialised_before_the_plugin(pytester):
    """PyOpenCL imported, and its ICD loader initialised on POCL, before pytest starts."""
    pytester.makepyfile(test_it="def test_it():\n    pass\n")
    script = pytester.makepyfile(
        run_it="""
        import sys, pyopencl, pytest
        pyopencl.get_platforms()
        sys.exit(pytest.main(["-p", "clpool.pytest_plugin", "--clpool-device", "nvidia:1GiB",
                              "-p", "no:cacheprovider", "test_it.py"]))
    """
    )
    r = pytester.run(sys.executable, str(script))
    assert r.ret == 4, r.stdout.str() + r.stderr.str()
    err = r.stderr.str()
    assert (
        "ERROR: clpool: OpenCL was already initialised in this process before the clpool plugin "
        "could load its layer and the mockcl device (pyopencl "
    ) in err, err
    assert "platforms: Portable Computing Language). Run pytest in a fresh process" in err


def test_markers_without_the_plugin_active_are_ignored_with_a_note(pytester):
    # Ignored means not checked either ("24 MB"), and the note is a line, not a warning: with
    # -W error a warning raised at collection was an INTERNALERROR (exit 3).
    pytester.makepyfile(
        test_it="""
        import pytest

        @pytest.mark.limit_device_memory("1 MiB")
        def test_it():
            pass

        @pytest.mark.limit_device_memory("24 MB")
        def test_typo():
            pass
    """
    )
    for extra in ([], ["-n", "2"]):
        r = pytester.runpytest_subprocess(
            "-p", "clpool.pytest_plugin", "-p", "no:cacheprovider", "-W", "error", *extra
        )
        out = r.stdout.str()
        assert r.ret == 0 and outcomes(r).get("passed") == 2, out + r.stderr.str()
        assert out.count("clpool: device-memory markers are ignored without --clpool") == 1, out
        assert "clpool device memory" not in out


def test_an_out_of_memory_in_a_fixture_gets_the_report(pytester):
    pytester.makepyfile(
        test_it="""
        import numpy as np
        import pyopencl as cl
        import pytest

        ctx = cl.create_some_context(interactive=False)
        queue = cl.CommandQueue(ctx)

        def alloc(n):
            b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n)
            cl.enqueue_copy(queue, b, np.zeros(n, np.uint8)).wait()
            return b

        @pytest.fixture
        def huge():
            return alloc(512 << 20)

        @pytest.mark.device_capacity("256 MiB")
        def test_fixture_oom(huge):
            pass
    """
    )
    art = pytester.path / "art"
    r = pytester.runpytest_subprocess(
        *DEVICE, "-p", "no:cacheprovider", "--clpool-artifacts", str(art)
    )
    out = r.stdout.str()
    assert outcomes(r).get("errors") == 1, out
    assert (
        "clpool: out of device memory: a request of 512 MiB (536870912 bytes) failed at first use "
        "by clEnqueueWriteBuffer" in out
    ), out
    assert re.search(
        r"failing request's site +alloc \(test_it.py:\d+\) ← huge \(test_it.py:\d+\)", out
    ), out
    assert (art / "test_it.py%3A%3Atest_fixture_oom" / "device.trace").is_file(), out


def test_a_size_refusal_is_no_out_of_memory(pytester):
    """A request above the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE (the pocl profile enforces it)
    is CL_INVALID_BUFFER_SIZE: no memory was involved, so no test gets an out-of-memory report
    for it, and it counts in no peak."""
    pytester.makepyfile(
        test_it="""
        import numpy as np
        import pyopencl as cl
        import pytest

        ctx = cl.create_some_context(interactive=False)
        queue = cl.CommandQueue(ctx)
        TOO_LARGE = 300 << 20

        def test_the_device_limits_one_allocation():
            assert ctx.devices[0].max_mem_alloc_size < TOO_LARGE <= ctx.devices[0].global_mem_size

        def test_refused():
            cl.Buffer(ctx, cl.mem_flags.READ_WRITE, TOO_LARGE)

        @pytest.mark.limit_device_memory("20 MiB")
        def test_refused_and_handled():
            with pytest.raises(cl.Error):
                cl.Buffer(ctx, cl.mem_flags.READ_WRITE, TOO_LARGE)
            b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16 << 20)
            cl.enqueue_copy(queue, b, np.zeros(16 << 20, np.uint8)).wait()
    """
    )
    r = pytester.runpytest_subprocess(
        "-p", "clpool.pytest_plugin", "--clpool-device", "pocl:1GiB", "-p", "no:cacheprovider"
    )
    out = r.stdout.str()
    assert outcomes(r).get("passed") == 2 and outcomes(r).get("failed") == 1, out
    assert "INVALID_BUFFER_SIZE" in out, out
    assert "out of device memory" not in out, out
    assert re.search(r"16 MiB +0 B +1 +test_it\.py::test_refused_and_handled", out), out


def test_junit_xml_carries_the_figures_as_json(pytester):
    import json
    import xml.etree.ElementTree as ET

    pytester.makepyfile(
        test_it="""
        import pyopencl as cl

        def test_one():
            ctx = cl.create_some_context(interactive=False)
            b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 3 << 20)
    """
    )
    r = pytester.runpytest_subprocess(*DEVICE, "-p", "no:cacheprovider", "--junitxml=j.xml")
    assert r.ret == 0, r.stdout.str() + r.stderr.str()
    props = ET.parse(pytester.path / "j.xml").getroot().iter("property")
    value = json.loads(next(p for p in props if p.get("name") == "clpool").get("value"))
    assert value["peak"] == 3 << 20 and value["allocations"] == 1, value


def test_wider_scoped_fixtures_are_not_the_tests_memory(pytester):
    """A session or module fixture that a test's setup creates holds memory for later tests too:
    it counts against none (the README's "memory of session fixtures ... does not count"), in
    whatever order the tests run; a function fixture's is the test's."""
    pytester.makepyfile(
        test_it="""
        import pytest
        import pyopencl as cl

        ctx = cl.create_some_context(interactive=False)

        @pytest.fixture(scope="session")
        def big():
            b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64 << 20)
            yield b
            b.release()

        @pytest.fixture(scope="module")
        def modbuf():
            return cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 32 << 20)

        @pytest.fixture
        def fbuf():
            return cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16 << 20)

        @pytest.mark.limit_device_memory("1 MiB")
        def test_first(big):
            pass

        @pytest.mark.limit_device_memory("1 MiB")
        def test_second(big):
            pass

        @pytest.mark.limit_device_memory("1 MiB")
        def test_third(modbuf):
            pass

        @pytest.mark.limit_device_memory("1 MiB")
        def test_fourth(big, fbuf):
            pass
    """
    )
    for extra in ([], ["-k", "second or third or fourth"], ["-n", "2"]):
        r = pytester.runpytest_subprocess(*DEVICE, "-p", "no:cacheprovider", "-rA", *extra)
        out = r.stdout.str()
        assert "FAILED test_it.py::test_fourth" in out, out
        assert outcomes(r).get("failed") == 1, out + r.stderr.str()


def test_a_folder_another_session_is_recording_to_is_refused(pytester):
    """Two sessions given one --clpool-artifacts: the second must not judge its tests by the
    first's trace (the layer records it to session.trace.PID instead)."""
    import fcntl

    pytester.makepyfile(test_one="def test_nothing():\n    pass\n")
    art = pytester.path / "art"
    art.mkdir()
    (art / "session.trace").write_text("clpool-trace 3\n# source: layer\n")
    with open(art / "session.trace", "r+") as held:  # as the other session's layer holds it
        fcntl.flock(held, fcntl.LOCK_EX)
        r = pytester.runpytest_subprocess(
            *DEVICE, "--clpool-artifacts", str(art), "-p", "no:cacheprovider"
        )
    assert r.ret == 4, r.stdout.str() + r.stderr.str()
    assert (
        f"ERROR: clpool: --clpool-artifacts: '{art}/session.trace' is the trace of another "
        f"process that is running (a second pytest session given the same folder?): give each "
        f"session a folder of its own"
    ) in r.stderr.str(), r.stderr.str()
    assert sorted(p.name for p in art.iterdir()) == ["session.trace"]


def test_the_fixed_suite_passes(suite):
    """The same suite with each problem fixed (leak dropped, peak lowered, a smaller request)."""
    fixed = (
        SUITE.replace("kept.append(commit(", "(commit(")
        .replace('"8 MiB")\ndef test_peak_above', '"12 MiB")\ndef test_peak_above')
        .replace(
            "    a = make(queue, 24 * MiB)\n    b = make(queue, 24 * MiB)\n\ndef test_kernel",
            "    a = make(queue, 24 * MiB)\n\ndef test_kernel",
        )
    )
    assert fixed != SUITE
    suite.makepyfile(test_suite=fixed)
    r = suite.runpytest_subprocess(*DEVICE, "-p", "no:cacheprovider")
    assert outcomes(r).get("passed") == 8, r.stdout.str()


def test_a_second_session_replaces_the_layers_trace(pytester):
    """The session trace the layer wrote (version 3: the program's releases beside the driver's
    frees) is the plugin's to replace in the next session; another file is not."""
    pytester.makepyfile(test_one="def test_nothing():\n    pass\n")
    art = pytester.path / "art"
    for _ in range(2):
        r = pytester.runpytest_subprocess(
            *DEVICE, "--clpool-artifacts", str(art), "-p", "no:cacheprovider"
        )
        assert outcomes(r).get("passed") == 1, r.stdout.str() + r.stderr.str()
    assert (art / "session.trace").read_text().startswith("clpool-trace 4\n# source: layer\n")
    (art / "session.trace").write_text("mine\n")
    r = pytester.runpytest_subprocess(
        *DEVICE, "--clpool-artifacts", str(art), "-p", "no:cacheprovider"
    )
    assert "is not a trace the layer wrote" in r.stdout.str() + r.stderr.str()
