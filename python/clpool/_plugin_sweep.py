"""clpool.pytest_plugin's --clpool-oom-sweep: every out-of-memory a test can meet, tried one by one.

Each selected test runs once in a subprocess to count its failure points (its device allocations
and, where the session's profile fails there, its buffers' first uses, from its setup to its
teardown), then once per point in a subprocess with the layer failing exactly that point and
keeping the device full until the test frees memory (clpool_layer_arm: PyOpenCL retries a failed
request once after a garbage collection, which a real full device would refuse again). The
(test, point) runs are pytest items of their own, so pytest-xdist distributes them. A run passes
when the test passes or fails with an exception that names an out-of-memory, leaves no more device
memory allocated than its fault-free run, and neither crashes nor hangs the process.

The counts are made once per session (with xdist, by the first worker to need them, the others
reading them: a lock file keyed by xdist's test run id).
"""

import fcntl
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from clpool import _core
from clpool import _plugin_text as text

# What an exception's text says when it ran out of memory: an out-of-memory status by the engine's
# rule (common/cl_status.h; PyOpenCL spells CL_MEM_OBJECT_ALLOCATION_FAILURE without "CL_"), or
# the words.
OOM_WORDS = tuple(name.removeprefix("CL_") for name in _core.out_of_memory_status_names()) + (
    "out of memory",
    "out of device memory",
)
OOM_TYPES = ("MemoryError", "OutOfMemoryError")
_XDIST_VARIABLES = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_TESTRUNUID", "PYTEST_XDIST_WORKER_COUNT")


def names_an_oom(typename, message):
    """Whether a test's exception says it ran out of memory (PyOpenCL's MemoryError, a
    RuntimeError with the status, clpool's or CuPy's OutOfMemoryError)."""
    return typename.split(".")[-1] in OOM_TYPES or any(
        w.lower() in message.lower() for w in OOM_WORDS
    )


def add_options(g):
    """The sweep's options, in the plugin's option group."""
    g.addoption(
        "--clpool-oom-sweep",
        action="store_true",
        default=False,
        help="instead of running each selected test, try every out-of-memory it can meet: "
        "it runs once to count its device allocations and first uses, then once per "
        "point with that point failing, each in a subprocess (an item of its own, which "
        "pytest-xdist distributes); implies --clpool",
    )
    g.addoption(
        "--clpool-oom-sweep-timeout",
        metavar="SECONDS",
        type=float,
        default=None,
        help="a sweep run is hung after this long (default: ten times the test's fault-free "
        "run, at least 10 s)",
    )
    g.addoption(
        "--clpool-oom-sweep-run",
        metavar="count|alloc:N|first-use:N",
        default=None,
        help="(one sweep run, as --clpool-oom-sweep starts it and its report's replay line "
        "names it)",
    )
    g.addoption(
        "--clpool-oom-sweep-result",
        metavar="FILE",
        default=None,
        help="(where that run writes what happened)",
    )


# --- the child: one test, counted or with one point failing ---


# --- the parent: counting, then one item per (test, point) ---


def child_command(config, nodeid, what, result_path):
    """The pytest command line of one child run, as the user could type it again."""
    s = config.getoption
    args = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "clpool.pytest_plugin",
        "-p",
        "no:cacheprovider",
        "-q",
        "--tb=short",
        "--clpool-summary",
        "0",
    ]
    if config.pluginmanager.hasplugin("xdist"):
        args += ["-n", "0"]
    if s("clpool_device"):
        args += ["--clpool-device", s("clpool_device")]
    elif s("clpool_profile"):
        args += ["--clpool-profile", s("clpool_profile")]
    else:
        args += ["--clpool"]
    if _BEFORE_CONFTESTS:  # else unknown which are the conftests' (none is passed on)
        args += conftest_options(config, _BEFORE_CONFTESTS)
    args += [f"--clpool-oom-sweep-run={what}", f"--clpool-oom-sweep-result={result_path}", nodeid]
    return args


def _all_options(parser):
    return [opt for group in parser._groups + [parser._anonymous] for opt in group.options]


_BEFORE_CONFTESTS = set()  # the options registered before the initial conftests loaded


def note_options_before_conftests(parser):
    """Called before the initial conftests load, so that conftest_options() can tell theirs."""
    _BEFORE_CONFTESTS.clear()
    _BEFORE_CONFTESTS.update(id(opt) for opt in _all_options(parser))


def conftest_options(config, before):
    """The options a conftest added (`before`: _BEFORE_CONFTESTS) that this session
    gives a value other than their default, as command-line words for a child run: without
    them a suite whose fixtures need its own option fails in every run. Other options are not
    passed on (a --junitxml, -n, --lf would act in the child too)."""
    words = []
    for opt in _all_options(config._parser):
        if id(opt) in before or not opt.names():
            continue
        attrs = opt.attrs()
        dest, default = attrs.get("dest"), attrs.get("default")
        value = config.getoption(dest, default) if dest else default
        if value == default or value is None:
            continue
        name = (opt._long_opts or opt._short_opts)[0]
        action = attrs.get("action", "store")
        if action in ("store_true", "store_false", "store_const"):
            words.append(name)
        elif action == "count":
            words += [name] * (value - (default or 0))
        elif action == "append":
            words += [f"{name}={v}" for v in value[len(default or []) :]]
        else:
            words.append(f"{name}={value}")
    return words


def child_env(workdir):
    env = dict(os.environ)
    for v in _XDIST_VARIABLES:
        env.pop(v, None)
    # What a child leaves in its temporary folder (a crashed or hung one cannot clean up) goes
    # with the session's scratch folder.
    env["TMPDIR"] = workdir
    return env


def run_child(config, nodeid, what, workdir, timeout):
    """(result dict or None, returncode, seconds, timed_out, command)."""
    fd, result_path = tempfile.mkstemp(prefix="run-", suffix=".json", dir=workdir)
    os.close(fd)
    os.unlink(result_path)
    shown = cmd = child_command(config, nodeid, what, result_path)
    # A child's artifacts are its own, in the scratch folder: never the session's folder (from
    # an ini file's addopts or $PYTEST_ADDOPTS, which the child reads too), whose trace is the
    # parent's. A later option wins over addopts.
    cmd = cmd[:-1] + ["--clpool-artifacts", result_path + ".artifacts", cmd[-1]]
    started = time.monotonic()
    timed_out = False
    with open(result_path + ".out", "wb") as out:
        p = subprocess.Popen(
            cmd,
            cwd=str(config.rootpath),
            env=child_env(workdir),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(p.pid, signal.SIGKILL)
            rc = p.wait()
        except BaseException:
            # Ctrl-C (KeyboardInterrupt) or any other way out: the child, in a session of its
            # own that a terminal's Ctrl-C does not reach, goes with its group.
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            raise
    seconds = time.monotonic() - started
    try:
        with open(result_path) as f:
            result = json.load(f)
    except (OSError, ValueError):
        result = None
    with open(result_path + ".out", "rb") as f:
        output = f.read()[-4000:].decode("utf-8", "replace")
    return result, rc, seconds, timed_out, shown, output


SESSION_DIR_VARIABLE = "CLPOOL_OOM_SWEEP_DIR"


def open_session_dir():
    """The sweep's scratch folder (the counts, each run's result and output), made by the process
    that starts the session (pytest, or xdist's controller) and named to its workers in the
    environment; (folder, the variable's earlier value) for close_session_dir."""
    d = tempfile.mkdtemp(prefix=f"clpool-oom-sweep-{os.getuid()}-")
    earlier = os.environ.get(SESSION_DIR_VARIABLE)
    os.environ[SESSION_DIR_VARIABLE] = d
    return d, earlier


def close_session_dir(opened):
    """Removes the folder open_session_dir made, and restores the variable."""
    d, earlier = opened
    shutil.rmtree(d, ignore_errors=True)
    if earlier is None:
        os.environ.pop(SESSION_DIR_VARIABLE, None)
    else:
        os.environ[SESSION_DIR_VARIABLE] = earlier


def _cache_paths(config):
    d = os.environ.get(SESSION_DIR_VARIABLE, "")
    if not os.path.isdir(d):
        raise pytest.UsageError(
            f"clpool: --clpool-oom-sweep: the session's folder ${SESSION_DIR_VARIABLE} "
            f"{d!r} is gone"
        )
    return d, os.path.join(d, "counts.json"), os.path.join(d, "counts.lock")


COUNT_TIMEOUT = 600.0


def counts_for(config, nodeids, timeout):
    """{nodeid: count child's result} for every test, counted once per session."""
    d, counts_path, lock_path = _cache_paths(config)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(counts_path) as f:
                counts = json.load(f)
        except (OSError, ValueError):
            counts = {}
        for nodeid in nodeids:
            if nodeid in counts:
                continue
            result, rc, seconds, timed_out, cmd, output = run_child(
                config, nodeid, "count", d, timeout
            )
            counts[nodeid] = {
                "result": result,
                "rc": rc,
                "seconds": seconds,
                "timed_out": timed_out,
                "output": output[-2000:],
            }
        tmp = counts_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(counts, f)
        os.replace(tmp, counts_path)
    return counts, d


class SweepFailure(Exception):
    """A sweep run's finding, with the text pytest shows."""


class SweepRun(pytest.Item):
    """One (test, point) run of --clpool-oom-sweep, or the test's fault-free count when it failed."""

    def __init__(self, *, test, what, count, workdir, timeout, **kwargs):
        super().__init__(**kwargs)
        self.test_nodeid = test.nodeid
        self.test_location = test.location
        self.what = what
        self.count = count
        self.workdir = workdir
        self.timeout = timeout

    def reportinfo(self):
        return self.test_location[0], self.test_location[1], self.name

    def runtest(self):
        if self.what == "count":
            raise SweepFailure(_count_failure(self.test_nodeid, self.count))
        result, rc, seconds, timed_out, cmd, output = run_child(
            self.config, self.test_nodeid, self.what, self.workdir, self.timeout
        )
        verdict, detail = judge(result, rc, timed_out, self.count, self.timeout)
        self.user_properties.append(("clpool_oom_sweep", verdict))
        if verdict in ("handled", "not reached"):
            return
        raise SweepFailure(
            _finding_text(self.test_nodeid, self.what, verdict, detail, result, cmd, output)
        )

    def repr_failure(self, excinfo):
        # As the markers' failures: whole under every --tb style, and its first line in -r's
        # short summary and --tb=line.
        if isinstance(excinfo.value, SweepFailure):
            return text.longrepr(self, str(excinfo.value).splitlines(), None)
        return super().repr_failure(excinfo)


def judge(result, rc, timed_out, count, timeout):
    """(verdict, detail): crashed, hung, leaked, unhandled, handled or not reached."""
    if timed_out:
        return "hung", f"no end after {timeout:g} s"
    if rc < 0:
        return "crashed", f"the process was killed by {text.signal_text(-rc)}"
    if result is None:
        return "crashed", f"the process ended (exit {rc}) before the test did"
    if result.get("reached") is False:
        return "not reached", "the test met fewer points this time"
    base = (count.get("result") or {}).get("left_live", 0)
    if result["left_live"] > base:
        return "leaked", (
            f"{_core.format_bytes_both(result['left_live'])} of device memory the test allocated "
            f"is still allocated after it, {_core.format_bytes_both(base)} without the failure"
        )
    if result["outcome"] in ("failed", "error") and not names_an_oom(
        result["exception"], result["message"]
    ):
        return "unhandled", (
            f"the test failed with {result['exception'] or 'an error'}, which does not say "
            f"it ran out of memory: {result['message'][:300]}"
        )
    return "handled", result["outcome"]


def _count_failure(nodeid, count):
    r = count.get("result")
    why = (
        "it did not finish"
        if count.get("timed_out")
        else f"exit {count.get('rc')}"
        if r is None
        else "an error in its setup or teardown"
        if r["outcome"] == "error"
        else f"it {r['outcome']}"
    )
    return "\n".join(
        [
            f"clpool oom sweep: {_core.escape_text(nodeid)} fails without any fault injected ({why}): "
            f"nothing to sweep"
        ]
        + _output_lines(count.get("output", ""))
    )


def _output_lines(output):
    """The end of a child's output, each line printable."""
    return ["  its output (the end):"] + [
        "    " + _core.escape_text(line) for line in output.splitlines()[-25:]
    ]


def _finding_text(nodeid, what, verdict, detail, result, cmd, output):
    kind, n = what.split(":")
    lines = [
        f"clpool oom sweep: {_core.escape_text(nodeid)} with its "
        f"{'first use' if kind == 'first-use' else 'allocation'} "
        f"{n} failing: {verdict}: {detail}"
    ]
    if result:
        lines += text.failing_request_lines(result)
        if verdict == "leaked":
            lines += text.left_live_site_lines(result)
    lines.append(
        "  replay: "
        + " ".join(
            shlex.quote(c) for c in cmd[:-1] if not c.startswith("--clpool-oom-sweep-result")
        )
        + " "
        + shlex.quote(cmd[-1])
    )
    if verdict in ("crashed", "hung", "unhandled"):
        # A crash's Python stack (faulthandler's) without pytest's own frames.
        kept = [
            line
            for line in output.splitlines()
            if "/_pytest/" not in line
            and "/pluggy/" not in line
            and "<frozen runpy>" not in line
            and not line.startswith("Extension modules:")
        ]
        lines += _output_lines("\n".join(kept))
    return "\n".join(lines)


def terminal_summary(terminalreporter, config, verdicts):
    if not config.option.collectonly:
        terminalreporter.section("clpool oom sweep")
        terminalreporter.write_line(summary_line(verdicts))


def summary_line(verdicts):
    """The session's sweep in one line: runs by verdict."""
    order = ("crashed", "hung", "leaked", "unhandled", "handled", "not reached")
    counts = {v: verdicts.count(v) for v in order}
    return (
        f"clpool oom sweep: {len(verdicts)} runs: "
        + ", ".join(f"{v} {counts[v]}" for v in order)
        + " (failing: crashed, hung, leaked, unhandled)"
    )


def expand(session, config, items, timeout):
    """The sweep's items in place of `items`: for each test, one per failure point (or one that
    fails when the test fails without a fault)."""
    # The count is the fault-free run, limited as clpool sweep limits its own; a test that hangs
    # there is reported as hung. Where clpool sweep has no limit (no timeout given, Ctrl-C stops
    # it), a pytest session still ends: COUNT_TIMEOUT.
    count_timeout = _core.sweep_fault_free_limit(timeout) or COUNT_TIMEOUT
    counts, workdir = counts_for(config, [item.nodeid for item in items], count_timeout)
    out = []
    for item in items:
        count = counts[item.nodeid]
        r = count.get("result")
        parent = item.parent
        if r is None or r["outcome"] not in ("passed", "skipped") or count.get("timed_out"):
            out.append(
                SweepRun.from_parent(
                    parent,
                    name=f"{item.name}[oom-sweep:fault-free]",
                    test=item,
                    what="count",
                    count=count,
                    workdir=workdir,
                    timeout=timeout,
                )
            )
            continue
        run_timeout = _core.sweep_run_timeout(timeout, count["seconds"])
        for kind, key in (("alloc", "alloc"), ("first-use", "first_use")):
            for n in range(1, r["points"].get(key, 0) + 1):
                out.append(
                    SweepRun.from_parent(
                        parent,
                        name=f"{item.name}[oom-sweep:{kind}:{n}]",
                        test=item,
                        what=f"{kind}:{n}",
                        count=count,
                        workdir=workdir,
                        timeout=run_timeout,
                    )
                )
    items[:] = out
