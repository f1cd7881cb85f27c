#!/usr/bin/env python3
"""Writes the hand-made seeds of fuzz/corpus/config_parsers/ and fuzz/corpus/trace_parsers/.

Each seed is the parser's text followed by one selector byte: FuzzedDataProvider takes the
selector from the END of the input (config_parsers_fuzzer.cc: byte % 11; trace_parsers_fuzzer.cc:
byte % 3).

    python3 fuzz/seeds/make_parser_seeds.py fuzz/corpus
"""
import os
import sys

CONFIG = {
    # selector: [texts]
    0: ["512m", "0", "18446744073709551615", "16777216t", "8G"],
    1: ["CL_OUT_OF_RESOURCES", "-4", "CL_SUCCESS", "-2147483648"],
    2: ["gpu", "gpu-8g", "cpu-2g", "cpu"],
    3: [
        "gpu",
        "gpu-8g:semantics=deferred,reported=16g;cpu-2g:svm=off",
        "gpu:name=small,capacity=1g,reported=2g,max_alloc=512m,semantics=deferred,svm=off,pinned=64m",
        "gpu-64m:semantics=host_oom",
    ],
    4: [
        "nth:clCreateBuffer:3:CL_OUT_OF_RESOURCES",
        "bytes:512m",
        "exec:clEnqueueNDRangeKernel:1:-5",
        "prob:clCreateBuffer:0.5:7",
        "nth:*:10;bytes:1g",
    ],
    5: ["eager", "lazy,seed=42,kernel_ns=1000", "eager,lazy"],
    6: ["MOCKCL_DEVICES=gpu-8g\nMOCKCL_SCHEDULE=lazy"],
    7: ["0", "18446744073709551615", "18446744073709551616", "007", "+1"],
    8: ["2GiB", "512MiB", "4096", "1B", "2GB", "16777215TiB", "16777216TiB"],
    9: ["0", "1", "0.25", ".5", "1.0000001", "1e-3"],
    10: [
        "CLPOOL_LAYER_TRACE=/tmp/t.trace\nCLPOOL_LAYER_BUDGET=2GiB\nCLPOOL_LAYER_FAIL_NTH=3",
        "CLPOOL_LAYER_FAIL_PROB=0.01\nCLPOOL_LAYER_SEED=7",
        "CLPOOL_LAYER_BUGDET=1",
        "CLPOOL_LAYER_BUDGET",
    ],
}

TRACE_TEXT = """clpool-trace 1
# source: seed
# seq time_ns thread queue action id size kind flags
0 0 0 1 alloc 1 4096 buffer 0x1
1 10 0 1 alloc 2 1048576 svm 0x0
2 20 1 2 free 1 4096 buffer 0x0
3 30 0 0 free_held 0 0 buffer 0x0
4 40 0 1 alloc_failed 0 8589934592 buffer 0x0
5 50 0 0 stop_holding 0 0 buffer 0x0
6 60 0 1 free 2 0 svm 0x0
"""

# Version 2 (FORMAT.md "Sites"): frames, stacks, stack ids on alloc and alloc_failed, a frame
# defined after its use (the layer symbolizes lazily), escaped names.
TRACE_SITES = """clpool-trace 2
# source: seed
frame 1 py 3 app.py %3Cmodule%3E
stack 1 0 1
frame 2 py 17 /src/my%20app/cache.py Cache.grow
stack 2 1 2
stack 3 2 3
0 0 0 1 alloc 1 4096 buffer 0x1 2
1 10 0 1 alloc 2 1048576 svm 0x0 3
2 20 1 2 free 1 4096 buffer 0x0
3 30 0 1 alloc_failed 0 8589934592 buffer 0x0 2
4 40 0 1 alloc 3 64 buffer 0x0
frame 3 native 0 /usr/lib/libapp.so grow_cache(unsigned%20long)
"""

# Version 3 (FORMAT.md "Two moments of a free"): the program's release before the driver's free,
# a wait, a block freed without a release, and sites.
TRACE_RELEASES = """clpool-trace 3
# source: seed
frame 1 py 3 app.py main
stack 1 0 1
0 0 0 0 alloc 1 4096 buffer 0x1 1
1 10 0 0 release 1 4096 buffer 0x1
2 20 0 1 alloc 2 1048576 svm 0x0
3 30 0 2 wait 0 0 buffer 0x0
4 40 1 0 free 1 4096 buffer 0x1
5 50 0 2 release 2 1048576 svm 0x0
6 60 0 0 alloc 3 64 buffer 0x0 1
7 70 1 2 free 2 0 svm 0x0
8 80 0 0 free 3 64 buffer 0x0
"""

TRACE_FIRST_USES = """clpool-trace 4
# source: seed
# first_uses: buffer
frame 1 py 3 app.py main
stack 1 0 1
0 0 0 0 alloc 1 4096 buffer 0x1 1
1 10 0 0 use 1 4096 buffer 0x1 1
2 20 0 0 alloc 2 1048576 buffer 0x1
3 30 0 0 release 1 4096 buffer 0x1
4 40 0 0 use 2 1048576 buffer 0x1
5 50 0 0 use 2 1048576 buffer 0x1
6 60 1 0 free 1 4096 buffer 0x1
7 70 0 0 free 2 1048576 buffer 0x1
"""


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def binary_sites():
    """The binary form of a small version-2 trace: header, a frame, two stacks, events."""
    out = bytearray(b"CLPTRACE" + bytes([2]) + bytes(7))
    name, fn = b"app.py", b"main"
    out += (
        bytes([5])
        + varint(1)
        + varint(0)
        + varint(9)
        + varint(len(name))
        + name
        + varint(len(fn))
        + fn
    )
    out += bytes([6]) + varint(1) + varint(0) + varint(1)
    out += bytes([6]) + varint(2) + varint(1) + varint(7)  # frame 7 never defined
    # alloc id 1 size 4096 with a stack (bit 7) and thread/queue (bit 6), seq 0, dt 0
    out += (
        bytes([0x80 | 0x40])
        + varint(0)
        + varint(0)
        + varint(0)
        + varint(1)
        + varint(1)
        + varint(4096)
        + varint(2)
    )
    # alloc_failed size 2^30 stack 1
    out += bytes([0x80 | 1]) + varint(0) + varint(2) + varint(0) + varint(1 << 30) + varint(1)
    # free id 1
    out += bytes([2]) + varint(0) + varint(2) + varint(1) + varint(4096)
    return bytes(out)


RMM = """Thread,Time,Action,Pointer,Size,Stream
140573312345856,1700000000.006229,allocate,0x7f0000000000,25166061,0x55d0c8a1e0f0
140573303953152,1700000000.014632,allocate,0x7f0001a000ed,134218152,0x0
140573312345856,1700000000.023642,free,0x7f0001a000ed,134218152,0x0
140573303953152,1700000000.032326,free,0x7f0000000000,25166061,0x55d0c8a1e0f0
"""


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "fuzz/corpus"
    config = os.path.join(root, "config_parsers")
    os.makedirs(config, exist_ok=True)
    for selector, texts in CONFIG.items():
        for i, text in enumerate(texts):
            write(
                os.path.join(config, "seed_%02d_%d" % (selector, i)),
                text.encode() + bytes([selector]),
            )
    trace = os.path.join(root, "trace_parsers")
    os.makedirs(trace, exist_ok=True)
    write(os.path.join(trace, "seed_trace_text"), TRACE_TEXT.encode() + bytes([0]))
    write(os.path.join(trace, "seed_trace_text_no_liveness"), TRACE_TEXT.encode() + bytes([1]))
    write(
        os.path.join(trace, "seed_trace_bad_line"),
        (TRACE_TEXT + "7 70 0 1 free 99 0 buffer 0x0\n").encode() + bytes([0]),
    )
    write(os.path.join(trace, "seed_trace_sites"), TRACE_SITES.encode() + bytes([0]))
    write(os.path.join(trace, "seed_trace_sites_no_liveness"), TRACE_SITES.encode() + bytes([1]))
    write(
        os.path.join(trace, "seed_trace_sites_undefined_stack"),
        (TRACE_SITES + "5 50 0 1 alloc 9 1 buffer 0x0 44\n").encode() + bytes([0]),
    )
    write(os.path.join(trace, "seed_trace_sites_binary"), binary_sites() + bytes([0]))
    write(os.path.join(trace, "seed_rmm_csv"), RMM.encode() + bytes([2]))
    write(os.path.join(trace, "seed_trace_releases"), TRACE_RELEASES.encode() + bytes([0]))
    write(os.path.join(trace, "seed_trace_first_uses"), TRACE_FIRST_USES.encode() + bytes([0]))
    write(
        os.path.join(trace, "seed_trace_releases_no_liveness"), TRACE_RELEASES.encode() + bytes([1])
    )
    write(
        os.path.join(trace, "seed_trace_releases_twice"),
        (
            TRACE_RELEASES + "9 90 0 0 alloc 4 8 buffer 0x0\n10 91 0 0 release 4 8 buffer 0x0\n"
            "11 92 0 0 release 4 8 buffer 0x0\n"
        ).encode()
        + bytes([0]),
    )


if __name__ == "__main__":
    main()
