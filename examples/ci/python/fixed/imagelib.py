"""imagelib: a small image library on PyOpenCL (thumbnails, smoothing, enlarging).

An example for clpool's CI tools (README.md, "Use it in CI"): ../buggy/imagelib.py with its three
device-memory bugs fixed (each marked FIXED), so that tests/test_imagelib.py passes.
"""
import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.tools as cl_tools

_SOURCE = """
__kernel void shrink(__global const float* in, __global float* out, int w, int f) {
  int x = get_global_id(0), y = get_global_id(1), ow = get_global_size(0);
  float s = 0;
  for (int j = 0; j < f; ++j)
    for (int i = 0; i < f; ++i) s += in[(y * f + j) * w + x * f + i];
  out[y * ow + x] = s / (f * f);
}
__kernel void smooth(__global const float* in, __global float* out) {
  int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);
  int l = x > 0 ? x - 1 : x, r = x + 1 < w ? x + 1 : x;
  out[y * w + x] = (in[y * w + l] + in[y * w + x] + in[y * w + r]) / 3;
}
__kernel void enlarge_smooth(__global const float* in, __global float* out, int w, int f) {
  int x = get_global_id(0), y = get_global_id(1), ow = get_global_size(0);
  int l = x > 0 ? x - 1 : x, r = x + 1 < ow ? x + 1 : x;
  __global const float* row = in + (y / f) * w;
  out[y * ow + x] = (row[l / f] + row[x / f] + row[r / f]) / 3;
}
"""

_programs = {}


def _program(context):
    if context not in _programs:
        _programs[context] = cl.Program(context, _SOURCE).build()
    return _programs[context]


def _allocator(queue):
    # Buffers committed on the device when they are made, so an out-of-memory shows there.
    return cl_tools.ImmediateAllocator(queue)


_thumbnails = {}


def thumbnail(queue, image, factor=4):
    """The image shrunk by `factor` (a float32 numpy array), averaging factor x factor blocks."""
    key = (id(image), factor)
    if key not in _thumbnails:
        h, w = image.shape
        source = cla.to_device(queue, np.ascontiguousarray(image, np.float32), allocator=_allocator(queue))
        small = cla.empty(queue, (h // factor, w // factor), np.float32, allocator=_allocator(queue))
        _program(queue.context).shrink(queue, (w // factor, h // factor), None, source.data, small.data,
                                       np.int32(w), np.int32(factor))
        _thumbnails[key] = small.get()   # FIXED: the host copy is cached, the device's freed
    return _thumbnails[key]


def smooth_all(queue, images):
    """Each image smoothed along its rows with a 3-tap box filter."""
    results = []
    for im in images:   # FIXED: one image on the device at a time
        d = cla.to_device(queue, np.ascontiguousarray(im, np.float32), allocator=_allocator(queue))
        out = cla.empty(queue, d.shape, np.float32, allocator=_allocator(queue))
        _program(queue.context).smooth(queue, d.shape[::-1], None, d.data, out.data)
        results.append(out.get())
    return results


def enlarge(queue, image, factor, out_rows=None):
    """The image enlarged by `factor` (nearest neighbour), then smoothed along its rows. Returns
    the device array, or its first `out_rows` rows on the host."""
    h, w = image.shape
    source = cla.to_device(queue, np.ascontiguousarray(image, np.float32), allocator=_allocator(queue))
    shape = (h * factor, w * factor)
    out = cla.empty(queue, shape, np.float32, allocator=_allocator(queue))
    # FIXED: one kernel enlarges and smooths, with no full-size image in between
    _program(queue.context).enlarge_smooth(queue, shape[::-1], None, source.data, out.data,
                                           np.int32(w), np.int32(factor))
    return out if out_rows is None else out[:out_rows].get()
