// A C subclass of a pybind11 class from another extension (PyOpenCL's pyopencl.SVM) whose dealloc
// untracks the object from the garbage collector before pybind11's dealloc runs. pybind11 2.10,
// which PyOpenCL 2022.3 is built with, leaves a dying object tracked, so a weakref callback or
// attribute destructor that runs during its dealloc and triggers a collection (or releases the
// GIL while another thread collects) makes the collector free it twice (fixed in pybind11 2.11,
// PR #4461). Python subclasses of the returned type keep the protection: CPython's subtype_dealloc
// calls this dealloc as their base's.
#ifndef CLPOOL_PYTHON_GC_SAFE_SUBCLASS_H_
#define CLPOOL_PYTHON_GC_SAFE_SUBCLASS_H_

#include <Python.h>

namespace clpool::python {

// A new reference to a subclass of `base` named `name` (static storage) that Python code may
// subclass further, when `base` is a pybind11 class of this ABI; `base` itself for any other
// class (nanobind's dealloc untracks first). nullptr with an exception set when `base` is not a
// type. At most 4 such types per process.
PyObject* make_gc_safe_subclass(PyObject* base, const char* name, const char* doc);

// True if `dealloc` is pybind11's instance dealloc of the shared internals (the layout checks of
// this file and of pooled_buffer_type.cc rely on it).
bool is_pybind11_instance_type(PyTypeObject* type);

}  // namespace clpool::python

#endif  // CLPOOL_PYTHON_GC_SAFE_SUBCLASS_H_
