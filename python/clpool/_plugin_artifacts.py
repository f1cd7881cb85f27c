"""A failing test's artifacts for clpool.pytest_plugin: its trace, clpool_replay's report and page.
Never the end of a session and never through a link: every file goes through clpool._core's
output rules (common/output_file.h), and whatever cannot be written, or a clpool_replay that is
missing, fails, is killed or hangs, is a line for the test's report and a count for the summary.
"""

import os
import subprocess

from clpool import _core
from clpool import _plugin_text as text

WHAT = "--clpool-artifacts"


def write(
    follower,
    session,
    settings,
    replay,
    replay_missing,
    nodeid,
    kind,
    capacity,
    limit,
    other_threads,
):
    """Returns (lines, errors): what to say of the test's artifacts, and how many failed."""
    d = os.path.join(settings.artifacts, _core.file_name_for(nodeid))
    try:
        _core.make_output_directory(d, WHAT)
        trace = os.path.join(d, "device.trace")
        follower.write_window_trace(trace, nodeid, kind == "oom", other_threads)
    except ValueError as e:
        return [f"not written: {e}"], 1
    lines = [f"trace: {_core.escape_text(trace)}"]
    if replay is None:
        return lines + [f"no page: {replay_missing}"], 0
    profile, size, device = _replay_args(session, kind, capacity, limit)
    said, errors = _replay(replay, d, trace, (profile, size, device), settings.replay_timeout)
    return lines + said, errors


def _replay_args(session, kind, capacity, limit):
    """The device the test's trace is replayed on (its out-of-memory's, its limit's, or one
    nothing fills), and the words that say so beside the report."""
    if kind == "oom":
        size = capacity if capacity is not None else session.default_budget
        return session.profile, size, "the test's device"
    if kind == "limit":
        # The limit is judged in exact bytes: a device of that size runs out where the test
        # went over it, and the report's figures stop there.
        return (
            "exact",
            limit,
            "a device of the test's limit: it runs out where the test went over it",
        )
    return "exact", _core.MAX_DEVICE_BYTES, "a device nothing fills"  # a leak's page


def _replay(replay, d, trace, device, timeout):
    profile, capacity, words = device
    page, report_txt = os.path.join(d, "device.html"), os.path.join(d, "replay.txt")
    scratch = os.path.join(d, f".device.html.{os.getpid()}.tmp")
    args = [
        trace,
        "--no-pool",
        "--profile",
        profile,
        "--capacity",
        str(capacity),
        "--peak",
        "--no-progress",
    ]
    try:
        r = subprocess.run(
            [replay] + args + ["--html", scratch],
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return [
            f"no page: clpool_replay did not finish in {timeout:g} s (--clpool-replay-timeout)"
        ], 1
    except OSError as e:
        return [f"no page: cannot run {_core.escape_text(replay)!r}: {e.strerror}"], 1
    finally:
        html = _read_and_remove(scratch)
    if r.returncode not in (0, 1) or html is None:
        # Its last lines, one after another: a newline escaped would read as '\\x0A'.
        lines = r.stderr.strip().splitlines()[-3:]
        said = "; ".join(_core.escape_text(line) for line in lines)[-500:]
        if r.returncode < 0:
            return [
                f"no page: clpool_replay was killed by {text.signal_text(-r.returncode)}: {said}"
            ], 1
        return [f"no page: clpool_replay exited {r.returncode}: {said}"], 1
    try:
        _core.write_output_file(report_txt, r.stdout, WHAT)
        _core.write_output_file(page, html, WHAT)
    except ValueError as e:
        return [f"not written: {e}"], 1
    shown = " ".join(["clpool_replay", "device.trace"] + args[1:])
    return [
        f"page: {_core.escape_text(page)}",
        f"replay: {_core.escape_text(report_txt)} ({shown}; on {words})",
    ], 0


def _read_and_remove(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
