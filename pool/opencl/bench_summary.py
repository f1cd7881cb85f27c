#!/usr/bin/env python3
"""Min and median per benchmark from Google Benchmark JSON (--benchmark_format=json), and the
immediate-allocation / pool-hit ratio.

  bazel run --config=opt //pool/opencl:bench -- --benchmark_repetitions=5 \
      --benchmark_min_time=0.2 --benchmark_format=json > /tmp/bench.json
  python3 pool/opencl/bench_summary.py /tmp/bench.json
"""
import collections
import json
import statistics
import sys

data = json.load(open(sys.argv[1]))
real = collections.defaultdict(list)
cpu = collections.defaultdict(list)
for b in data["benchmarks"]:
    if b.get("run_type") != "iteration":
        continue
    real[b["run_name"]].append(b["real_time"])
    cpu[b["run_name"]].append(b["cpu_time"])
print(
    f"{'benchmark':32s} {'real min':>10s} {'real med':>10s} {'cpu min':>10s} {'cpu med':>10s}  (ns)"
)
for name in real:
    print(
        f"{name:32s} {min(real[name]):10.1f} {statistics.median(real[name]):10.1f} "
        f"{min(cpu[name]):10.1f} {statistics.median(cpu[name]):10.1f}"
    )
if "BM_ImmediateAllocation" in real and "BM_BufferPoolHit" in real:
    im, hit = real["BM_ImmediateAllocation"], real["BM_BufferPoolHit"]
    print(
        f"immediate/pool-hit (real time): median {statistics.median(im) / statistics.median(hit):.0f}x, "
        f"min/min {min(im) / min(hit):.0f}x"
    )
