"""A 4 KiB pool hit from Python: clpool.pyopencl.MemoryPool against pyopencl.tools.MemoryPool.

    tools/python_install.sh /tmp/clpool-site            # clpool._core built with --config=opt
    PYTHONPATH=/tmp/clpool-site /usr/bin/python3 python/bench/hit_bench.py --device pocl
    PYTHONPATH=/tmp/clpool-site /usr/bin/python3 python/bench/hit_bench.py --device mockcl \\
        --mockcl-so bazel-bin/mockcl/libmockcl.so
    PYTHONPATH=/tmp/pyopencl-2026:/tmp/clpool-site ... # PyOpenCL 2026 (python/compat/build_pyopencl.sh)
    ... --binding generic                               # clpool's binding-independent path

Both pools live in one process over one ImmediateAllocator queue, and their cases run
interleaved (A B C D, A B C D, ...), so that drift in the machine's speed hits both alike. A case
is `iterations` hits of 4096 bytes from a warm pool, timed with the thread's CPU clock, and each
hit ends the way programs end it:
  - drop:    the last reference goes (`pool.allocate(4096)` whose result is discarded)
  - release: `pool.allocate(4096).release()` (PyOpenCL's PooledBuffer.release())
Each of `processes` child processes reports its median over `runs`; the parent prints, per case,
the min and the median of those medians, and clpool's ratio to PyOpenCL's (<= 1: clpool is as
fast or faster).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CASES = ("drop", "release")


def child(args):
    import pyopencl as cl
    import pyopencl.tools

    import clpool.pyopencl

    platform = next(
        p
        for p in cl.get_platforms()
        if ("mockcl" if args.device == "mockcl" else "Portable") in p.name
    )
    ctx = cl.Context([platform.get_devices()[0]])
    queue = cl.CommandQueue(ctx)
    theirs = pyopencl.tools.MemoryPool(pyopencl.tools.ImmediateAllocator(queue))
    ours = clpool.pyopencl.MemoryPool(clpool.pyopencl.ImmediateAllocator(queue))
    fns = {
        ("pyopencl", "drop"): lambda: theirs.allocate(4096),
        ("clpool", "drop"): lambda: ours.allocate(4096),
        ("pyopencl", "release"): lambda: theirs.allocate(4096).release(),
        ("clpool", "release"): lambda: ours.allocate(4096).release(),
    }
    times = {key: [] for key in fns}
    n = args.iterations
    for fn in fns.values():
        fn()  # warm: one miss each
    for _ in range(args.runs):
        for key, fn in fns.items():
            t0 = time.thread_time_ns()
            for _ in range(n):
                fn()
            times[key].append((time.thread_time_ns() - t0) / n)
    assert ours.statistics()["misses"] == 1, ours.statistics()
    result = {f"{pool} {case}": statistics.median(t) for (pool, case), t in times.items()}
    result["pyopencl"] = cl.VERSION_TEXT
    result["binding"] = clpool.pyopencl.BINDING[0]
    json.dump(result, sys.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("pocl", "mockcl"), default="pocl")
    parser.add_argument("--mockcl-so", help="libmockcl.so (--device mockcl)")
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument(
        "--binding",
        choices=("auto", "generic"),
        default="auto",
        help="generic: clpool's binding-independent path (CLPOOL_PYTHON_BINDING)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.processes < 1 or args.runs < 1 or args.iterations < 1:
        parser.error("--processes, --runs and --iterations must be at least 1")
    if args.child:
        return child(args)
    env = dict(os.environ)
    env.pop("CLPOOL_PYTHON_BINDING", None)
    if args.binding == "generic":
        env["CLPOOL_PYTHON_BINDING"] = "generic"
    if args.device == "mockcl":
        if not args.mockcl_so or not os.path.isfile(args.mockcl_so):
            parser.error("--device mockcl needs --mockcl-so PATH to libmockcl.so")
        vendors = tempfile.mkdtemp()
        with open(os.path.join(vendors, "mockcl.icd"), "w") as f:
            f.write(os.path.abspath(args.mockcl_so) + "\n")
        env.update(OCL_ICD_VENDORS=vendors, MOCKCL_DEVICES="gpu-1g", MOCKCL_BACKING="none")
    medians = []
    for _ in range(args.processes):
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                "--device",
                args.device,
                "--runs",
                str(args.runs),
                "--iterations",
                str(args.iterations),
            ],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        medians.append(json.loads(out))
    print(
        f"PyOpenCL {medians[0]['pyopencl']}, clpool's {medians[0]['binding']} path, device "
        f"{args.device}: {args.processes} processes x {args.runs} runs x {args.iterations} hits "
        "of 4096 bytes; thread CPU time per hit, ns"
    )
    print(
        f"{'case':10s} {'pyopencl min':>13s} {'median':>8s} {'clpool min':>11s} {'median':>8s}"
        f" {'ratio min':>10s} {'median':>8s}"
    )
    for case in CASES:
        theirs = [m[f"pyopencl {case}"] for m in medians]
        ours = [m[f"clpool {case}"] for m in medians]
        ratios = [o / t for o, t in zip(ours, theirs)]
        print(
            f"{case:10s} {min(theirs):13.0f} {statistics.median(theirs):8.0f} "
            f"{min(ours):11.0f} {statistics.median(ours):8.0f} "
            f"{min(ratios):10.2f} {statistics.median(ratios):8.2f}"
        )


if __name__ == "__main__":
    main()
