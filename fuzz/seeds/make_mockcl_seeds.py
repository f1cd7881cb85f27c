#!/usr/bin/env python3
"""Writes the hand-made seeds of fuzz/corpus/pool_mockcl/ and fuzz/corpus/svm_ordering/ (seed_*):
readable scenarios encoded the way pool_mockcl_fuzzer.cc and svm_ordering_fuzzer.cc decode them
with FuzzedDataProvider, which takes integers from the END of the input, as few bytes as the
range needs, most significant first. Check what a seed does with CLPOOL_FUZZ_TRACE=1.

    python3 fuzz/seeds/make_mockcl_seeds.py fuzz/corpus
"""
import os
import sys


class Enc:
    def __init__(self):
        self.consumed = []  # bytes in the order the fuzzer consumes them

    def rng(self, lo, hi, v):
        """ConsumeIntegralInRange(lo, hi) returning v."""
        assert lo <= v <= hi, (lo, hi, v)
        span, off = hi - lo, v - lo
        nbytes = 0
        while nbytes < 8 and (span >> (8 * nbytes)) > 0:
            nbytes += 1
        for i in reversed(range(nbytes)):
            self.consumed.append((off >> (8 * i)) & 0xFF)
        return self

    def flag(self, b):
        self.consumed.append(1 if b else 0)
        return self

    def data(self):
        return bytes(reversed(self.consumed))


# ---- pool_mockcl_fuzzer ------------------------------------------------------------------------
IMMEDIATE, IMMEDIATE_WAIT, DEFERRED, SVM, SVM_FREE_QUEUE, PINNED = range(6)
SEM_IMMEDIATE, SEM_DEFERRED, SEM_HOST_OOM = range(3)
CAP_64K, CAP_1M, CAP_16M = 0, 1, 2
MAX_EQ_CAP, MAX_QUARTER, MAX_TWICE = 0, 1, 2
# Operation picks (pool_mockcl_fuzzer.cc: 0..31).
(
    P_ALLOC,
    P_RELEASE,
    P_FILL,
    P_KERNEL,
    P_FREE_HELD,
    P_STOP,
    P_LIMIT,
    P_TRIM,
    P_FINISH,
    P_NTH,
    P_EXEC,
) = (0, 11, 17, 19, 20, 21, 22, 24, 25, 26, 30)
(
    CL_MEM_OBJECT_ALLOCATION_FAILURE,
    CL_OUT_OF_RESOURCES,
    CL_OUT_OF_HOST_MEMORY,
    CL_INVALID_VALUE,
) = range(4)
CAPS = {CAP_64K: 64 << 10, CAP_1M: 1 << 20, CAP_16M: 16 << 20}
# Entry lists per kind (consume_entry), and the command entries for exec rules.
ENTRIES = {
    IMMEDIATE: [
        "clCreateBuffer",
        "clEnqueueMigrateMemObjects",
        "clEnqueueFillBuffer",
        "clEnqueueNDRangeKernel",
        "clFinish",
    ],
    IMMEDIATE_WAIT: [
        "clCreateBuffer",
        "clEnqueueMigrateMemObjects",
        "clWaitForEvents",
        "clEnqueueFillBuffer",
        "clEnqueueNDRangeKernel",
        "clFinish",
    ],
    DEFERRED: ["clCreateBuffer", "clEnqueueFillBuffer", "clEnqueueNDRangeKernel", "clFinish"],
    SVM: ["clSVMAlloc", "clEnqueueSVMMemFill", "clEnqueueNDRangeKernel", "clFinish"],
    SVM_FREE_QUEUE: ["clSVMAlloc", "clEnqueueSVMMemFill", "clEnqueueNDRangeKernel", "clFinish"],
    PINNED: ["clCreateBuffer", "clEnqueueMapBuffer", "clFinish"],
}
COMMANDS = {
    "clEnqueueMigrateMemObjects",
    "clEnqueueFillBuffer",
    "clEnqueueNDRangeKernel",
    "clEnqueueSVMMemFill",
}


class PoolSeed:
    def __init__(
        self,
        kind,
        sem,
        cap,
        max_alloc,
        lb=4,
        pool_first=True,
        pinned_quarter=True,
        pinned=None,
        svm_first_use=False,
    ):
        self.e, self.kind, self.live = Enc(), kind, 0
        self.cap = CAPS[cap]
        self.max = {
            MAX_EQ_CAP: self.cap,
            MAX_QUARTER: max(1, self.cap // 4),
            MAX_TWICE: self.cap * 2,
        }[max_alloc]
        self.pinned = max(1, self.cap // 4) if pinned_quarter else pinned
        e = self.e
        e.rng(0, 5, kind).rng(0, 6, lb).flag(pool_first).rng(0, 2, sem)
        # Read only for an SVM pool on a deferred device: charged at clSVMAlloc or at first use.
        if kind in (SVM, SVM_FREE_QUEUE) and sem == SEM_DEFERRED:
            e.flag(svm_first_use)
        else:
            assert not svm_first_use, "svm_first_use needs an SVM pool on a deferred device"
        e.rng(0, 5, cap).rng(0, 3, max_alloc)
        e.flag(pinned_quarter)
        if not pinned_quarter:
            e.rng(1, 1 << 20, pinned)

    def budget(self):
        return self.pinned if self.kind == PINNED else self.cap

    def alloc_small(self, n, ok=True):  # consume_size default: 1..4096
        self.e.rng(0, 31, P_ALLOC).rng(0, 11, 9).rng(1, 4096, n)
        self.live += ok
        return self

    def alloc_part(self, n, ok=True):  # consume_size 7: 1..budget/2+1
        self.e.rng(0, 31, P_ALLOC).rng(0, 11, 7).rng(1, self.budget() // 2 + 1, n)
        self.live += ok
        return self

    def alloc_cap_edge(self, d, ok=True):  # budget - 1 + d, d in 0..2
        self.e.rng(0, 31, P_ALLOC).rng(0, 11, 4).rng(0, 2, d)
        self.live += ok
        return self

    def alloc_above_max(self, extra):  # max_alloc + 1 + extra: CL_INVALID_BUFFER_SIZE
        self.e.rng(0, 31, P_ALLOC).rng(0, 11, 3).rng(0, 1 << 20, extra)
        return self

    def alloc_zero(self):
        self.e.rng(0, 31, P_ALLOC).rng(0, 11, 0)
        return self

    def index(self, i):
        if self.live > 1:
            self.e.rng(0, self.live - 1, i)

    def release(self, i):
        self.e.rng(0, 31, P_RELEASE)
        self.index(i)
        self.live -= 1
        return self

    def use(self, i, kernel=False):
        self.e.rng(0, 31, P_KERNEL if kernel else P_FILL)
        self.index(i)
        return self

    def simple(self, pick):
        self.e.rng(0, 31, pick)
        return self

    def limit_managed(self):  # consume_bytes 3: managed bytes
        self.e.rng(0, 31, P_LIMIT).rng(0, 5, 3)
        return self

    def limit_unlimited(self):
        self.e.rng(0, 31, P_LIMIT).rng(0, 5, 0)
        return self

    def trim_zero(self):
        self.e.rng(0, 31, P_TRIM).rng(0, 5, 1)
        return self

    def fault(self, entry, n, status, execute=False):
        names = ENTRIES[self.kind]
        if execute:
            names = [x for x in names if x in COMMANDS]
        self.e.rng(0, 31, P_EXEC if execute else P_NTH).rng(0, len(names) - 1, names.index(entry))
        self.e.rng(1, 3, n).rng(0, 6, status)
        return self


def pool_mockcl_seeds():
    out = {}
    s = PoolSeed(IMMEDIATE, SEM_IMMEDIATE, CAP_1M, MAX_TWICE)
    s.alloc_part(400000).alloc_part(400000).release(1).release(0)
    s.alloc_cap_edge(0)  # 1 MiB - 1: fits only once both held blocks are freed
    s.release(0).alloc_part(400000).alloc_above_max(0).use(0).use(0, kernel=True).simple(P_FINISH)
    s.alloc_small(4096).alloc_zero().simple(P_FREE_HELD)
    out["seed_immediate_oom_frees_held_then_invalid_size"] = s.e.data()

    s = PoolSeed(DEFERRED, SEM_DEFERRED, CAP_1M, MAX_TWICE)
    s.alloc_part(300000).alloc_part(300000).alloc_part(300000).alloc_part(300000)  # over-commits
    s.use(0).use(1, kernel=True).use(2).use(3)  # the fourth does not fit: -4 at first use
    s.release(3).simple(P_FREE_HELD).use(2, kernel=True).alloc_above_max(5).simple(P_STOP)
    s.release(0).release(0)
    out["seed_deferred_charged_at_first_use"] = s.e.data()

    s = PoolSeed(SVM_FREE_QUEUE, SEM_IMMEDIATE, CAP_16M, MAX_QUARTER)
    s.alloc_small(1000).alloc_small(3000).release(0)
    s.fault("clSVMAlloc", 1, CL_INVALID_VALUE).alloc_small(2000)  # NULL: out of memory, retried
    s.alloc_above_max(0).use(0).use(1, kernel=True)
    s.fault("clEnqueueSVMMemFill", 1, CL_OUT_OF_RESOURCES, execute=True).use(0).simple(P_FINISH)
    s.fault("clEnqueueSVMMemFill", 1, CL_INVALID_VALUE).use(1).trim_zero().release(0)
    out["seed_svm_faults"] = s.e.data()

    s = PoolSeed(IMMEDIATE_WAIT, SEM_HOST_OOM, CAP_64K, MAX_TWICE)
    s.alloc_small(4096).release(0)
    s.fault("clEnqueueMigrateMemObjects", 1, CL_INVALID_VALUE, execute=True).alloc_small(
        2000, ok=False
    )
    s.fault("clWaitForEvents", 1, CL_OUT_OF_RESOURCES).alloc_small(2000)  # retried after freeing
    s.fault("clCreateBuffer", 2, CL_OUT_OF_HOST_MEMORY).alloc_small(3000).alloc_small(3000)
    s.limit_managed().alloc_small(100, ok=False).limit_unlimited().alloc_cap_edge(2, ok=False)
    out["seed_immediate_wait_faults_host_oom"] = s.e.data()

    s = PoolSeed(PINNED, SEM_IMMEDIATE, CAP_1M, MAX_EQ_CAP, pinned_quarter=False, pinned=65536)
    s.alloc_part(20000).alloc_part(20000).release(0).alloc_part(30000)
    s.fault("clEnqueueMapBuffer", 1, CL_OUT_OF_RESOURCES).alloc_part(10000)
    s.fault("clCreateBuffer", 1, CL_INVALID_VALUE).alloc_small(10, ok=False)
    s.alloc_cap_edge(2, ok=False).simple(P_STOP).release(0)
    out["seed_pinned_budget_and_faults"] = s.e.data()

    s = PoolSeed(SVM, SEM_DEFERRED, CAP_64K, MAX_EQ_CAP, lb=0, pool_first=False)
    for _ in range(4):
        s.alloc_small(4096)
    s.release(2).release(0).alloc_cap_edge(0).alloc_small(4096).use(0).simple(P_FREE_HELD)
    out["seed_svm_no_free_queue_small_device"] = s.e.data()

    # svm_oom_at = first_use: clSVMAlloc charges nothing, so the pool over-commits; the first use
    # that does not fit fails with -4, and a block never charged frees 0 bytes.
    s = PoolSeed(SVM_FREE_QUEUE, SEM_DEFERRED, CAP_64K, MAX_EQ_CAP, svm_first_use=True)
    s.alloc_part(30000).alloc_part(30000).alloc_part(30000)
    s.use(0).use(1, kernel=True).use(2).use(2, kernel=True)  # the third block does not fit
    # Freeing the block never charged gives nothing back: a new block still does not fit ...
    s.release(2).simple(P_FREE_HELD).use(1).alloc_part(30000).use(2)
    # ... until a charged one is freed.
    s.release(0).simple(P_FREE_HELD).use(1).release(0).release(0)
    out["seed_svm_charged_at_first_use"] = s.e.data()
    return out


# ---- svm_ordering_fuzzer -----------------------------------------------------------------------
O_SVM, O_SVM_FREE_FIRST, O_SVM_FREE_LAST, O_BUF_IMMEDIATE, O_BUF_DEFERRED = range(5)
(
    Q_ALLOC,
    Q_FILL,
    Q_KERNEL,
    Q_COPY,
    Q_BIND,
    Q_UNBIND,
    Q_RELEASE,
    Q_ENQ_RELEASE,
    Q_FREE_HELD,
    Q_FLUSH,
    Q_FINISH,
) = (0, 8, 11, 14, 16, 19, 20, 23, 26, 27, 30)


class OrderSeed:
    def __init__(self, kind, nq, lazy, seed=0, kernel=0, pool_first=True):
        self.e, self.nq, self.live = Enc(), nq, 0
        self.e.rng(0, 4, kind).rng(2, 4, nq).flag(lazy).rng(0, 3, seed).rng(0, 2, kernel).flag(
            pool_first
        )

    def index(self, i):
        if self.live > 1:
            self.e.rng(0, self.live - 1, i)

    def alloc(self, size_class, q):  # q: -1 none, 0..nq-1, nq: out-of-order (refused)
        self.e.rng(0, 31, Q_ALLOC).rng(0, 2, size_class).rng(-1, self.nq + 1, q)
        self.live += q != self.nq
        return self

    def use(self, i, pick=Q_FILL, j=None):
        self.e.rng(0, 31, pick)
        self.index(i)
        if pick == Q_COPY:
            self.index(j)
        return self

    def bind(self, i, q):
        self.e.rng(0, 31, Q_BIND)
        self.index(i)
        self.e.rng(0, self.nq + 1, q)
        return self

    def unbind(self, i):
        self.e.rng(0, 31, Q_UNBIND)
        self.index(i)
        return self

    def release(self, i):
        self.e.rng(0, 31, Q_RELEASE)
        self.index(i)
        self.live -= 1
        return self

    def enqueue_release(self, i, q):
        self.e.rng(0, 31, Q_ENQ_RELEASE)
        self.index(i)
        self.e.rng(-1, self.nq + 1, q)
        self.live -= q != self.nq
        return self

    def queue_op(self, pick, q):
        self.e.rng(0, 31, pick).rng(0, self.nq, q)
        return self


def svm_ordering_seeds():
    out = {}
    s = OrderSeed(O_SVM_FREE_FIRST, 3, lazy=True)
    s.alloc(0, 0).use(0).use(0, Q_KERNEL).release(0)
    s.alloc(0, 1).use(0)  # the held block, reused on queue 1: must wait for queue 0's fill
    s.alloc(1, 2).use(1).bind(0, 2).use(0).use(0, Q_COPY, 1)
    s.bind(0, 3).alloc(2, 3)  # the out-of-order queue: both refused
    s.enqueue_release(1, 1).enqueue_release(0, 3).queue_op(Q_FLUSH, 2).unbind(0)
    s.e.rng(0, 31, Q_FREE_HELD)
    s.queue_op(Q_FINISH, 0)
    out["seed_svm_reuse_across_queues_lazy"] = s.e.data()

    s = OrderSeed(O_BUF_IMMEDIATE, 2, lazy=False, kernel=2)
    s.alloc(0, 0).alloc(0, 0).use(0).use(1, Q_KERNEL).use(0, Q_COPY, 1)
    s.enqueue_release(0, 0).alloc(0, 1).use(1).bind(0, 1).use(0, Q_COPY, 1).release(1)
    s.alloc(0, -1).bind(1, 0).use(1).enqueue_release(1, 2)  # out-of-order: refused
    s.release(1).release(0)
    s.e.rng(0, 31, Q_FREE_HELD)
    out["seed_buffer_cross_queue_eager"] = s.e.data()

    s = OrderSeed(O_SVM, 4, lazy=True, seed=2, pool_first=False)
    for q in range(4):
        s.alloc(q % 3, q).use(q, Q_KERNEL)
    s.unbind(2).release(2).alloc(2, 3).use(3)
    s.release(0).release(0).alloc(0, 2).use(1)
    s.e.rng(0, 31, Q_FREE_HELD)
    s.queue_op(Q_FLUSH, 1).queue_op(Q_FINISH, 4)
    out["seed_svm_host_free_four_queues"] = s.e.data()

    s = OrderSeed(O_BUF_DEFERRED, 3, lazy=True, kernel=1)
    s.alloc(1, 1).use(0).bind(0, 2).use(0, Q_KERNEL).release(0).alloc(1, 0).use(0)
    s.alloc(1, 0).use(1, Q_COPY, 0).enqueue_release(1, 1).queue_op(Q_FINISH, 1)
    out["seed_buffer_deferred_lazy"] = s.e.data()

    s = OrderSeed(O_SVM_FREE_LAST, 2, lazy=False)
    s.alloc(0, 0).use(0).alloc(0, 1).use(1).use(0, Q_COPY, 1).bind(1, 0).use(0, Q_COPY, 1)
    s.release(0).release(0)
    s.e.rng(0, 31, Q_FREE_HELD)
    out["seed_svm_free_queue_last_eager"] = s.e.data()
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "fuzz/corpus"
    for sub, seeds in (
        ("pool_mockcl", pool_mockcl_seeds()),
        ("svm_ordering", svm_ordering_seeds()),
    ):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(root, sub, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
