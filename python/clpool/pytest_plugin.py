"""clpool's pytest plugin: device-memory budgets for a test suite, with no GPU needed.

    pytest -p clpool.pytest_plugin --clpool-device nvidia:4GiB      # on a mock 4 GiB NVIDIA-like card
    pytest -p clpool.pytest_plugin --clpool                         # on whatever device, observed

    @pytest.mark.limit_device_memory("512 MiB")   # the test's peak device memory
    @pytest.mark.limit_device_leaks("1 MiB")      # device memory the test leaves allocated
    @pytest.mark.device_capacity("2 GiB")         # run it on a smaller card (the session's profile)

Per test: peak device bytes, bytes the test left live, allocations, and the site at the peak; a
summary at the end, sorted by peak; on an out-of-memory, clpool's report instead of a bare
MemoryError; with --clpool-artifacts DIR, each failing test's trace and HTML page. The layer
(tools/layer) records every OpenCL allocation of the process with its Python stack; the plugin
reads that trace at test boundaries (clpool/_device_trace.py). See python/README.md, "pytest".
"""

import gc
import os
import re
import shutil
import subprocess
import time

import pytest

from clpool._device_session import (DeviceSession, SetupError, check_capacity, find_file,
                                    make_workdir, parse_device, parse_profile)
from clpool._device_trace import (MAX_DEVICE_BYTES, TestWindow, TraceFollower, both,
                                  format_bytes, parse_size)

MARKERS = {
    "limit_device_memory": "limit_device_memory(limit): fail the test when its peak device memory "
                           "(its own allocations) exceeds limit, e.g. '512 MiB'",
    "limit_device_leaks": "limit_device_leaks(limit): fail the test when more than limit of the "
                          "device memory it allocated is still allocated when it returns, e.g. '1 MiB'",
    "device_capacity": "device_capacity(capacity, profile=None): run the test on a device of that "
                       "capacity (the session's profile), e.g. '2 GiB'",
}

_KEY = "clpool"


def pytest_addoption(parser):
    g = parser.getgroup("clpool", "device memory (clpool)")
    g.addoption("--clpool", action="store_true", default=False,
                help="observe device memory through the clpool OpenCL layer on whatever OpenCL "
                     "device the tests use")
    g.addoption("--clpool-device", metavar="PROFILE:CAPACITY", default=None,
                help="run the session on a mock OpenCL device (mockcl) with that profile and "
                     "capacity, e.g. nvidia:4GiB (kernels run on POCL where it is installed); "
                     "implies --clpool")
    g.addoption("--clpool-profile", metavar="PROFILE", default=None,
                help="without --clpool-device: the profile by which device_capacity's smaller "
                     "device commits memory (exact, nvidia, pocl or a profile file; default exact)")
    g.addoption("--clpool-artifacts", metavar="DIR", default=None,
                help="write each failing test's trace and its clpool_replay HTML page (and the "
                     "session's trace) under DIR; implies --clpool")
    g.addoption("--clpool-summary", metavar="N", type=int, default=10,
                help="tests in the end summary, by peak device memory (default 10; 0: none)")


def _options(ns):
    return (getattr(ns, "clpool", False), getattr(ns, "clpool_device", None),
            getattr(ns, "clpool_profile", None), getattr(ns, "clpool_artifacts", None))


def _active(ns):
    on, device, _, artifacts = _options(ns)
    return bool(on or device or artifacts)


def _is_xdist_controller(ns):
    return not os.environ.get("PYTEST_XDIST_WORKER") and bool(getattr(ns, "numprocesses", None))


class _State:
    session = None
    follower = None
    workdir = None
    artifacts = None
    replay = None
    error = None


_state = _State()


def pytest_load_initial_conftests(early_config, parser, args):
    """Before any conftest imports pyopencl: set up the device and initialise the ICD loader."""
    ns = early_config.known_args_namespace
    if not _active(ns):
        return
    on, device_text, profile_text, artifacts = _options(ns)
    if artifacts:
        _state.artifacts = os.path.abspath(artifacts)
    if _is_xdist_controller(ns):
        return
    try:
        device = parse_device(device_text) if device_text else None
        if device and profile_text:
            raise SetupError("--clpool-profile: the profile is --clpool-device's when it is given")
        profile = parse_profile(profile_text, "--clpool-profile") if profile_text else "exact"
        worker = os.environ.get("PYTEST_XDIST_WORKER", "")
        _state.workdir = make_workdir()
        session = DeviceSession(device, profile, _state.workdir, worker, _state.artifacts)
        session.prepare()
    except SetupError as e:
        raise pytest.UsageError(f"clpool: {e}") from None
    _state.session = session
    _state.follower = TraceFollower(session.trace_path, str(early_config.rootpath))
    try:
        _state.replay = find_file("CLPOOL_REPLAY", "clpool_replay", "bin")
    except SetupError:
        _state.replay = None


def pytest_configure(config):
    _results.clear()
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    if _active(config.option) and not _is_xdist_controller(config.option) and _state.session is None:
        # Without pytest_load_initial_conftests (the plugin came too late, e.g. from a conftest).
        raise pytest.UsageError(
            "clpool: the plugin must be loaded before conftest files run: pass -p "
            "clpool.pytest_plugin on the command line (or install clpool, whose entry point "
            "loads it), not pytest_plugins in a conftest")


def pytest_unconfigure(config):
    s = _state.session
    if s is not None:
        if _state.follower is not None:
            _state.follower.close()
        s.restore()
        shutil.rmtree(_state.workdir, ignore_errors=True)
        _state.session = None


# --- markers ---

def _marker_value(item, name):
    """The marker's validated value(s), or None; raises pytest.UsageError naming the test."""
    m = item.get_closest_marker(name)
    if m is None:
        return None
    where = f"{item.nodeid}: @pytest.mark.{name}"
    args, kwargs = list(m.args), dict(m.kwargs)
    key = "capacity" if name == "device_capacity" else "limit"
    if key in kwargs:
        args.insert(0, kwargs.pop(key))
    profile = kwargs.pop("profile", None) if name == "device_capacity" else None
    usage = (f"{name}(SIZE{', profile=NAME' if name == 'device_capacity' else ''}) with SIZE a "
             f"string such as '512 MiB' or an int of bytes")
    if kwargs:
        raise pytest.UsageError(f"{where}: unknown argument {sorted(kwargs)[0]!r}; write {usage}")
    if len(args) != 1:
        raise pytest.UsageError(f"{where}: takes one size, got {len(args)} arguments; write {usage}")
    try:
        value = parse_size(args[0])
    except ValueError as e:
        raise pytest.UsageError(f"{where}: the size {e}; write {usage}") from None
    if name == "device_capacity":
        if value == 0:
            raise pytest.UsageError(f"{where}: the capacity must be more than 0")
        if profile is not None and not isinstance(profile, str):
            raise pytest.UsageError(f"{where}: profile must be a string such as 'nvidia'")
        return value, profile
    return value


_bad_marker_key = pytest.StashKey()


def pytest_collection_modifyitems(session, config, items):
    """Checks every marker before any test runs: a bad one is a usage error (exit 4). In an xdist
    worker, where a usage error would crash the worker, the test fails with the message instead."""
    marked = 0
    for item in items:
        try:
            marked += _check_markers(item)
        except pytest.UsageError as e:
            if not os.environ.get("PYTEST_XDIST_WORKER"):
                raise
            item.stash[_bad_marker_key] = str(e)
    if marked and not _active(config.option):
        config.issue_config_time_warning(
            pytest.PytestWarning("clpool: device-memory markers are ignored without --clpool, "
                                 "--clpool-device or --clpool-artifacts"), stacklevel=2)


def _check_markers(item):
    marked = 0
    for name in MARKERS:
        v = _marker_value(item, name)
        if v is None:
            continue
        marked += 1
        if name == "device_capacity" and _state.session is not None:
            capacity, profile = v
            own = _state.session.profile
            if profile is not None and profile != os.path.basename(own) and profile != own:
                how = ("--clpool-device " + profile + ":SIZE") if _state.session.device else (
                    "--clpool-profile " + profile)
                raise pytest.UsageError(
                    f"{item.nodeid}: @pytest.mark.device_capacity(profile={profile!r}): this "
                    f"session's device commits memory by the {os.path.basename(own)} profile; "
                    f"run with {how}")
            try:
                check_capacity(capacity, own, f"{item.nodeid}: @pytest.mark.device_capacity")
            except SetupError as e:
                raise pytest.UsageError(str(e)) from None
    return marked


# --- per test ---

def _window(item):
    return item.stash.get(_window_key, None)


_window_key = pytest.StashKey()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item):
    if _state.session is not None and _bad_marker_key not in item.stash:
        w = TestWindow(_state.follower)
        item.stash[_window_key] = w
        cap = _marker_value(item, "device_capacity")
        w.capacity = cap[0] if cap else None
        w.limit = _marker_value(item, "limit_device_memory")
        w.leak_limit = _marker_value(item, "limit_device_leaks")
        if cap:
            _state.session.set_budget(cap[0])
    yield


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_call(item):
    bad = item.stash.get(_bad_marker_key, None)
    if bad is not None:   # (an xdist worker's) bad marker: the test fails, not the worker
        pytest.fail(f"usage error: {bad}", pytrace=False)
    w = _window(item)
    if w is not None:
        w.mark_call()
    yield
    if w is not None:
        w.follower.sync()
        if w.live_from_call():
            gc.collect()   # blocks reachable only from cycles are not leaks
            w.follower.sync()
            # Some drivers (NVIDIA's) run the destructor callback that records a free after
            # clReleaseMemObject returns: give such frees a moment before counting a leak.
            for _ in range(5):
                if not w.live_from_call():
                    break
                time.sleep(0.002)
                w.follower.sync()


def _site_list(w, sites, title, top=5):
    lines = [title]
    for i, (name, nbytes, blocks, _) in enumerate(sites[:top], 1):
        lines.append(f"  {i}. {name}")
        lines.append(f"     {both(nbytes)} in {blocks} block{'s' if blocks != 1 else ''}")
    if len(sites) > top:
        rest = sum(s[1] for s in sites[top:])
        lines.append(f"  ... {len(sites) - top} more sites, {both(rest)}")
    return lines


def _oom_text(w, item):
    fails = w.failures()
    index, event = fails[0]
    stack, size, where = w.failure_stack(index, event)
    s = _state.session
    cap = w.capacity if w.capacity is not None else s.capacity
    device = (f"{both(cap)}, {os.path.basename(s.profile)} profile"
              + (" (device_capacity marker)" if w.capacity is not None else
                 " (--clpool-device)" if s.device else "")) if cap else s.describe()
    live = w.live_at(index)
    live.pop(w.failing_id(event), None)   # created, but not committed: its first use failed
    lines = [f"clpool: out of device memory: a request of {both(size)} failed {where}",
             f"  device                    {device}",
             f"  live at the failure       {both(sum(b.size for b in live.values()))} in "
             f"{len(live)} block{'s' if len(live) != 1 else ''} ({both(sum(b.size for k, b in live.items() if k in w.before))} "
             f"from before the test)",
             f"  failing request's site    {w.follower.site_name(stack)}"]
    if event.action == "failure":
        lines.append(f"  the layer said            {event.text}")
    lines += _site_list(w, w.sites(live.values()),
                        "sites holding the most device memory at the failure (live blocks, requested bytes):")
    if len(fails) > 1:
        lines.append(f"({len(fails) - 1} more out-of-memory in this test)")
    return lines


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    w = _window(item)
    if w is None:
        return
    report = outcome.get_result()
    if call.when == "call":
        problems = []
        kind = None
        if w.failures() and report.failed:
            problems += _oom_text(w, item)
            kind = "oom"
        limit = w.limit
        peak, at_peak = w.sites_at_peak()
        if limit is not None and peak > limit:
            problems += [f"clpool: peak device memory {both(peak)} is above the "
                         f"limit_device_memory limit of {both(limit)}"]
            problems += _site_list(w, at_peak, "sites holding the most device memory at the peak:")
            kind = kind or "limit"
        leaks = w.leak_limit
        live = w.live_from_call()
        leaked = sum(b.size for b in live.values())
        if leaks is not None and leaked > leaks:
            problems += [f"clpool: {both(leaked)} of device memory the test allocated is still "
                         f"allocated after it returned, above the limit_device_leaks limit of "
                         f"{both(leaks)}"]
            problems += _site_list(w, w.sites(live.values()), "sites of the blocks still allocated:")
            kind = kind or "leak"
        w.figures = {"peak": peak, "leaked": leaked, "top_site": at_peak[0][0] if at_peak else "",
                     "top_site_bytes": at_peak[0][1] if at_peak else 0}
        w.kind = kind
        if problems:
            text = "\n".join(problems)
            if report.failed and report.longrepr is not None:
                text += "\n\n" + str(report.longrepr)
            report.outcome = "failed"
            report.longrepr = text
        if report.failed and _state.artifacts:
            note = _write_artifacts(item, w)
            report.sections.append(("clpool artifacts", note))
    elif call.when == "teardown":
        w.end()
        if w.capacity is not None:
            _state.session.reset_budget()
        figures = w.figures or {"peak": w.peak()[0], "leaked": 0,
                                                  "top_site": "", "top_site_bytes": 0}
        if not figures.get("top_site"):
            _, at_peak = w.sites_at_peak()
            if at_peak:
                figures["top_site"], figures["top_site_bytes"] = at_peak[0][0], at_peak[0][1]
        figures["allocations"] = w.allocations()
        figures["device"] = _state.session.describe()
        report.user_properties.append((_KEY, figures))


def _artifact_dir(nodeid):
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")[:150] or "test"
    return os.path.join(_state.artifacts, name)


def _write_artifacts(item, w):
    d = _artifact_dir(item.nodeid)
    os.makedirs(d, exist_ok=True)
    s = _state.session
    if w.kind == "oom":
        capacity = w.capacity if w.capacity is not None else s.default_budget
        profile, with_before = s.profile, True
    elif w.kind == "limit":
        capacity, profile, with_before = w.limit, "exact", False
    else:
        capacity, profile, with_before = MAX_DEVICE_BYTES, "exact", False
    trace = w.write_trace(os.path.join(d, "device.trace"), item.nodeid, with_before)
    lines = [f"trace: {trace}"]
    if _state.replay is None:
        lines.append("no page: clpool_replay not found (set $CLPOOL_REPLAY or put it on PATH)")
        return "\n".join(lines)
    page = os.path.join(d, "device.html")
    cmd = [_state.replay, trace, "--no-pool", "--profile", profile, "--capacity", str(capacity),
           "--html", page, "--no-progress"]
    r = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    with open(os.path.join(d, "replay.txt"), "w") as f:
        f.write(r.stdout)
    if r.returncode in (0, 1) and os.path.exists(page):
        lines.append(f"page: {page}")
        lines.append(f"replay: {os.path.join(d, 'replay.txt')} "
                     f"({' '.join(os.path.basename(c) if i == 0 else c for i, c in enumerate(cmd))})")
    else:
        lines.append(f"no page: clpool_replay exited {r.returncode}: {r.stderr.strip()[-500:]}")
    return "\n".join(lines)


# --- the summary ---

_results = []


def pytest_runtest_logreport(report):
    if report.when != "teardown":
        return
    for key, value in report.user_properties:
        if key == _KEY:
            _results.append((report.nodeid, value))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not _active(config.option):
        return
    n = config.option.clpool_summary
    tr = terminalreporter
    tr.section("clpool device memory")
    devices = sorted({v.get("device", "") for _, v in _results} - {""})
    if _state.session is not None and not devices:
        devices = [_state.session.describe()]
    for d in devices:
        tr.write_line(f"device: {d}")
    if not _results:
        tr.write_line("no test allocated device memory" if n else "")
        return
    rows = sorted(_results, key=lambda r: (-r[1]["peak"], r[0]))
    shown = [r for r in rows if r[1]["peak"] > 0][:max(n, 0)]
    if not shown:
        tr.write_line(f"{len(rows)} tests, none allocated device memory")
        return
    tr.write_line(f"{len(shown)} of {len(rows)} tests by peak device memory (their own allocations):")
    tr.write_line(f"  {'peak':>10}  {'left live':>10}  {'allocs':>6}  test / top site at the peak")
    for nodeid, v in shown:
        tr.write_line(f"  {format_bytes(v['peak']):>10}  {format_bytes(v['leaked']):>10}  "
                      f"{v.get('allocations', 0):>6}  {nodeid}")
        if v.get("top_site"):
            tr.write_line(f"  {'':>10}  {'':>10}  {'':>6}    {v['top_site']}: "
                          f"{format_bytes(v['top_site_bytes'])}")
    if _state.artifacts:
        tr.write_line(f"artifacts: {_state.artifacts}")
