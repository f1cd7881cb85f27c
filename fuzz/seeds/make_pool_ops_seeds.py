#!/usr/bin/env python3
"""Writes the hand-made seeds of fuzz/corpus/pool_ops{,_high_lb,_deep}/ (seed_*): readable scenarios
encoded the way pool_ops_fuzzer.cc decodes them with FuzzedDataProvider, which takes integers
from the END of the input, one byte per value for ranges below 256.

    python3 fuzz/seeds/make_pool_ops_seeds.py fuzz/corpus
"""
import os
import sys

# Operation selectors (pool_ops_fuzzer.cc: pick in 0..31).
ALLOC, RELEASE, MOVE, FREE_HELD, STOP, LIMIT, TRIM, POLICY, CAPACITY, INJECT = (
    0,
    12,
    20,
    22,
    24,
    25,
    27,
    28,
    30,
    31,
)
# ALLOC (0..9) requests through try_allocate(); ALLOC_THROWING (10, 11) through allocate(), whose
# hit path is the pool's inlined fast path and whose out-of-memory is the out_of_memory exception.
ALLOC_THROWING = 10


class Enc:
    def __init__(self):
        self.consumed = []  # bytes in the order the fuzzer consumes them

    def byte(self, v):
        self.consumed.append(v & 0xFF)
        return self

    def u64(self, v):  # ConsumeIntegral<uint64_t>: most significant byte consumed first
        for shift in range(56, -8, -8):
            self.byte(v >> shift)
        return self

    def data(self):
        return bytes(reversed(self.consumed))


def small(e, n):
    # ConsumeIntegralInRange(1, 4096): range 4095 needs two bytes; result = (b0 << 8 | b1), where
    # b0 is consumed first, then 1 + result % 4096.
    e.byte(10)
    v = n - 1
    e.byte(v >> 8).byte(v & 0xFF)
    return e


def pow2(e, k, d):  # consume_size selector 2: 2^k + d, d in -1..1
    return e.byte(2).byte(k).byte(d + 1)


def header(e, lb, capacity_kind, unlimited_limit=True):
    e.byte(lb)
    e.byte(capacity_kind[0])
    for b in capacity_kind[1:]:
        e.byte(b)
    e.byte(1 if unlimited_limit else 0)
    return e


UNLIMITED = (0,)
CAP_64K = (6, 0x01, 0x00, 0x00)  # InRange(0, 1 << 16): 3 bytes, value 0x010000 = 65536


def seeds(lb):
    out = {}
    e = header(Enc(), lb, UNLIMITED)
    # With one live allocation the release index has range 0 and consumes no byte.
    small(e.byte(ALLOC), 100)
    e.byte(RELEASE)
    small(e.byte(ALLOC), 100)
    small(e.byte(ALLOC), 200)
    e.byte(RELEASE).byte(0)
    e.byte(FREE_HELD)
    out["seed_hit_after_release"] = e.data()

    e = header(Enc(), lb, CAP_64K)
    for n in (30000, 20000, 10000):
        small(e.byte(ALLOC), n % 4096 + 1)
    pow2(e.byte(ALLOC), 15, 0)
    e.byte(RELEASE).byte(0)
    e.byte(RELEASE).byte(0)
    pow2(e.byte(ALLOC), 16, 0)  # needs the held blocks freed
    out["seed_oom_frees_held"] = e.data()

    e = header(Enc(), lb, UNLIMITED)
    for k, d in ((0, 0), (0, 1), (32, -1), (32, 0), (32, 1), (63, -1), (63, 0), (63, 1)):
        pow2(e.byte(ALLOC), k, d)
    e.byte(ALLOC).byte(0)  # size 0
    e.byte(ALLOC).byte(5).byte(0)  # 2^64 - 1
    e.byte(RELEASE).byte(0)
    pow2(e.byte(ALLOC), 0, 0)  # a hit on the released 1-byte block
    e.byte(MOVE).byte(1).byte(2)
    e.byte(STOP)
    out["seed_edge_sizes"] = e.data()

    e = header(Enc(), lb, UNLIMITED)
    for n in (1000, 2000, 3000):
        small(e.byte(ALLOC), n)
    e.byte(RELEASE).byte(0)
    e.byte(RELEASE).byte(0)
    e.byte(POLICY).byte(0).byte(1).byte(3)  # max_held = 0 ... ratio 1.0
    e.byte(LIMIT).byte(2)
    e.byte(TRIM).byte(1)
    e.byte(LIMIT).byte(0)
    e.byte(INJECT).byte(1)
    small(e.byte(ALLOC), 4000)
    e.byte(CAPACITY).byte(0).byte(2)  # capacity = active rounded bytes
    small(e.byte(ALLOC), 1)  # out of memory at the device
    out["seed_policy_limit_trim_inject"] = e.data()

    # 24 bytes, so pool_ops_fuzzer (max_len 32) keeps all of it: allocate()'s fast-path hit and
    # its out_of_memory exception.
    e = header(Enc(), lb, CAP_64K)
    small(e.byte(ALLOC_THROWING), 100)
    e.byte(RELEASE)
    small(e.byte(ALLOC_THROWING), 100)
    pow2(e.byte(ALLOC_THROWING), 16, 0)  # 64 KiB on a 64 KiB device with 100 B live: out of memory
    e.byte(RELEASE)
    pow2(e.byte(ALLOC_THROWING), 15, 0)
    out["seed_allocate_fast_hit_and_oom"] = e.data()
    return out


def deep_seeds(lb):
    """Long sequences for pool_ops_deep_fuzzer (up to 512 operations): the fuzzer's limit of 256
    live allocations, then releases in a scattered order, a trim policy, and hits on what is held.
    """
    out = seeds(lb)
    e = header(Enc(), lb, UNLIMITED)
    for i in range(256):  # every live slot; one more allocate would be skipped
        small(e.byte(ALLOC), 1 + (i * 37) % 4000)
    live = 256
    for i in range(128):  # release index: InRange(0, live - 1), one byte while live <= 256
        e.byte(RELEASE).byte((i * 7) % live)
        live -= 1
    e.byte(POLICY).byte(1).byte(4)  # max_held = unlimited, ratio 2.0
    for i in range(120):
        small(e.byte(ALLOC), 1 + (i * 37) % 4000)  # mostly hits on the held blocks
    e.byte(TRIM).byte(1)
    e.byte(FREE_HELD)
    e.byte(STOP)
    out["seed_deep_many_live"] = e.data()
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "fuzz/corpus"
    for sub, make in (
        ("pool_ops", lambda: seeds(4)),
        ("pool_ops_high_lb", lambda: seeds(3)),  # high_lb: 9 + 3 = 12
        ("pool_ops_deep", lambda: deep_seeds(4)),
    ):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
        for name, data in make().items():
            with open(os.path.join(root, sub, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
