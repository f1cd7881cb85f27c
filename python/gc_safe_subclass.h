// A C subclass of another extension's class (PyOpenCL's pyopencl.SVM) whose dealloc untracks the
// object from the garbage collector before the binding library's dealloc runs, where that dealloc
// leaves a dying object tracked (the seam says which: python/foreign_binding.h). pybind11 2.10,
// which PyOpenCL 2022.3 is built with, does, so a weakref callback or attribute destructor that
// runs during its dealloc and triggers a collection (or releases the GIL while another thread
// collects) makes the collector free it twice (fixed in pybind11 2.11, PR #4461). Python
// subclasses of the returned type keep the protection: CPython's subtype_dealloc calls this
// dealloc as their base's.
#ifndef CLPOOL_PYTHON_GC_SAFE_SUBCLASS_H_
#define CLPOOL_PYTHON_GC_SAFE_SUBCLASS_H_

#include <Python.h>

namespace clpool::python {

// A new reference to a subclass of `base` named `name` (static storage) that Python code may
// subclass further, when the seam classifies `base` as a binding whose dealloc leaves a dying
// object tracked (pybind11 of this ABI); `base` itself for any other class (nanobind's dealloc
// untracks first; on the generic path, forced by CLPOOL_PYTHON_BINDING=generic too, no dealloc
// of clpool's stands in front of the binding library's). nullptr with an exception set when
// `base` is not a type or CLPOOL_PYTHON_BINDING is bad. At most 4 such types per process.
PyObject* make_gc_safe_subclass(PyObject* base, const char* name, const char* doc);

}  // namespace clpool::python

#endif  // CLPOOL_PYTHON_GC_SAFE_SUBCLASS_H_
