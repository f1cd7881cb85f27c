"""The plugin's figures and clpool_replay agree by construction (issue 38): random suites (sizes,
helpers, frees, waits, blocks kept in a module's cache, threads started by a test and a thread that
runs through the whole session) run under the plugin; every test fails on purpose so that its
artifact trace is written; then each test's peak, bytes left live and top site at the peak, as
the plugin reports them to pytest (its report's user_properties), must equal what clpool_replay
--peak --json says of that test's trace. Both are the replay engine's replay of the same events;
the test fails on any difference. Run by run_plugin_test.sh, with pytest-xdist (AGREEMENT_SUITES
suites, default 200) and without (a quarter as many); AGREEMENT_SEED sets the seed.
"""
import json
import os
import random
import re
import subprocess

import pytest

SUITES = int(os.environ.get("AGREEMENT_SUITES", "200"))
SEED = int(os.environ.get("AGREEMENT_SEED", "38"))

CONFTEST = """
import json, os, threading, queue as q
import pyopencl as cl
import pytest

@pytest.fixture(scope="session")
def queue():
    return cl.CommandQueue(cl.create_some_context(interactive=False))

# A thread that runs through the whole session and allocates when asked: what it allocates during
# a test is the session's, in neither the test's figures nor its trace.
_jobs = q.Queue()
_kept = []

def _serve():
    while True:
        ctx, n = _jobs.get()
        _kept.append(cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n))
        _jobs.task_done()

threading.Thread(target=_serve, daemon=True).start()

def session_thread(queue, n):
    _jobs.put((queue.context, n))
    _jobs.join()

_figures = {}

def pytest_runtest_logreport(report):
    for key, value in report.user_properties:
        if key == "clpool":
            _figures[report.nodeid] = json.loads(value)

def pytest_sessionfinish(session):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"figures-{worker}.json", "w") as f:
        json.dump(_figures, f)
"""


class Suite:
    """One generated test module: helpers of its own, and tests calling them."""

    def __init__(self, rng, index):
        self.rng = rng
        self.name = f"test_s{index:03d}"
        self.lines = [
            "import threading",
            "import pyopencl as cl",
            "from conftest import session_thread",
            "",
            "cache = []",
            "",
            "def buf(queue, n):",
            "    return cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, n)",
            "",
        ]
        self.helpers = []
        for h in range(rng.randint(1, 3)):
            self.helpers.append(f"helper{h}")
            self.lines += [f"def helper{h}(queue, n):", "    return buf(queue, n)", ""]

    def size(self):
        return (
            self.rng.choice([64, 4096, 65536, 1 << 20, 3 << 20]) + self.rng.randrange(0, 4096) * 8
        )

    def op(self, live, indent):
        r = self.rng.random()
        if r < 0.45 or not live:
            var = f"b{len(live)}_{self.rng.randrange(10**6)}"
            fn = self.rng.choice(self.helpers + ["buf"])
            live.append(var)
            return [f"{indent}{var} = {fn}(queue, {self.size()})"]
        if r < 0.65:
            return [f"{indent}del {live.pop(self.rng.randrange(len(live)))}"]
        if r < 0.75:
            return [f"{indent}cache.append({live.pop(self.rng.randrange(len(live)))})"]
        if r < 0.82:
            return [f"{indent}queue.finish()"]
        if r < 0.9:
            return [f"{indent}session_thread(queue, {self.size()})"]
        return [
            f"{indent}t = threading.Thread(target=lambda: cache.append(buf(queue, {self.size()})))",
            f"{indent}t.start()",
            f"{indent}t.join()",
        ]

    def add_test(self, t):
        body, live = [], []
        for _ in range(self.rng.randint(1, 12)):
            body += self.op(live, "    ")
        self.lines += (
            [f"def test_{t}(queue):"]
            + body
            + ["    assert False, 'fails on purpose: its trace is written'", ""]
        )

    def text(self):
        return "\n".join(self.lines) + "\n"


def short_site(name):
    """'f (/abs/dir/test_s001.py:12)' and 'f (test_s001.py:12)' alike."""
    return re.sub(r"\(([^()]*/)?([^/()]+:\d+)\)", r"(\2)", name)


@pytest.mark.parametrize(
    "xdist,suites", [([], max(1, SUITES // 4)), (["-n", "2"], SUITES)], ids=["serial", "xdist"]
)
def test_figures_agree_with_clpool_replay(pytester, xdist, suites):
    rng = random.Random(SEED + len(xdist))
    pytester.makeconftest(CONFTEST)
    for i in range(suites):
        suite = Suite(rng, i)
        for t in range(rng.randint(1, 4)):
            suite.add_test(t)
        pytester.makepyfile(**{suite.name: suite.text()})
    r = pytester.runpytest_subprocess(
        "-p",
        "clpool.pytest_plugin",
        "-p",
        "no:cacheprovider",
        "-q",
        "--clpool-device",
        "nvidia:4GiB",
        "--clpool-artifacts",
        "art",
        "--clpool-site-frames",
        "1",
        "--tb=no",
        *xdist,
    )
    figures = {}
    for path in pytester.path.glob("figures-*.json"):
        figures.update(json.loads(path.read_text()))
    outcome = r.parseoutcomes()
    assert outcome.get("failed") == len(figures) and not outcome.get("passed"), r.stdout.str()[
        -3000:
    ]
    replay = os.environ["CLPOOL_REPLAY"]
    differences, with_memory, with_leaks, with_sites = [], 0, 0, 0
    for nodeid, f in sorted(figures.items()):
        trace = pytester.path / "art" / nodeid.replace("::", "%3A%3A") / "device.trace"
        out = subprocess.run(
            [
                replay,
                str(trace),
                "--no-pool",
                "--profile",
                "exact",
                "--capacity",
                "1TiB",
                "--frees-at",
                "release",
                "--peak",
                "--json",
                "--no-progress",
            ],
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0, (nodeid, out.stderr)
        rep = json.loads(out.stdout)["results"][0]["replay"]
        mine = (
            f["peak"],
            f["left_live"],
            short_site(f["peak_sites"][0][0]) if f["peak_sites"] else "",
        )
        theirs = (
            rep["peak_active_bytes"],
            rep["end_active_bytes"],
            short_site(rep["peak_sites"][0]["site"]) if rep.get("peak_sites") else "",
        )
        if mine != theirs:
            differences.append((nodeid, mine, theirs))
        with_memory += f["peak"] > 0
        with_leaks += f["left_live"] > 0
        with_sites += bool(mine[2])
    assert not differences, differences[:10]
    # The suites reach what the agreement is about: peaks, leaks and sites in most tests.
    assert len(figures) >= 2 * suites and with_memory > len(figures) // 2 and with_leaks > 0, (
        len(figures),
        with_memory,
        with_leaks,
    )
    assert with_sites == with_memory
    print(
        f"agreement: {len(figures)} tests in {suites} suites (seed {SEED + len(xdist)}); {with_memory} with device "
        f"memory, {with_leaks} leaving some live; every figure equal"
    )
