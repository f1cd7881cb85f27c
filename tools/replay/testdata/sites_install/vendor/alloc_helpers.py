"""A helper module the test names library code with clpool_replay --library-frames."""
import numpy as np
import pyopencl.array as cla


def scratch(queue, n):
    return cla.empty(queue, n, np.float32)  # HELPER-LINE
