"""What clpool's pytest plugin adds per test.

    PYTHONPATH=/tmp/clpool-site /usr/bin/python3 python/bench/pytest_plugin_bench.py [--tests N] [--runs R]

(tools/python_install.sh /tmp/clpool-site first: the package, the layer, mockcl and clpool_replay,
built with --config=opt.) Writes a suite of N tests of each kind into a temporary directory and
runs it with pytest R times with the plugin active (--clpool-device nvidia:4GiB) and R times with
it loaded but inactive on the same mockcl device (OCL_ICD_VENDORS, MOCKCL_DEVICES), interleaved.
A conftest times each test's whole protocol (setup, call, teardown and their reports, where every
hook of the plugin runs); per run the median over a kind's tests, first 10 left out as warm-up.
Prints, per kind, the per-test time with and without the plugin and the difference: min and median
over the runs. Kinds: `empty` (no OpenCL), `one_buffer` (a 4 KiB buffer created, committed with a
migration and released), `ten_buffers` (ten of them, all live at once).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CONFTEST = """
import json, os, time
import pyopencl as cl
import pytest

_times = {}

@pytest.fixture(scope="session")
def queue():
    return cl.CommandQueue(cl.create_some_context(interactive=False))

@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    t0 = time.perf_counter()
    yield
    _times.setdefault(item.originalname, []).append(time.perf_counter() - t0)

def pytest_sessionfinish(session):
    with open(os.environ["BENCH_OUT"], "w") as f:
        json.dump(_times, f)
"""

SUITE = """
import pyopencl as cl
import pytest

N = {n}

def buffers(queue, count):
    out = []
    for _ in range(count):
        b = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 4096)
        cl.enqueue_migrate_mem_objects(queue, [b], cl.mem_migration_flags.CONTENT_UNDEFINED)
        out.append(b)
    return out

@pytest.mark.parametrize("i", range(N))
def test_empty(i):
    pass

@pytest.mark.parametrize("i", range(N))
def test_one_buffer(queue, i):
    buffers(queue, 1)

@pytest.mark.parametrize("i", range(N))
def test_ten_buffers(queue, i):
    buffers(queue, 10)
"""


def find(variable, name):
    import clpool

    path = os.environ.get(variable) or os.path.join(os.path.dirname(clpool.__file__), "_lib", name)
    if not os.path.exists(path):
        sys.exit(
            f"pytest_plugin_bench: {name} not found (set ${variable} or run tools/python_install.sh)"
        )
    return path


def run(directory, active, out, env):
    args = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "clpool.pytest_plugin",
    ]
    if active:
        args += ["--clpool-device", "nvidia:4GiB"]
    e = dict(env, BENCH_OUT=out)
    if not active:  # the same device, without the plugin
        e.update(
            OCL_ICD_VENDORS=os.path.join(directory, "vendors"),
            OCL_ICD_PLATFORM_SORT="none",
            MOCKCL_DEVICES="gpu-4294967296:profile=nvidia",
        )
    r = subprocess.run(
        args + ["test_suite.py"], cwd=directory, env=e, capture_output=True, text=True
    )
    if r.returncode != 0:
        sys.exit(f"pytest_plugin_bench: pytest failed:\n{r.stdout}\n{r.stderr}")
    with open(out) as f:
        times = json.load(f)
    return {kind: statistics.median(ts[10:]) for kind, ts in times.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tests", type=int, default=200, help="tests of each kind (default 200)")
    p.add_argument(
        "--runs", type=int, default=5, help="runs with and without the plugin (default 5)"
    )
    a = p.parse_args()
    if a.tests < 20 or a.runs < 1:
        p.error("--tests must be at least 20 and --runs at least 1")
    mockcl = find("LIBMOCKCL_SO", "libmockcl.so")
    find("LIBCLPOOL_LAYER_SO", "libclpool_layer.so")
    import pyopencl

    with tempfile.TemporaryDirectory(prefix="clpool-plugin-bench-") as d:
        with open(os.path.join(d, "conftest.py"), "w") as f:
            f.write(CONFTEST)
        with open(os.path.join(d, "test_suite.py"), "w") as f:
            f.write(SUITE.format(n=a.tests))
        os.makedirs(os.path.join(d, "vendors"))
        with open(os.path.join(d, "vendors", "mockcl.icd"), "w") as f:
            f.write(mockcl + "\n")
        env = dict(os.environ, POCL_CACHE_DIR=os.path.join(d, "pocl"))
        results = {True: [], False: []}
        for i in range(a.runs):
            for active in (False, True) if i % 2 == 0 else (True, False):
                results[active].append(run(d, active, os.path.join(d, "times.json"), env))
    print(
        f"PyOpenCL {pyopencl.VERSION_TEXT}; {a.tests} tests of each kind, {a.runs} runs each way; "
        "per test, the median over a run's tests (us): min / median over the runs"
    )
    print(f"{'kind':<12} {'without':>17} {'with the plugin':>17} {'added':>17}")
    for kind in ("test_empty", "test_one_buffer", "test_ten_buffers"):
        base = [r[kind] * 1e6 for r in results[False]]
        plug = [r[kind] * 1e6 for r in results[True]]
        added = [p_ - b_ for p_, b_ in zip(plug, base)]

        def fmt(xs):
            return f"{min(xs):7.1f} / {statistics.median(xs):7.1f}"

        print(f"{kind[5:]:<12} {fmt(base):>17} {fmt(plug):>17} {fmt(added):>17}")


if __name__ == "__main__":
    main()
