"""clpool.pytest_plugin against what a new user's own suite does to it (issue 38), each case alone
and, where workers change what can go wrong, under pytest-xdist too: sites through a helper of the
user's, artifact paths in every form, every wrong setting naming its one cause before any test
runs, artifacts that cannot be written costing nothing else, a session trace lost, hostile names,
the summary and --tb=line, device_capacity above the session's device, a block refused at first
use, and threads that were running before the test. Run by run_plugin_test.sh, as
pytest_plugin_test.py is.
"""
import os
import re
import shutil

import pytest

PLUGIN = ["-p", "clpool.pytest_plugin", "-p", "no:cacheprovider"]
DEVICE = PLUGIN + ["--clpool-device", "nvidia:1GiB"]
SERIAL_AND_XDIST = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]

CONFTEST = """
import pytest, pyopencl as cl

@pytest.fixture(scope="session")
def queue():
    return cl.CommandQueue(cl.create_some_context(interactive=False))

MiB = 1 << 20

def commit(queue, b):
    cl.enqueue_migrate_mem_objects(queue, [b], cl.mem_migration_flags.CONTENT_UNDEFINED)
    return b
"""

HELPER_SUITE = """
import pyopencl as cl, pytest
from conftest import commit, MiB

cache = []

def _buf(queue, n):
    return commit(queue, cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, n))

def remember_forever(queue):
    cache.append(_buf(queue, 2 * MiB))

def big_scratch(queue):
    out = []
    for _ in range(3):
        out.append(_buf(queue, 4 * MiB))
    return out

@pytest.mark.limit_device_leaks("1 MiB")
def test_leaks_into_a_cache(queue):
    remember_forever(queue)

@pytest.mark.limit_device_memory("8 MiB")
def test_peaks(queue):
    big_scratch(queue)
"""


def run(pytester, *args):
    return pytester.runpytest_subprocess(*args)


def everything(r):
    return r.stdout.str() + r.stderr.str()


def no_crash(r):
    out = everything(r)
    assert "INTERNALERROR" not in out and "crashed" not in out and "Traceback" not in out, out


# --- sites that name the user's code ---


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
def test_a_helper_is_named_with_its_callers_down_to_the_test(pytester, xdist):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_x=HELPER_SUITE)
    r = run(pytester, *DEVICE, *xdist)
    out = r.stdout.str()
    assert r.ret == 1, out
    leak = (
        r"_buf \(test_x\.py:7\) ← remember_forever \(test_x\.py:10\) ← "
        r"test_leaks_into_a_cache \(test_x\.py:20\)"
    )
    peak = r"_buf \(test_x\.py:7\) ← big_scratch \(test_x\.py:15\) ← test_peaks \(test_x\.py:24\)"
    assert re.search(
        r"sites of the blocks still allocated:\n  1\. " + leak + r"\n\s+2 MiB", out
    ), out
    assert re.search(
        r"sites holding the most device memory at the peak:\n  1\. " + peak + r"\n\s+12 MiB", out
    ), out
    summary = out[out.index("clpool device memory") :]
    assert re.search(r"test_x\.py::test_peaks\n\s+" + peak + ": 12 MiB", summary), summary
    assert re.search(
        r"test_x\.py::test_leaks_into_a_cache\n\s+" + leak + ": 2 MiB", summary
    ), summary


@pytest.mark.parametrize(
    "frames,want",
    [
        ("1", r"_buf \(test_x\.py:7\)\n"),
        ("2", r"_buf \(test_x\.py:7\) ← remember_forever \(test_x\.py:10\)\n"),
    ],
)
def test_site_frames_sets_the_depth(pytester, frames, want):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_x=HELPER_SUITE)
    r = run(pytester, *DEVICE, "--clpool-site-frames", frames)
    assert re.search(
        r"sites of the blocks still allocated:\n  1\. " + want, r.stdout.str()
    ), r.stdout.str()


# --- pytest-xdist, and artifact paths in every form ---


def _artifact_forms(pytester):
    outside = pytester.path.parent / (pytester.path.name + "-art")
    shutil.rmtree(outside, ignore_errors=True)
    return {"absolute": str(outside), "relative": "art"}


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
@pytest.mark.parametrize("where", ["absolute", "relative"])
@pytest.mark.parametrize("form", ["space", "equals"])
@pytest.mark.parametrize("existing", [False, True], ids=["new", "existing"])
def test_any_artifacts_path(pytester, xdist, where, form, existing):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_x=HELPER_SUITE)
    path = _artifact_forms(pytester)[where]
    if existing:
        os.makedirs(os.path.join(pytester.path, path), exist_ok=True)
    opt = ["--clpool-artifacts", path] if form == "space" else [f"--clpool-artifacts={path}"]
    r = run(pytester, *DEVICE, *xdist, *opt)
    no_crash(r)
    out = r.stdout.str()
    assert r.parseoutcomes() == {"failed": 2}, out
    assert f"rootdir: {pytester.path}" in out, out
    art = pytester.path / path
    for test in ("test_leaks_into_a_cache", "test_peaks"):
        assert (art / f"test_x.py%3A%3A{test}" / "device.html").is_file(), sorted(os.listdir(art))
    traces = sorted(p.name for p in art.glob("session*.trace"))
    assert traces == (
        ["session-gw0.trace", "session-gw1.trace"] if xdist else ["session.trace"]
    ), traces


def test_an_existing_outside_folder_that_would_hide_the_ini_file_is_named(pytester):
    """pytest takes `--clpool-artifacts DIR` for a test path before clpool's options are known; when
    that would make it miss the suite's ini file, clpool says so and what to write."""
    pytester.makeini("[pytest]\nmarkers =\n    slow: a marker of the suite's\n")
    pytester.makepyfile(test_x="def test_it():\n    pass\n")
    outside = pytester.path.parent / (pytester.path.name + "-art")
    outside.mkdir(exist_ok=True)
    r = run(pytester, *DEVICE, "--clpool-artifacts", str(outside))
    assert r.ret == 4, everything(r)
    assert "pytest read this existing path as a test path" in r.stderr.str()
    assert f"write the option with '=' (--clpool-artifacts={outside})" in r.stderr.str()
    r = run(pytester, *DEVICE, f"--clpool-artifacts={outside}")
    assert r.ret == 0, everything(r)


# --- every error names its cause, once, before any test runs ---


def _bad_library(pytester, kind):
    layer, mock = os.environ["LIBCLPOOL_LAYER_SO"], os.environ["LIBMOCKCL_SO"]
    cut = pytester.path / "cut.so"
    with open(layer if kind.startswith("layer") else mock, "rb") as f:
        cut.write_bytes(f.read(5000))
    return {
        "layer_missing": (
            "LIBCLPOOL_LAYER_SO",
            str(pytester.path / "nope.so"),
            "which does not exist",
        ),
        "layer_cut": ("LIBCLPOOL_LAYER_SO", str(cut), "cannot be used: "),
        "layer_is_the_mock": ("LIBCLPOOL_LAYER_SO", mock, "does not export clGetLayerInfo"),
        "layer_empty": ("LIBCLPOOL_LAYER_SO", "", "$LIBCLPOOL_LAYER_SO is set but empty"),
        "mock_cut": ("LIBMOCKCL_SO", str(cut), "cannot be used: "),
        "mock_is_the_layer": ("LIBMOCKCL_SO", layer, "does not export clIcdGetPlatformIDsKHR"),
    }[kind]


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
@pytest.mark.parametrize(
    "kind",
    [
        "layer_missing",
        "layer_cut",
        "layer_is_the_mock",
        "layer_empty",
        "mock_cut",
        "mock_is_the_layer",
    ],
)
def test_a_library_that_cannot_be_used_is_named(pytester, monkeypatch, xdist, kind):
    pytester.makepyfile(test_x="def test_it():\n    pass\n")
    variable, value, message = _bad_library(pytester, kind)
    monkeypatch.setenv(variable, value)
    r = run(pytester, *DEVICE, *xdist)
    assert r.ret == 4, everything(r)
    err = r.stderr.str()
    assert err.count("ERROR: clpool: ") == 1 and message in err, err
    assert "already initialised" not in err
    no_crash(r)


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
def test_no_platform_says_where_the_loader_looked(pytester, monkeypatch, xdist):
    pytester.makepyfile(test_x="def test_it():\n    pass\n")
    monkeypatch.setenv("OCL_ICD_VENDORS", str(pytester.path / "no-vendors"))
    r = run(pytester, *PLUGIN, "--clpool", *xdist)
    assert r.ret == 4, everything(r)
    assert (
        "ERROR: clpool: the OpenCL ICD loader found no platform (clGetPlatformIDs said -1001): "
        f"it looked in OCL_ICD_VENDORS='{pytester.path / 'no-vendors'}', which does not exist"
    ) in r.stderr.str(), r.stderr.str()
    no_crash(r)


def _profile_file(pytester, kind):
    if kind == "refused":
        bad = pytester.path / "bad.profile"
        bad.write_text("name = bad\noom_at = sometimes\n")
        return (
            str(bad),
            "bad.profile:2: oom_at: 'sometimes' is not creation, first_use or execution",
        )
    if kind == "fifo":
        fifo = pytester.path / "fifo.profile"
        os.mkfifo(fifo)
        return str(fifo), "not a regular file"
    if kind == "directory":
        d = pytester.path / "d.profile"
        d.mkdir()
        return str(d), "not a regular file"
    return "/dev/null", "not a regular file"


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
@pytest.mark.parametrize("kind", ["refused", "fifo", "directory", "devnull"])
def test_a_profile_file_that_cannot_be_used_is_named(pytester, xdist, kind):
    pytester.makepyfile(test_x="def test_it():\n    pass\n")
    path, message = _profile_file(pytester, kind)
    for args in (["--clpool-device", f"{path}:1GiB"], ["--clpool", "--clpool-profile", path]):
        r = run(pytester, *PLUGIN, *args, *xdist)
        assert r.ret == 4, everything(r)
        err = r.stderr.str()
        errors = [line for line in err.splitlines() if line.startswith("ERROR: ")]
        # One line, naming the cause itself (not "see above", not "does not exist").
        assert len(errors) == 1 and message in errors[0] and "does not exist" not in err, err
        no_crash(r)


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--clpool-device", "nvidia:4GB"],
            "--clpool-device 'nvidia:4GB': the capacity '4GB' is ambiguous",
        ),
        (["--clpool-device", ""], "--clpool-device: the value is empty"),
        (["--clpool-artifacts", ""], "--clpool-artifacts: the value is empty"),
        (["--clpool-profile", ""], "--clpool-profile: the value is empty"),
        (["--clpool", "--clpool-summary", "-1"], "--clpool-summary: -1 is negative"),
        (
            ["--clpool", "--clpool-site-frames", "0"],
            "--clpool-site-frames: '0' is not 'auto' or a number",
        ),
        (
            ["--clpool", "--clpool-replay-timeout", "0"],
            "--clpool-replay-timeout: 0 is not a number",
        ),
    ],
    ids=[
        "decimal",
        "empty_device",
        "empty_artifacts",
        "empty_profile",
        "summary",
        "frames",
        "timeout",
    ],
)
def test_a_bad_option_is_one_usage_error(pytester, xdist, args, message):
    pytester.makepyfile(test_x="def test_it():\n    pass\n")
    r = run(pytester, *PLUGIN, *args, *xdist)
    assert r.ret == 4, everything(r)
    err = r.stderr.str()
    assert err.count("ERROR: ") == 1 and message in err, err
    no_crash(r)


def test_a_lone_profile_turns_the_plugin_on(pytester):
    pytester.makepyfile(test_x="def test_it():\n    pass\n")
    r = run(pytester, *PLUGIN, "--clpool-profile", "nvidia")
    assert r.ret == 0 and "clpool device memory" in r.stdout.str(), everything(r)


# --- artifacts never abort a session and never lose anything ---

FAILING = """
import pyopencl as cl, pytest
from conftest import commit, MiB

@pytest.mark.limit_device_memory("1 MiB")
def test_first(queue):
    b = commit(queue, cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 2 * MiB))

def test_second():
    pass
"""


def _artifact_dir(art, test="test_first"):
    return art / f"test_f.py%3A%3A{test}"


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
@pytest.mark.parametrize(
    "obstacle",
    [
        "file_for_the_folder",
        "folder_for_the_trace",
        "link_at_the_trace",
        "link_at_the_report",
        "replay_not_executable",
        "replay_fails",
    ],
)
def test_an_artifact_that_cannot_be_written_is_a_note(pytester, monkeypatch, xdist, obstacle):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_f=FAILING)
    art = pytester.path / "art"
    d = _artifact_dir(art)
    art.mkdir()
    victim = pytester.path / "victim.txt"
    victim.write_text("keep me\n")
    message = {
        "file_for_the_folder": "something other than a directory is there",
        "folder_for_the_trace": "device.trace': Is a directory",
        "link_at_the_trace": "refusing to write through a symbolic link at",
        "link_at_the_report": "refusing to write through a symbolic link at",
        "replay_not_executable": "no page: cannot run",
        "replay_fails": "no page: clpool_replay exited 3: said first; broken",
    }[obstacle]
    if obstacle == "file_for_the_folder":
        d.write_text("in the way\n")
    elif obstacle == "folder_for_the_trace":
        (d / "device.trace").mkdir(parents=True)
    elif obstacle.startswith("link_at"):
        d.mkdir()
        os.symlink(
            victim, d / ("device.trace" if obstacle == "link_at_the_trace" else "replay.txt")
        )
    else:
        tool = pytester.path / "replay-tool"
        tool.write_text("#!/bin/sh\necho said first >&2\necho broken >&2\nexit 3\n")
        if obstacle == "replay_fails":
            tool.chmod(0o755)
        monkeypatch.setenv("CLPOOL_REPLAY", str(tool))
    r = run(pytester, *DEVICE, *xdist, "--clpool-artifacts", str(art))
    no_crash(r)
    out = r.stdout.str()
    assert r.parseoutcomes() == {"failed": 1, "passed": 1}, out
    assert "clpool: peak device memory 2 MiB" in out, out  # the test's own verdict
    assert message in out, out
    assert "artifacts: 1 could not be written in full" in out, out
    assert victim.read_text() == "keep me\n"


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
def test_a_full_disk_is_a_note(pytester, xdist):
    """The files may not grow (RLIMIT_FSIZE, as a full disk) once the test has run: the artifacts
    are notes, the next test runs, and the session trace (already allocated) is not hurt."""
    pytester.makeconftest(
        CONFTEST
        + """
import resource, signal

@pytest.fixture
def full_disk():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    yield lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
"""
    )
    # 200 blocks: the test's trace is larger than the 4 KiB a file may now grow to.
    pytester.makepyfile(
        test_f=FAILING.replace(
            "def test_first(queue):", "def test_first(queue, full_disk):"
        ).replace(
            "2 * MiB))",
            "2 * MiB))\n    more = [cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 4096) "
            "for _ in range(200)]\n    full_disk()",
        )
    )
    art = pytester.path / "art"
    r = run(pytester, *DEVICE, *xdist, "--clpool-artifacts", str(art))
    no_crash(r)
    out = r.stdout.str()
    assert r.parseoutcomes() == {"failed": 1, "passed": 1}, out
    assert "File too large" in out, out
    assert "artifacts: 1 could not be written in full" in out, out


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
def test_a_hanging_replay_tool_times_out(pytester, monkeypatch, xdist):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_f=FAILING)
    tool = pytester.path / "replay-tool"
    tool.write_text("#!/bin/sh\nexec sleep 600\n")
    tool.chmod(0o755)
    monkeypatch.setenv("CLPOOL_REPLAY", str(tool))
    r = run(pytester, *DEVICE, *xdist, "--clpool-artifacts", "art", "--clpool-replay-timeout", "1")
    no_crash(r)
    out = r.stdout.str()
    assert r.parseoutcomes() == {"failed": 1, "passed": 1}, out
    assert "no page: clpool_replay did not finish in 1 s (--clpool-replay-timeout)" in out, out
    assert r.duration < 60, r.duration


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
def test_every_test_id_has_a_folder_of_its_own(pytester, xdist):
    long = "x" * 160
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_p=f"""
import pyopencl as cl, pytest
from conftest import commit, MiB

@pytest.mark.limit_device_memory("1 MiB")
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6], ids=["a b", "a:b", "a/b", "a_b", "{long}1", "{long}2"])
def test_p(queue, n):
    b = commit(queue, cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, (1 + n) * MiB))
"""
    )
    art = pytester.path / "art"
    r = run(pytester, *DEVICE, *xdist, "--clpool-artifacts", str(art))
    no_crash(r)
    assert r.parseoutcomes() == {"failed": 6}, r.stdout.str()
    folders = [p for p in art.iterdir() if p.is_dir()]
    assert len(folders) == 6, sorted(p.name for p in folders)
    tests = set()
    for f in folders:
        trace = (f / "device.trace").read_text()
        tests.add(re.search(r"^# test: (.*)$", trace, re.M).group(1))
        assert len(f.name) <= 120
    assert len(tests) == 6, tests


# --- a session trace that cannot be written fails the session and never yields false leaks ---


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
def test_a_lost_session_trace_fails_the_session_loudly(pytester, xdist):
    pytester.makeconftest(
        CONFTEST
        + """
import resource, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
# The layer's first chunk of the trace (1 MiB) is already allocated: the next one cannot be.
resource.setrlimit(resource.RLIMIT_FSIZE, (1536 * 1024, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
"""
    )
    pytester.makepyfile(
        test_l="""
import pyopencl as cl, pytest
from conftest import commit, MiB

def test_many(queue):
    for _ in range(30000):
        cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 64)

@pytest.mark.limit_device_leaks("0")
def test_after(queue):
    bufs = [cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 64) for _ in range(800)]
    del bufs
"""
    )
    r = run(pytester, *DEVICE, *xdist, "--clpool-artifacts", "art")
    no_crash(r)
    out = r.stdout.str()
    assert r.ret == 1, out
    assert r.parseoutcomes().get("passed") == 2, out  # the tests themselves passed
    assert "still allocated after it returned" not in out, out  # no false leak
    assert re.search(
        r"error: could not write to the trace file \(.*File too large\); the trace is "
        r"incomplete after event \d+; no device-memory check ran after it, and the "
        r"session fails",
        out,
    ), out


# --- output a terminal can trust ---


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
def test_names_with_terminal_escapes_are_escaped(pytester, xdist):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_e="""
import pyopencl as cl, pytest
from conftest import commit, MiB

source = "def alloc(queue):\\n    return commit(queue, cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 2 * MiB))\\n"
ns = {"commit": commit, "cl": cl, "MiB": MiB}
exec(compile(source, "evil\\x1b[2J.py", "exec"), ns)
alloc = ns["alloc"]
alloc.__code__ = alloc.__code__.replace(co_name="red\\x1b[31m", co_qualname="red\\x1b[31m")

@pytest.mark.limit_device_memory("1 MiB")
def test_escapes(queue):
    b = alloc(queue)
"""
    )
    r = run(pytester, *DEVICE, *xdist)
    out = everything(r)
    assert "\x1b" not in out, repr(out)
    assert "red\\x1B[31m (evil\\x1B[2J.py:2)" in out, out


# --- the summary, --tb=line, device_capacity, refused blocks, threads ---


def test_summary_zero_means_no_table(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_x=HELPER_SUITE)
    r = run(pytester, *DEVICE, "--clpool-summary", "0")
    out = r.stdout.str()
    summary = out[out.index("clpool device memory") :]
    assert "by peak device memory" not in summary and "none allocated" not in summary, summary
    assert "device: mockcl, 1 GiB (1073741824 bytes), nvidia profile" in summary


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
def test_tb_line_and_the_short_summary_carry_the_test_and_the_reason(pytester, xdist):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_x=HELPER_SUITE)
    r = run(pytester, *DEVICE, *xdist, "--tb=line", "-rf")
    out = r.stdout.str()
    assert re.search(
        r"test_x\.py:18: test_leaks_into_a_cache: clpool: 2 MiB \(2097152 bytes\) of device "
        r"memory the test allocated is still allocated after it returned",
        out,
    ), out
    assert re.search(
        r"test_x\.py:22: test_peaks: clpool: peak device memory 12 MiB \(12582912 bytes\) is "
        r"above the limit_device_memory limit of 8 MiB",
        out,
    ), out
    assert "FAILED test_x.py::test_peaks - test_peaks: clpool: peak" in out, out


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
def test_device_capacity_above_the_sessions_device_is_a_usage_error(pytester, xdist):
    pytester.makepyfile(
        test_x="""
import pytest

@pytest.mark.device_capacity("1 GiB")
def test_big():
    pass
"""
    )
    r = run(pytester, *PLUGIN, "--clpool-device", "nvidia:256MiB", *xdist)
    assert r.ret == 4, everything(r)
    assert (
        "test_x.py::test_big: @pytest.mark.device_capacity: 1 GiB (1073741824 bytes) is larger than "
        "this session's device (256 MiB (268435456 bytes), --clpool-device)"
    ) in r.stderr.str()
    no_crash(r)


def test_a_block_refused_at_first_use_is_not_live_nor_in_the_peak(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_r="""
import pyopencl as cl, pytest
from conftest import commit, MiB

@pytest.mark.device_capacity("32 MiB")
def test_refused(queue):
    a = commit(queue, cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 24 * MiB))
    b = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 24 * MiB)
    with pytest.raises(cl.MemoryError):
        commit(queue, b)
"""
    )
    r = run(pytester, *DEVICE)
    out = r.stdout.str()
    assert r.ret == 0, out
    assert re.search(r"^\s+24 MiB\s+0 B\s+2\s+test_r\.py::test_refused$", out, re.M), out


def test_a_sub_buffer_kept_holds_its_parent(pytester):
    # The device keeps a buffer's memory while a sub-buffer of it lives, whatever the program did
    # with the buffer itself: that is a leak of the whole buffer, at the site that made it.
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_s="""
import pyopencl as cl, pytest
from conftest import commit, MiB

kept = []

def whole(queue):
    return commit(queue, cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 8 * MiB))

@pytest.mark.limit_device_leaks("0")
def test_keeps_a_view(queue):
    kept.append(whole(queue).get_sub_region(0, 4096))

@pytest.mark.limit_device_leaks("0")
def test_drops_the_view_too(queue):
    view = whole(queue).get_sub_region(0, 4096)
    del view
"""
    )
    r = run(pytester, *DEVICE)
    out = r.stdout.str()
    no_crash(r)
    assert r.parseoutcomes() == {"failed": 1, "passed": 1}, out
    assert re.search(r"^FAILED test_s\.py::test_keeps_a_view\b", out, re.M), out
    assert (
        "clpool: 8 MiB (8388608 bytes) of device memory the test allocated is still allocated "
        "after it returned"
    ) in out, out
    assert "1. whole (test_s.py:7) ← test_keeps_a_view (test_s.py:11)" in out, out


def test_a_block_refused_in_an_earlier_test_leaves_the_next_ones_artifacts_whole(pytester):
    # test_first's buffer was refused at its first use and kept; test_second drops it and runs
    # out itself. Its device trace must replay (no free of a block the trace never made).
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_k="""
import gc, pyopencl as cl, pytest
from conftest import commit, MiB

held = []

def big(queue, n):
    b = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, n)
    held.append(b)
    return commit(queue, b)

@pytest.mark.device_capacity("64 MiB")
def test_first(queue):
    with pytest.raises(cl.MemoryError):
        big(queue, 100 * MiB)

@pytest.mark.device_capacity("64 MiB")
def test_second(queue):
    held.clear()
    gc.collect()
    big(queue, 40 * MiB)
    big(queue, 40 * MiB)
"""
    )
    art = pytester.path / "art"
    r = run(pytester, *DEVICE, "--clpool-artifacts", str(art))
    out = r.stdout.str()
    no_crash(r)
    assert r.parseoutcomes() == {"failed": 1, "passed": 1}, out
    assert "no page" not in out and "could not be written" not in out, out
    d = art / "test_k.py%3A%3Atest_second"
    assert "OUT OF MEMORY" in (d / "replay.txt").read_text(), out
    assert (d / "device.html").exists(), out


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
def test_threads_running_before_the_test_are_the_sessions(pytester, xdist):
    pytester.makeconftest(
        CONFTEST
        + """
import queue as q, threading

@pytest.fixture(scope="session")
def worker(queue):
    jobs = q.Queue()
    kept = []
    def serve():
        while True:
            n = jobs.get()
            if n is None:
                return
            kept.append(commit(queue, cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, n)))
            jobs.task_done()
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield jobs
    jobs.put(None)
"""
    )
    pytester.makepyfile(
        test_t="""
import pytest
from conftest import MiB

def test_starts_the_session_thread(worker):
    pass

@pytest.mark.limit_device_leaks("1 MiB")
@pytest.mark.limit_device_memory("2 MiB")
def test_asks_the_session_thread(queue, worker):
    worker.put(8 * MiB)
    worker.join()
"""
    )
    r = run(pytester, *DEVICE, *xdist, *(["--dist", "loadfile"] if xdist else []))
    out = r.stdout.str()
    assert r.ret == 0, out
    assert re.search(
        r"the session's: 1 allocation, 8 MiB \(8388608 bytes\), by threads that were running "
        r"before their test began",
        out,
    ), out


# --- xfail: clpool's failure is a failure like any other ---

XFAIL_SUITE = """
import pyopencl as cl, pytest
from conftest import commit, MiB

def grow(queue):
    return [commit(queue, cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 4 * MiB)) for _ in range(3)]

@pytest.mark.xfail(reason="known to peak high")
@pytest.mark.limit_device_memory("8 MiB")
def test_expected_over(queue):
    grow(queue)

@pytest.mark.xfail(reason="known to peak high", strict=True)
@pytest.mark.limit_device_memory("8 MiB")
def test_expected_over_strict(queue):
    grow(queue)

@pytest.mark.xfail(reason="fails and peaks high")
@pytest.mark.limit_device_memory("8 MiB")
def test_expected_over_and_raises(queue):
    grow(queue)
    raise ValueError("its own failure")

@pytest.mark.xfail(reason="was over", strict=True)
@pytest.mark.limit_device_memory("64 MiB")
def test_expected_over_but_within_strict(queue):
    grow(queue)

@pytest.mark.xfail(reason="was over")
@pytest.mark.limit_device_memory("64 MiB")
def test_expected_over_but_within(queue):
    grow(queue)

@pytest.mark.xfail(raises=ValueError, reason="expects a ValueError, not a limit")
@pytest.mark.limit_device_memory("8 MiB")
def test_expects_another_failure(queue):
    grow(queue)

@pytest.mark.xfail(False, reason="condition false: not expected to fail")
@pytest.mark.limit_device_memory("8 MiB")
def test_condition_false(queue):
    grow(queue)
"""


@pytest.mark.parametrize("xdist", SERIAL_AND_XDIST)
def test_xfail_expects_clpools_failure_as_any_other(pytester, xdist):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_x=XFAIL_SUITE)
    r = run(pytester, *DEVICE, *xdist, "-rxXf")
    out = r.stdout.str()
    no_crash(r)
    # Over the limit under xfail (strict or not, or raising too): expected, XFAIL.
    for name in (
        "test_expected_over",
        "test_expected_over_strict",
        "test_expected_over_and_raises",
    ):
        assert re.search(rf"^XFAIL test_x\.py::{name}\b", out, re.M), out
    # Within the limit: XPASS, which fails under strict=True.
    assert re.search(r"^XPASS test_x\.py::test_expected_over_but_within\b", out, re.M), out
    assert re.search(r"^FAILED test_x\.py::test_expected_over_but_within_strict$", out, re.M), out
    assert "[XPASS(strict)] was over" in out, out
    # raises=ValueError expects that exception; a limit is not it. A false condition expects nothing.
    for name in ("test_expects_another_failure", "test_condition_false"):
        assert re.search(rf"^FAILED test_x\.py::{name} - ", out, re.M), out
        assert re.search(
            rf"_ {name} _+\n(\[gw\d\] .*\n)?clpool: peak device memory 12 MiB", out
        ), out
    assert r.parseoutcomes() == {"xfailed": 3, "xpassed": 1, "failed": 3}, out


def test_runxfail_reports_clpools_failure(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_x=XFAIL_SUITE)
    r = run(pytester, *DEVICE, "--runxfail", "-k", "test_expected_over_strict")
    out = r.stdout.str()
    assert r.parseoutcomes() == {"failed": 1, "deselected": 6}, out
    assert re.search(r"_ test_expected_over_strict _+\nclpool: peak device memory 12 MiB", out), out
