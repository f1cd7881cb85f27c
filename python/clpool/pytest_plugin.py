"""clpool's pytest plugin: device-memory budgets for a test suite, with no GPU needed.

    pytest -p clpool.pytest_plugin --clpool-device nvidia:4GiB      # on a mock 4 GiB NVIDIA-like card
    pytest -p clpool.pytest_plugin --clpool                         # on whatever device, observed

    @pytest.mark.limit_device_memory("512 MiB")   # the test's peak device memory
    @pytest.mark.limit_device_leaks("1 MiB")      # device memory the test leaves allocated
    @pytest.mark.device_capacity("2 GiB")         # run it on a smaller card (the session's profile)

Per test: peak device bytes, bytes the test left live, allocations, and the sites at the peak; a
summary at the end, sorted by peak; on an out-of-memory, clpool's report instead of a bare
MemoryError; with --clpool-artifacts DIR, each failing test's trace and HTML page. The layer
(tools/layer) records every OpenCL allocation of the process with its Python stack; the plugin
follows that trace through clpool._core (replay/followed_session.h): the figures are the replay
engine's, the names its sites', so a test's artifact trace replayed by clpool_replay says the same.
This module is the manager: options and hooks; each marker's check is in _plugin_marks, the sweep
in _plugin_sweep. See python/README.md.
"""

import gc
import json
import os
import shutil
import sys
import time

import pytest

from clpool import _core
from clpool import _plugin_artifacts as artifacts
from clpool import _plugin_marks as marks
from clpool import _plugin_sweep as sweep
from clpool import _plugin_sweep_child as sweep_child
from clpool import _plugin_options as options
from clpool import _plugin_text as text
from clpool import _plugin_window as window
from clpool._device_session import DeviceSession, SetupError, Settings
from clpool._libraries import find_file
from clpool._device_session import make_workdir, profile_name, trial_session


_KEY = "clpool"
_WORKER_ERROR = "clpool_usage_error"
_WORKER_TRACE_LOST = "clpool_trace_lost"
_WORKER_INACTIVE_MARKERS = "clpool_inactive_markers"
_INACTIVE_NOTE = (
    "clpool: device-memory markers are ignored without --clpool, --clpool-device or "
    "--clpool-artifacts"
)


def pytest_addoption(parser):
    sweep.add_options(options.add_options(parser))


def _is_xdist_controller(ns):
    return not os.environ.get("PYTEST_XDIST_WORKER") and bool(getattr(ns, "numprocesses", None))


class _State:
    """This process's session: None everywhere until the plugin is active in it."""

    settings = None
    session = None  # DeviceSession
    follower = None  # clpool._core._FollowedSession over the layer's trace
    workdir = None
    replay = None  # clpool_replay, or None (then `replay_missing` says why)
    replay_missing = ""
    rootdir = ""
    trace_lost = ""  # why the session's trace stopped ("" while it is whole)
    worker_errors = []  # the controller's: usage errors the workers found in markers
    worker_trace_lost = []
    child = None  # a sweep's child run (--clpool-oom-sweep-run): _plugin_sweep_child.ChildRun
    sweep_dir = None  # the sweep's scratch folder, where this process made it (open_session_dir)
    inactive_markers = False  # tests carry markers the inactive plugin ignores (one note)
    setting_up = None  # the test whose setup is under way (pytest_runtest_setup)
    function_fixtures = False  # whether a function-scoped fixture of it has been set up yet


_state = _State()
_results = []


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Before any conftest imports pyopencl: the options checked (in the xdist controller too, so
    that a bad one is one usage error), then the device set up and the ICD loader initialised."""
    sweep.note_options_before_conftests(parser)
    try:
        settings = Settings(early_config.known_args_namespace)
    except SetupError as e:
        raise pytest.UsageError(f"clpool: {e}") from None
    if not settings.active:
        return
    problem = options.restore_rootdir(early_config)
    if problem:
        raise pytest.UsageError(f"clpool: {problem}")
    _state.settings = settings
    if _is_xdist_controller(early_config.known_args_namespace):
        options.rewrite_for_workers(early_config)
        problem = trial_session(settings)
        if problem:
            raise pytest.UsageError(f"clpool: {problem}")
    else:
        _start_session(settings, str(early_config.rootpath))
    if settings.oom_sweep and not settings.sweep_run and not os.environ.get("PYTEST_XDIST_WORKER"):
        _state.sweep_dir = sweep.open_session_dir()  # before xdist starts its workers


def _start_session(settings, rootdir):
    workdir = make_workdir()
    try:
        session = DeviceSession(settings, workdir, os.environ.get("PYTEST_XDIST_WORKER", ""))
        session.prepare()
    except SetupError as e:
        shutil.rmtree(workdir, ignore_errors=True)
        raise pytest.UsageError(f"clpool: {e}") from None
    _state.workdir = workdir
    _state.session = session
    _state.follower = _core._FollowedSession(session.trace_path, session.layer_path)
    _state.rootdir = os.path.realpath(rootdir)
    if settings.sweep_run:
        _state.child = sweep_child.ChildRun(
            settings.sweep_run, settings.sweep_result, session.layer
        )
    try:
        _state.replay = find_file("CLPOOL_REPLAY", "clpool_replay", "bin")
        if _state.replay is None:
            _state.replay_missing = "clpool_replay not found (set $CLPOOL_REPLAY or put it on PATH)"
    except SetupError as e:
        _state.replay, _state.replay_missing = None, str(e)


def pytest_configure(config):
    _results.clear()
    _sweep_verdicts.clear()
    for name, doc in marks.MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")
    if _state.settings is None and not _is_xdist_controller(config.option):
        try:
            late = Settings(config.option).active
        except SetupError:
            late = True
        if late:  # without pytest_load_initial_conftests: the plugin came too late (a conftest)
            raise pytest.UsageError(
                "clpool: the plugin must be loaded before conftest files run: pass -p "
                "clpool.pytest_plugin on the command line (or install clpool, whose entry point "
                "loads it), not pytest_plugins in a conftest"
            )


def pytest_unconfigure(config):
    s = _state.session
    if s is not None:
        s.restore()
        shutil.rmtree(_state.workdir, ignore_errors=True)
    if _state.sweep_dir is not None:
        sweep.close_session_dir(_state.sweep_dir)
    _state.session = _state.follower = _state.settings = _state.child = _state.sweep_dir = None
    _state.trace_lost = ""
    _state.worker_errors = []
    _state.worker_trace_lost = []
    _state.inactive_markers = False


_marks_key = pytest.StashKey()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    """Checks every marker of the tests that will run (after -k and -m) before any runs: a bad
    one is a usage error (exit 4). An xdist worker, where a usage error would crash it, runs
    nothing and tells the controller, which says it once and exits 4. The inactive plugin only
    notes, once, that markers are there (a line at the end, not a warning: -W error would turn a
    warning raised here into an internal error)."""
    if _state.settings is None:
        if any(item.get_closest_marker(name) for item in items for name in marks.MARKERS):
            _state.inactive_markers = True
            getattr(config, "workeroutput", {})[_WORKER_INACTIVE_MARKERS] = True
        return
    for item in items:
        values = {}
        try:
            for name, check in marks.CHECKS.items():
                values[name] = check(item, _state.session or _state.settings)
        except pytest.UsageError as e:
            if not os.environ.get("PYTEST_XDIST_WORKER"):
                raise
            getattr(config, "workeroutput", {})[_WORKER_ERROR] = str(e)
            items[:] = []
            return
        item.stash[_marks_key] = values
    # Not under --collect-only: counting a test runs it.
    if (
        _state.settings.oom_sweep
        and not _state.settings.sweep_run
        and not config.option.collectonly
    ):
        sweep.expand(session, config, items, _state.settings.sweep_timeout)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    out = getattr(node, "workeroutput", {}) or {}
    if out.get(_WORKER_ERROR) and out[_WORKER_ERROR] not in _state.worker_errors:
        _state.worker_errors.append(out[_WORKER_ERROR])
    if out.get(_WORKER_TRACE_LOST):
        _state.worker_trace_lost.append(out[_WORKER_TRACE_LOST])
    if out.get(_WORKER_INACTIVE_MARKERS):
        _state.inactive_markers = True


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    if _state.trace_lost and hasattr(session.config, "workeroutput"):
        session.config.workeroutput[_WORKER_TRACE_LOST] = _state.trace_lost
    if _state.child is not None:
        _state.child.write()
    yield
    if _state.worker_errors:
        sys.stderr.write(f"ERROR: {_state.worker_errors[0]}\n")
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
    elif (
        _state.trace_lost or _state.worker_trace_lost
    ) and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# --- per test ---


_window_key = pytest.StashKey()


def _sync():
    """Reads what the layer added; the first time the trace is found incomplete, keeps why."""
    if _state.trace_lost:
        return False
    _state.trace_lost = _state.follower.sync()
    return not _state.trace_lost


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item):
    if _state.session is not None and _marks_key in item.stash:
        w = window.Window(item.stash[_marks_key])
        item.stash[_window_key] = w
        # Each phase is marked at the seq the layer will give its next event; the trace is read
        # once a test, at the end of its call, and what it holds sorts into the phases by seq.
        _state.follower.begin_window()
        if w.capacity:
            _state.session.set_budget(w.capacity[0])
        if _state.child is not None:
            _state.child.begin()
    _state.setting_up, _state.function_fixtures = item, False
    try:
        yield
    finally:
        _state.setting_up = None


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """A session-, package-, module- or class-scoped fixture that a test's setup creates holds
    memory for the tests after it too: the test's window begins again after it. pytest sets up a
    test's wider-scoped fixtures before its function-scoped ones, so none of the test's own is
    left out (one a function fixture requests itself, later, still counts against the test)."""
    yield
    item = _state.setting_up
    if item is None or _window_key not in item.stash:
        return
    if fixturedef.scope == "function":
        _state.function_fixtures = True
    elif not _state.function_fixtures:
        _state.follower.begin_window()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_call(item):
    w = item.stash.get(_window_key, None)
    if w is not None:
        _state.follower.mark_call()
    yield
    if w is None:
        return
    _state.follower.mark_call_end()
    if _sync():
        _count_left_live(w, item)


def _count_left_live(w, item):
    """The test's figures as of now, its blocks still live counted once frees have landed."""
    w.figures = window.figures(w, item, _state)
    if w.figures["left_live"]:
        gc.collect()  # blocks reachable only from cycles are not leaks
        # Some drivers (NVIDIA's) run the callback that records a free after clReleaseMemObject
        # returns: give such frees a moment before counting a leak.
        for _ in range(5):
            _state.follower.mark_call_end()
            _sync()
            w.figures = window.figures(w, item, _state)
            if not w.figures["left_live"]:
                break
            time.sleep(0.002)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item):
    w = item.stash.get(_window_key, None)
    if (
        _state.child is not None
        and w is not None
        and w.figures is not None
        and w.figures["left_live"]
    ):
        # A sweep run's leak is counted again once pytest has let go of the test's exception,
        # whose frames hold what the code under test held when it failed (a caller that handled
        # the exception would have dropped it); the function's fixtures are still alive.
        sweep_child.forget_last_exception()
        _state.follower.mark_call_end()
        if _sync():
            _count_left_live(w, item)
            _state.child.recount(w.figures)


def _problems(w, report):
    f = w.figures
    problems = []
    if f["oom"] is not None and report.failed:
        s = _state.session
        cap = w.capacity[0] if w.capacity else s.capacity
        device = (
            (
                f"{_core.format_bytes_both(cap)}, {profile_name(s.profile)} profile"
                + (
                    " (device_capacity marker)"
                    if w.capacity
                    else " (--clpool-device)"
                    if s.device
                    else ""
                )
            )
            if cap
            else s.describe()
        )
        problems += text.oom_lines(f["oom"], device)
        w.kind = "oom"
    if w.limit is not None and f["peak"] > w.limit:
        problems += text.limit_lines(f, w.limit)
        w.kind = w.kind or "limit"
    if w.leak_limit is not None and f["left_live"] > w.leak_limit:
        problems += text.leak_lines(f, w.leak_limit)
        w.kind = w.kind or "leak"
    return problems


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    w = item.stash.get(_window_key, None)
    if w is None:
        return
    report = outcome.get_result()
    if _state.child is not None:
        _state.child.phase_report(call, report)
        if call.when == "call":
            _state.child.figures(w.figures)
        elif call.when == "teardown":
            _state.child.end(report)
    if call.when == "call":
        if _state.trace_lost:
            report.sections.append(("clpool", f"no device-memory figures: {_state.trace_lost}"))
            return
        problems = _problems(w, report) if w.figures is not None else []
        if problems:
            marks.fail(item, call, report, problems)
        if report.failed and _state.settings.artifacts:
            report.sections.append(("clpool artifacts", _write_artifacts(item, w)))
    elif call.when == "setup" and report.failed and not _state.trace_lost:
        # A fixture that ran out of device memory: the same report as the test's own.
        if _sync():
            w.figures = window.figures(w, item, _state)
        if _state.child is not None:
            _state.child.figures(w.figures)
        if w.figures is not None and w.figures["oom"] is not None:
            report.longrepr = text.longrepr(item, _problems(w, report), report.longrepr)
            if _state.settings.artifacts:
                report.sections.append(("clpool artifacts", _write_artifacts(item, w)))
    elif call.when == "teardown":
        _end_test(item, w, report)


def _end_test(item, w, report):
    if w.figures is None and _sync():  # no call phase (a setup error): what it did
        w.figures = window.figures(w, item, _state)
    _state.follower.end_window()
    if w.capacity:
        _state.session.reset_budget()
    if w.figures is None:
        return
    f = w.figures
    # As JSON text: what --junitxml writes as the property's value is then JSON, not a repr.
    report.user_properties.append(
        (
            _KEY,
            json.dumps(
                {
                    "peak": f["peak"],
                    "left_live": f["left_live"],
                    "allocations": f["allocations"],
                    "peak_sites": [list(s) for s in f["peak_sites"][:1]],
                    "other_thread_allocations": f["other_thread_allocations"],
                    "other_thread_bytes": f["other_thread_bytes"],
                    "other_thread_sites": [list(s) for s in f["other_thread_sites"][:3]],
                    "device": _state.session.describe(),
                    "artifact_errors": w.artifact_errors,
                },
                sort_keys=True,
            ),
        )
    )


def _write_artifacts(item, w):
    """The test's trace, its replay's report and page (clpool/_plugin_artifacts.py); what to say."""
    lines, errors = artifacts.write(
        _state.follower,
        _state.session,
        _state.settings,
        _state.replay,
        _state.replay_missing,
        item.nodeid,
        w.kind,
        w.capacity[0] if w.capacity else None,
        w.limit,
        window.other_threads(w, _state),
    )
    w.artifact_errors += errors
    return "\n".join(lines)


# --- the summary ---

_sweep_verdicts = []


def pytest_runtest_logreport(report):
    if report.when == "call":
        _sweep_verdicts.extend(v for k, v in report.user_properties if k == "clpool_oom_sweep")
    if report.when != "teardown":
        return
    for key, value in report.user_properties:
        if key == _KEY:
            _results.append((report.nodeid, json.loads(value)))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _state.settings is None and _state.inactive_markers:
        terminalreporter.write_line(_INACTIVE_NOTE)
    if _state.settings is None or _state.worker_errors:
        return
    if _state.settings.oom_sweep:
        sweep.terminal_summary(terminalreporter, config, _sweep_verdicts)
        return
    notes = []
    for lost in ([_state.trace_lost] if _state.trace_lost else []) + _state.worker_trace_lost:
        notes.append(f"error: {lost}; no device-memory check ran after it, and the session fails")
    errors = sum(v.get("artifact_errors", 0) for _, v in _results)
    if errors:
        notes.append(
            f"artifacts: {errors} could not be written in full (each test's 'clpool "
            f"artifacts' section says why)"
        )
    if _state.child is not None and not _state.child.result_path:
        # A finding's replay line typed by hand: what the run found (its figures only while the
        # trace held: a lost trace's note says why there are none), and the notes.
        terminalreporter.section("clpool oom sweep run")
        found = [] if _state.trace_lost else _state.child.summary_lines()
        for line in found + notes:
            terminalreporter.write_line(line)
        return
    devices = sorted({v.get("device", "") for _, v in _results} - {""})
    if _state.session is not None and not devices:
        devices = [_state.session.describe()]
    text.summary(
        terminalreporter,
        _results,
        devices,
        _state.settings.summary,
        _state.settings.artifacts,
        notes,
    )
