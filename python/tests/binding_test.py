"""Which binding path clpool chose for the PyOpenCL that is loaded (python/foreign_binding.h), and
what each path promises: pybind11 for PyOpenCL 2022.x/2023.x and nanobind for 2024.2 onwards reuse
a block's object across hits; the generic path (forced with CLPOOL_PYTHON_BINDING=generic, as the
*_generic test targets do) makes a new one per hit. Every path: the object is a pyopencl.Buffer of
exactly the block, a kernel argument on POCL, and its block goes back however it is dropped."""
import gc
import os
import subprocess
import sys
import unittest
import weakref

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

import clpool._core
import clpool.pyopencl as cp
import cltest

FORCED_GENERIC = os.environ.get("CLPOOL_PYTHON_BINDING") == "generic"
NANOBIND_PYOPENCL = cl.VERSION >= (2024, 2)


class BindingTest(unittest.TestCase):
    def setUp(self):
        self.ctx, self.queue = cltest.context_and_queue()
        self.pool = cp.MemoryPool(cp.ImmediateAllocator(self.queue))

    def test_path_follows_the_loaded_pyopencl(self):
        kind, detail = cp.BINDING
        if FORCED_GENERIC:
            self.assertEqual(kind, "generic")
            self.assertIn("CLPOOL_PYTHON_BINDING", detail)
        elif NANOBIND_PYOPENCL:
            self.assertEqual(kind, "nanobind", detail)
            self.assertIn("nanobind ABI v21", detail)
        else:
            self.assertEqual(kind, "pybind11", detail)
        self.assertEqual(clpool._core.binding(), cp.BINDING)

    def test_objects_reused_only_on_a_known_binding(self):
        objects = clpool._core.pooled_buffer_objects()  # other tests' pools may still hold some
        b = self.pool.allocate(4096)
        first = id(b)
        handle = b.int_ptr
        del b
        b = self.pool.allocate(4096)
        self.assertEqual(b.int_ptr, handle)  # the same block either way
        if cp.BINDING[0] != "generic":
            self.assertEqual(id(b), first)
        self.assertEqual(clpool._core.pooled_buffer_objects(), objects + 1)
        del b
        held_objects = clpool._core.pooled_buffer_objects() - objects
        self.assertEqual(held_objects, 0 if cp.BINDING[0] == "generic" else 1)

    def test_the_class_of_a_pooled_buffer_cannot_be_switched(self):
        # Its pool ties it to its block by address: switched to a plain Buffer, its block stayed
        # active and the table entry stale (the generic path let CPython allow it).
        objects = clpool._core.pooled_buffer_objects()
        b = self.pool.allocate(4096)
        with self.assertRaises(TypeError):
            b.__class__ = cl.Buffer
        self.assertIs(type(b), cp.PooledBuffer)
        b.note = "attributes are still set as on any Buffer"
        object.__setattr__(b, "other", 2)  # every route but __class__ as the base's
        self.assertEqual((b.note[:10], b.other, b.__class__), ("attributes", 2, cp.PooledBuffer))
        self.assertIsInstance(b, cl.Buffer)
        del b
        gc.collect()
        self.assertEqual(self.pool.active_blocks, 0)
        self.assertEqual(clpool._core.pooled_buffer_objects(), objects)

    def test_attribute_or_weakref_makes_a_fresh_object(self):
        b = self.pool.allocate(4096)
        b.note = "the last user's"
        del b
        b = self.pool.allocate(4096)
        self.assertFalse(hasattr(b, "note"))
        del b
        # An object with a weak reference is never kept for the next hit (a kept one would
        # keep the reference alive, pointing at the next user's buffer): it dies with the
        # user's last strong reference, and the pool holds the block without it.
        objects = clpool._core.pooled_buffer_objects()
        b = self.pool.allocate(4096)
        try:
            w = weakref.ref(b)
        except TypeError:
            # PyOpenCL's own Buffer takes none on this binding (nanobind's default), so a
            # PooledBuffer, which must behave as one, takes none either.
            plain = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, 4096)
            with self.assertRaises(TypeError):
                weakref.ref(plain)
            return
        handle = b.int_ptr
        del b
        self.assertIsNone(w())
        kept_before = 0 if cp.BINDING[0] == "generic" else 1
        self.assertEqual(clpool._core.pooled_buffer_objects(), objects - kept_before)
        b = self.pool.allocate(4096)
        self.assertEqual(b.int_ptr, handle)  # the same block, in another object
        del b
        self.assertEqual(self.pool.held_blocks, 1)

    def test_buffer_semantics(self):
        b = self.pool.allocate(1000)
        self.assertIsInstance(b, cl.Buffer)
        self.assertIsInstance(b, cp.PooledBuffer)
        self.assertEqual(type(b).__name__, "PooledBuffer")
        self.assertEqual(type(b).__module__, "clpool.pyopencl")
        self.assertEqual(b.size, self.pool.managed_bytes)
        b.release()
        with self.assertRaises(cl.LogicError) as cm:
            b.release()
        self.assertIn("already released", str(cm.exception))
        self.assertIn("PooledBuffer.release", str(cm.exception))
        with self.assertRaises(TypeError):  # not a base for further subclasses
            type("Sub", (cp.PooledBuffer,), {})
        del b
        self.assertEqual((self.pool.active_blocks, self.pool.held_blocks), (0, 1))

    def test_arrays_and_kernels(self):
        a = cla.zeros(self.queue, 1024, np.float32, allocator=self.pool)
        a += 2
        if cltest.MODE == "pocl":
            prg = cl.Program(
                self.ctx, "__kernel void inc(__global float *x) " "{ x[get_global_id(0)] += 1; }"
            ).build()
            prg.inc(self.queue, (1024,), None, a.data)
            self.assertTrue(np.all(a.get() == 3))
        del a
        gc.collect()
        self.assertEqual(self.pool.active_blocks, 0)

    def test_every_way_of_dropping(self):
        for _ in range(3):
            bufs = [self.pool.allocate(4096 * (i % 3 + 1)) for i in range(30)]
            cycle = [bufs[0]]
            cycle.append(cycle)
            bufs[1].release()
            sub = bufs[2].get_sub_region(0, 16)
            del bufs, cycle
            gc.collect()
            # As with PyOpenCL's pool, a sub-buffer does not hold its parent's block (OpenCL
            # keeps the parent cl_mem alive for it).
            self.assertEqual(self.pool.active_blocks, 0)
            self.assertEqual(sub.size, 16)
            del sub

    def test_the_seam_classifies_every_class_alike(self):
        # One seam (python/foreign_binding.h) for every class clpool deals with: pyopencl.Buffer
        # (PooledBuffer), pyopencl.SVM (PooledSVM's base) and whatever clpool.record watches.
        kind = cp.BINDING[0]
        for cls in (cl.Buffer, cl.SVM):
            cls_kind, detail, signal = clpool._core.binding_of(cls)
            self.assertEqual(cls_kind, kind, (cls, detail))
            if FORCED_GENERIC:
                self.assertIn("CLPOOL_PYTHON_BINDING", detail)
            # PyOpenCL 2022.x's pybind11 classes take weak references; 2024.2 onwards' nanobind
            # classes take none but attributes, on every path.
            self.assertEqual(signal, "attribute" if NANOBIND_PYOPENCL else "weakref", cls)
        self.assertEqual(clpool._core.binding_of(object)[0], "generic")
        self.assertEqual(clpool._core.binding_of(int)[2], "none")
        with self.assertRaises(TypeError):
            clpool._core.binding_of(cl.Buffer.from_int_ptr)

    def test_bad_binding_setting_is_an_error(self):
        env = dict(os.environ, CLPOOL_PYTHON_BINDING="fast")
        r = subprocess.run(
            [sys.executable, "-c", "import clpool.pyopencl"],
            env=env,
            capture_output=True,
            text=True,
        )
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("CLPOOL_PYTHON_BINDING=fast", r.stderr)
        self.assertIn("ValueError", r.stderr)
        # The seam's own query, which every user of the seam goes through, refuses it too.
        r = subprocess.run(
            [sys.executable, "-c", "import clpool._core; clpool._core.binding_of(object)"],
            env=env,
            capture_output=True,
            text=True,
        )
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ValueError: CLPOOL_PYTHON_BINDING=fast", r.stderr)


if __name__ == "__main__":
    unittest.main()
