"""The child side of clpool.pytest_plugin's --clpool-oom-sweep: in the subprocess that runs one
test (--clpool-oom-sweep-run), the layer armed at the test's start and what happened written for
the parent (_plugin_sweep.py) at its end."""

import json
import os
import sys

from clpool import _core
from clpool import _plugin_text as text


class ChildRun:
    """In a child pytest (--clpool-oom-sweep-run): arms the layer at the test's start and writes
    what happened to --clpool-oom-sweep-result at its end."""

    def __init__(self, what, result_path, layer):
        self.what = what
        self.result_path = result_path
        self.layer = layer
        self.start = None
        self.result = {
            "outcome": "not run",
            "exception": "",
            "message": "",
            "points": {},
            "left_live": 0,
            "oom_site": "",
            "oom_where": "",
            "reached": None,
        }

    def begin(self):
        self.start = self.layer.fault_points()
        if self.what != "count":
            kind, n = _core.parse_sweep_point(self.what)
            self.layer.arm(kind == "first-use", n, True)

    def figures(self, figures):
        """The test's figures as the call (or a setup that failed) left them."""
        if figures is not None:
            self.recount(figures)
            if figures["oom"]:
                self.result["oom_site"] = figures["oom"]["site"]
                self.result["oom_where"] = figures["oom"]["where"]

    def recount(self, figures):
        self.result["left_live"] = figures["left_live"]
        self.result["left_live_sites"] = [list(site) for site in figures["left_live_sites"]]

    def end(self, report):
        if self.start is None:
            return
        end = self.layer.fault_points()
        allocs, first_uses = end[0] - self.start[0], end[1] - self.start[1]
        self.result["points"] = {"alloc": allocs, "first_use": first_uses}
        if self.what != "count":
            kind, n = _core.parse_sweep_point(self.what)
            self.result["reached"] = (first_uses if kind == "first-use" else allocs) >= n
            self.layer.arm(False, 0, False)
        self.result["outcome"] = (
            report.outcome
            if self.result["outcome"] in ("not run", "passed")
            else self.result["outcome"]
        )
        self.start = None

    def phase_report(self, call, report):
        """The outcome, and the exception of the first phase that failed: the test's own, or its
        setup's (a fixture) or teardown's."""
        if report.failed and self.result["outcome"] in ("not run", "passed"):
            self.result["outcome"] = "failed" if report.when == "call" else "error"
            if call.excinfo is not None:
                self.result["exception"] = call.excinfo.typename
                self.result["message"] = _core.escape_text(str(call.excinfo.value))[-2000:]
        elif report.when == "call" and report.passed and self.result["outcome"] == "not run":
            self.result["outcome"] = "passed"
        elif report.when == "call" and report.skipped:
            self.result["outcome"] = "skipped"

    def summary_lines(self):
        """What a run typed by hand (a finding's replay line) found, for its terminal: how the
        test ended and what it left allocated, the figures the sweep judged it by. A leak is
        judged against the test's run without the failure, which this run does not make."""
        r = self.result
        lines = [f"clpool oom sweep run {self.what}: the test {r['outcome']}"]
        if r["reached"] is False:
            lines[0] += " without meeting its point (it allocated in another order this time)"
        if r["exception"]:
            lines[0] += f" with {r['exception']}: {r['message'][:300]}"
        lines += text.failing_request_lines(r)
        lines.append(
            f"  still allocated after the test: {text.both(r['left_live'])} "
            "(the sweep calls more than its run without the failure leaves a leak)"
        )
        return lines + text.left_live_site_lines(r)

    def write(self):
        if not self.result_path:  # a replay typed by hand: summary_lines() says it on its terminal
            return
        tmp = self.result_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.result, f)
        os.replace(tmp, self.result_path)


def forget_last_exception():
    """pytest keeps a failed test's exception in sys.last_* for a debugger, and with it the frames
    it passed through."""
    for name in ("last_exc", "last_type", "last_value", "last_traceback"):
        if hasattr(sys, name):
            setattr(sys, name, None)
