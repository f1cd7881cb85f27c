#include "python/gc_safe_subclass.h"

#include <pybind11/pybind11.h>

namespace clpool::python {
namespace {

// One slot per type made (each needs its own dealloc to know its base's).
constexpr int kMaxTypes = 4;
destructor g_base_dealloc[kMaxTypes] = {};
int g_types = 0;

template <int I>
void untracking_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  g_base_dealloc[I](self);
}

constexpr destructor kDeallocs[kMaxTypes] = {untracking_dealloc<0>, untracking_dealloc<1>,
                                             untracking_dealloc<2>, untracking_dealloc<3>};

}  // namespace

bool is_pybind11_instance_type(PyTypeObject* type) {
  auto* instance_base =
      reinterpret_cast<PyTypeObject*>(pybind11::detail::get_internals().instance_base);
  return PyType_IsSubtype(type, instance_base) && type->tp_dealloc == instance_base->tp_dealloc &&
         (type->tp_flags & Py_TPFLAGS_HEAPTYPE) != 0;
}

PyObject* make_gc_safe_subclass(PyObject* base, const char* name, const char* doc) {
  if (!PyType_Check(base)) {
    PyErr_Format(PyExc_TypeError, "%s: the base is not a type", name);
    return nullptr;
  }
  if (!is_pybind11_instance_type(reinterpret_cast<PyTypeObject*>(base))) {
    // Not pybind11 (PyOpenCL 2024.2 onwards is nanobind, whose dealloc untracks first): there is
    // no defect to guard against, and no dealloc of this file's kind that could stand in for an
    // unknown binding library's. The base serves as it is.
    Py_INCREF(base);
    return base;
  }
  if (g_types == kMaxTypes) {
    PyErr_SetString(PyExc_RuntimeError, "make_gc_safe_subclass: too many types");
    return nullptr;
  }
  PyType_Slot slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void*>(kDeallocs[g_types])},
      {Py_tp_doc, const_cast<char*>(doc)},
      {0, nullptr},
  };
  PyType_Spec spec = {name, 0, 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
  PyObject* bases = PyTuple_Pack(1, base);
  if (bases == nullptr) return nullptr;
  PyObject* type = PyType_FromSpecWithBases(&spec, bases);
  Py_DECREF(bases);
  if (type == nullptr) return nullptr;
  auto* t = reinterpret_cast<PyTypeObject*>(type);
  auto* b = reinterpret_cast<PyTypeObject*>(base);
  if (t->tp_basicsize != b->tp_basicsize || (t->tp_flags & Py_TPFLAGS_HAVE_GC) == 0) {
    Py_DECREF(type);
    PyErr_Format(PyExc_TypeError, "%s: unexpected layout", name);
    return nullptr;
  }
  g_base_dealloc[g_types++] = b->tp_dealloc;
  return type;
}

}  // namespace clpool::python
