"""clpool.pytest_plugin's --clpool-oom-sweep (issue 39): each test's failure points tried one by
one in subprocesses, alone and under pytest-xdist: a test that handles an out-of-memory passes,
one that crashes, mishandles (an exception that is not an out-of-memory), leaks or hangs fails
with its finding and a replay command that reproduces it; a test that fails without any fault is
said to; bad sweep options are usage errors. Run by run_plugin_test.sh.
"""
import os
import re
import signal
import subprocess

import pytest

DEVICE = ["-p", "clpool.pytest_plugin", "-p", "no:cacheprovider", "--clpool-device", "nvidia:1GiB"]
SERIAL_AND_XDIST = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]

CONFTEST = """
import pytest, pyopencl as cl

@pytest.fixture(scope="session")
def queue():
    return cl.CommandQueue(cl.create_some_context(interactive=False))
"""

SUITE = """
import ctypes, time
import numpy as np
import pyopencl as cl

kept = []

def test_handles(queue):
    try:
        b = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 1 << 20)
        cl.enqueue_copy(queue, b, np.zeros(1 << 18, np.float32))
    except cl.MemoryError:
        pass

def test_reports(queue):
    b = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 1 << 20)
    cl.enqueue_copy(queue, b, np.zeros(1 << 18, np.float32))

def test_crashes(queue):
    try:
        b = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 1 << 20)
    except cl.Error:
        ctypes.memset(0, 1, 1)

def test_mishandles(queue):
    try:
        b = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 1 << 20)
    except cl.Error:
        b = None
    b.size

def test_leaks(queue):
    a = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 1 << 20)
    cl.enqueue_copy(queue, a, np.zeros(1 << 18, np.float32))
    try:
        cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 2 << 20)
    except cl.Error:
        kept.append(a)
        raise

def test_hangs(queue):
    try:
        cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 1 << 20)
    except cl.Error:
        while True:
            time.sleep(1)

def two_buffers(queue):
    a = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 1 << 20)
    b = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 1 << 20)
    return a, b

def test_fails_holding(queue):  # a in two_buffers' frame, which the MemoryError's traceback keeps
    two_buffers(queue)
"""


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
def test_each_finding_with_its_replay(pytester, xdist, monkeypatch, tmp_path):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_s=SUITE)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    r = pytester.runpytest_subprocess(
        *DEVICE, "--clpool-oom-sweep", "--clpool-oom-sweep-timeout", "5", *xdist
    )
    out = r.stdout.str()
    assert r.ret == 1, out
    # Nothing left behind, not even by the runs that crashed or hung.
    assert not list(scratch.iterdir()), list(scratch.iterdir())
    # handles: 1 allocation + 1 first use; reports: 2 (a MemoryError names an out-of-memory);
    # crashes, mishandles, hangs: 1 allocation each; leaks: 2 allocations (the second leaks the
    # first buffer) + 1 first use (the first buffer's: the test fails with the MemoryError, handled);
    # fails_holding: 2 allocations, handled (what only the exception's frames hold is let go).
    assert (
        "clpool oom sweep: 12 runs: crashed 1, hung 1, leaked 1, unhandled 1, handled 8, not reached 0"
        in out
    ), out
    for nodeid in (
        "test_s.py::test_crashes[oom-sweep:alloc:1]",
        "test_s.py::test_mishandles[oom-sweep:alloc:1]",
        "test_s.py::test_leaks[oom-sweep:alloc:2]",
        "test_s.py::test_hangs[oom-sweep:alloc:1]",
    ):
        assert f"FAILED {nodeid}" in out, out
    # Under the sanitizers' preload (CI's ASan step), ASan turns the segfault into an abort.
    crash = (
        "signal 6 (SIGABRT)"
        if "abort_on_error=1" in os.environ.get("ASAN_OPTIONS", "")
        else "signal 11 (SIGSEGV)"
    )
    assert f"crashed: the process was killed by {crash}" in out, out
    assert re.search(r'File ".*test_s\.py", line \d+ in test_crashes', out), out
    assert (
        "unhandled: the test failed with AttributeError, which does not say it ran out of memory: "
        "'NoneType' object has no attribute 'size'"
    ) in out
    assert "the failing request    test_mishandles (test_s.py:" in out
    assert "hung: no end after 5 s" in out
    assert (
        "leaked: 1 MiB (1048576 bytes) of device memory the test allocated is still allocated after it, "
        "0 bytes without the failure"
    ) in out
    assert re.search(
        r"  sites of the blocks still allocated:\n    1\. test_leaks \(test_s\.py:\d+\)\n"
        r"       1 MiB \(1048576 bytes\) in 1 block\n",
        out,
    ), out
    # The replay line reproduces the run: the test fails there as the sweep said.
    line = re.search(
        r"replay: (.*--clpool-oom-sweep-run=alloc:1 test_s\.py::test_mishandles)", out
    ).group(1)
    again = subprocess.run(line, shell=True, cwd=pytester.path, capture_output=True, text=True)
    assert again.returncode == 1 and "AttributeError" in again.stdout, again.stdout + again.stderr
    # A leak's replay line shows the leak: what the test left allocated, and where.
    line = re.search(
        r"replay: (.*--clpool-oom-sweep-run=alloc:2 test_s\.py::test_leaks)", out
    ).group(1)
    again = subprocess.run(line, shell=True, cwd=pytester.path, capture_output=True, text=True)
    shown = again.stdout
    assert "clpool oom sweep run alloc:2: the test failed with MemoryError" in shown, shown
    assert "still allocated after the test: 1 MiB (1048576 bytes)" in shown, shown
    assert re.search(r"    1\. test_leaks \(test_s\.py:\d+\)\n", shown), shown


def test_a_test_that_fails_without_a_fault_is_said_to(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_f="""
import pyopencl as cl

def test_broken(queue):
    cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 4096)
    assert 1 == 2
"""
    )
    r = pytester.runpytest_subprocess(*DEVICE, "--clpool-oom-sweep")
    out = r.stdout.str()
    assert r.ret == 1, out
    assert "FAILED test_f.py::test_broken[oom-sweep:fault-free]" in out
    assert (
        "clpool oom sweep: test_f.py::test_broken fails without any fault injected (it failed): nothing to sweep"
        in out
    )


FIXTURES = """
import pyopencl as cl
import pytest

@pytest.fixture
def scratch(queue):
    b = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 1 << 20)
    cl.enqueue_fill_buffer(queue, b, b"\\0", 0, 1 << 20).wait()
    yield b

@pytest.fixture
def careless(queue):
    try:
        b = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 1 << 20)
        cl.enqueue_fill_buffer(queue, b, b"\\0", 0, 1 << 20).wait()
    except cl.MemoryError:
        raise RuntimeError("no scratch space") from None
    yield b

def test_with_scratch(scratch):
    pass

def test_with_careless(careless):
    pass
"""


def test_a_fixtures_failure_is_judged_by_its_own_exception(pytester):
    """An out-of-memory in a fixture (the test's setup) is as handled as one in the test: it says
    what it is. A fixture that turns it into another error is unhandled, and the finding names
    that error. Both were judged with no exception at all (the call's, which never ran)."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_x=FIXTURES)
    r = pytester.runpytest_subprocess(*DEVICE, "--clpool-oom-sweep")
    out = r.stdout.str()
    assert "crashed 0, hung 0, leaked 0, unhandled 2, handled 2" in out, out + r.stderr.str()
    assert "FAILED test_x.py::test_with_scratch" not in out, out
    assert (
        "test_x.py::test_with_careless with its allocation 1 failing: unhandled: the test failed "
        "with RuntimeError, which does not say it ran out of memory: no scratch space"
    ) in out, out


LEAKY = """
import numpy as np
import pyopencl as cl

_staging = []

def up(queue, n):
    s = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, n)
    _staging.append(s)
    cl.enqueue_copy(queue, s, np.zeros(n, np.uint8))
    d = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, n)
    cl.enqueue_copy(queue, d, s).wait()
    _staging.remove(s)
    return d

def test_upload(queue):
    up(queue, 1 << 20)

def test_other(queue):
    open("ran.log", "a").write("test_other\\n")
    cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 1 << 20)
"""


def test_the_sessions_artifacts_folder_is_not_the_childrens(pytester, monkeypatch):
    """--clpool-artifacts from $PYTEST_ADDOPTS (or an ini file) reaches every child run too; their
    traces must not go to the session's folder, whose trace is the parent's: the leaks were
    judged from the parent's trace, and reported handled."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_u=LEAKY)
    monkeypatch.setenv("PYTEST_ADDOPTS", "--clpool-artifacts art")
    r = pytester.runpytest_subprocess(*DEVICE, "--clpool-oom-sweep", "-k", "upload")
    out = r.stdout.str()
    assert "leaked 2, unhandled 0, handled 2" in out, out + r.stderr.str()
    assert sorted(p.name for p in (pytester.path / "art").iterdir()) == ["session.trace"]


def test_a_finding_is_one_whole_line_under_tb_line(pytester):
    """--tb=line shows a sweep finding's first line whole, as it shows a marker's failure (it
    showed the text cut at 50 characters, twice)."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_u=LEAKY)
    r = pytester.runpytest_subprocess(*DEVICE, "--clpool-oom-sweep", "-k", "upload", "--tb=line")
    out = r.stdout.str()
    assert re.search(
        r"test_u.py:\d+: test_upload\[oom-sweep:alloc:2\]: clpool oom sweep: test_u.py::test_upload "
        r"with its allocation 2 failing: leaked: 1 MiB \(1048576 bytes\)",
        out,
    ), out


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
def test_a_conftests_own_options_reach_the_runs(pytester, xdist):
    """A suite whose fixture needs its conftest's option: the child runs get it as given (every
    run failed without any fault before), and only it (not -n)."""
    pytester.makeconftest(
        CONFTEST
        + """
def pytest_addoption(parser):
    parser.addoption("--scale", type=int, default=None)
    parser.addoption("--fast", action="store_true")
    parser.addoption("--tag", action="append", default=[])

@pytest.fixture
def scale(request):
    got = [request.config.getoption(o) for o in ("--scale", "--fast", "--tag")]
    assert got == [2, True, ["a b", "c"]], got
    return got[0]
"""
    )
    pytester.makepyfile(
        test_sc="""
import numpy as np
import pyopencl as cl

def test_scaled(queue, scale):
    b = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, scale << 20)
    cl.enqueue_copy(queue, b, np.zeros(scale << 18, np.float32))
"""
    )
    args = ["--scale", "2", "--fast", "--tag", "a b", "--tag", "c"]
    r = pytester.runpytest_subprocess(*DEVICE, "--clpool-oom-sweep", *args, *xdist)
    out = r.stdout.str()
    assert (
        "clpool oom sweep: 2 runs: crashed 0, hung 0, leaked 0, unhandled 0, handled 2" in out
    ), out


def test_deselected_tests_are_not_run(pytester):
    """Counting a test runs it: not for a test -k or -m left out, nor under --collect-only."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_u=LEAKY)
    for args in (["-k", "upload"], ["--collect-only"]):
        r = pytester.runpytest_subprocess(*DEVICE, "--clpool-oom-sweep", *args)
        assert not (pytester.path / "ran.log").exists(), (args, r.stdout.str())
    assert "<Function test_other>" in r.stdout.str()  # still listed by --collect-only


def test_a_signal_with_no_name_is_a_crash(pytester):
    """A real-time signal has a number and no name in Python's signal.Signals: still a crash
    (it was a ValueError in the plugin, and no verdict)."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_rt="""
import os, signal
import pyopencl as cl

def test_rt(queue):
    try:
        cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 1 << 20)
    except cl.Error:
        os.kill(os.getpid(), signal.SIGRTMIN + 2)
"""
    )
    r = pytester.runpytest_subprocess(*DEVICE, "--clpool-oom-sweep")
    out = r.stdout.str()
    assert "crashed 1, hung 0" in out, out
    assert f"the process was killed by signal {int(signal.SIGRTMIN) + 2}" in out, out


def test_a_test_without_device_memory_has_no_runs(pytester):
    pytester.makepyfile(test_n="def test_nothing():\n    pass\n")
    r = pytester.runpytest_subprocess(*DEVICE, "--clpool-oom-sweep")
    assert r.ret == 5, r.stdout.str()  # no tests: no failure point, nothing ran
    assert "clpool oom sweep: 0 runs" in r.stdout.str()


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--clpool-oom-sweep-timeout", "0"],
            "--clpool-oom-sweep-timeout: 0 is not a number of seconds above 0",
        ),
        (
            ["--clpool-oom-sweep-timeout", "nan"],
            "--clpool-oom-sweep-timeout: nan is not a number of seconds above 0",
        ),
        (
            ["--clpool-oom-sweep-timeout", "1e300"],
            "--clpool-oom-sweep-timeout: 1e+300 is more than a week (604800 s)",
        ),
        (
            ["--clpool-oom-sweep-run", "alloc:0", "--clpool-oom-sweep-result", "r.json"],
            "--clpool-oom-sweep-run: 'alloc:0' is not count, alloc:N or first-use:N",
        ),
        (
            ["--clpool-oom-sweep-run", "first_use:1"],
            "--clpool-oom-sweep-run: 'first_use:1' is not count, alloc:N or first-use:N",
        ),
        (
            ["--clpool-oom-sweep-run", "alloc:1x"],
            "--clpool-oom-sweep-run: 'alloc:1x' is not count, alloc:N or first-use:N",
        ),
        (
            ["--clpool-oom-sweep-result", "r.json"],
            "--clpool-oom-sweep-result: only with --clpool-oom-sweep-run",
        ),
    ],
)
def test_bad_sweep_options(pytester, args, message):
    pytester.makepyfile(test_n="def test_nothing():\n    pass\n")
    r = pytester.runpytest_subprocess(*DEVICE, *args)
    assert r.ret == 4 and message in r.stderr.str(), r.stdout.str() + r.stderr.str()


def test_the_sweeps_rules_are_the_engines():
    """The plugin's sweep asks clpool._core for clpool sweep's rules (common/sweep_rules.h,
    common/cl_status.h) rather than keeping copies."""
    from clpool import _core
    from clpool import _plugin_sweep as sweep

    assert _core.out_of_memory_status_names() == [
        "CL_MEM_OBJECT_ALLOCATION_FAILURE",
        "CL_OUT_OF_RESOURCES",
        "CL_OUT_OF_HOST_MEMORY",
    ]
    assert sweep.names_an_oom(
        "RuntimeError", "clEnqueueMigrateMemObjects failed: MEM_OBJECT_ALLOCATION_FAILURE"
    )
    assert sweep.names_an_oom("pyopencl._cl.MemoryError", "")
    assert not sweep.names_an_oom("RuntimeError", "clCreateBuffer failed: INVALID_BUFFER_SIZE")
    assert _core.parse_sweep_point("first-use:3") == ("first-use", 3)
    assert _core.parse_sweep_point("alloc:12") == ("alloc", 12)
    for bad in ("count", "alloc:0", "alloc:", "first_use:1", "alloc:1x", ""):
        assert _core.parse_sweep_point(bad) is None, bad
    assert _core.sweep_timeout_problem(5.0) == ""
    assert _core.sweep_timeout_problem(float("inf")) == "is more than a week (604800 s)"
    assert _core.sweep_fault_free_limit(None) is None
    assert _core.sweep_fault_free_limit(1.0) == 60.0
    assert _core.sweep_fault_free_limit(7.5) == 75.0
    assert _core.sweep_run_timeout(None, 0.2) == 10.0
    assert _core.sweep_run_timeout(None, 2.5) == 25.0
    assert _core.sweep_run_timeout(3.0, 100.0) == 3.0
    assert _core.signal_text(11) == "signal 11 (SIGSEGV)"
    assert _core.MAX_DEVICE_BYTES == 1 << 62 == _core.parse_size(1 << 62)
    assert _core.signal_text(int(signal.SIGRTMIN) + 2) == f"signal {int(signal.SIGRTMIN) + 2}"
