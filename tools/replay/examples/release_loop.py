"""A loop that allocates device buffers, fills each one on the queue and drops it, keeping one in
ten: the program holds about 16 MiB at any time. Run it as is (it never waits on its queue) or with
--wait (queue.finish() after each step). Recorded on POCL, which runs a queue's commands when the
program waits on it, the trace without waits has the driver's frees at the program's exit; the
program's releases (trace/FORMAT.md "Two moments of a free") are the same in both, and so is the
replay's answer by default (tools/replay/README.md, "When a free happens").

    clpool record --out loop.trace -- /usr/bin/python3 tools/replay/examples/release_loop.py [--wait]
"""
import argparse

import numpy as np
import pyopencl as cl


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wait", action="store_true", help="queue.finish() after each step")
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    kept = []
    for step in range(args.steps):
        size = (1 + step % 4) << 20  # 1 to 4 MiB
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, size)
        cl.enqueue_fill_buffer(queue, buf, np.uint8(step), 0, size)
        if step % 10 == 0:
            kept.append(buf)
        del buf  # the program's release; the driver frees it once the fill has run
        if args.wait:
            queue.finish()
    queue.finish()


if __name__ == "__main__":
    main()
