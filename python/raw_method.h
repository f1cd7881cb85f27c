// Methods of pybind11 classes written directly against CPython's calling convention, for the
// pools' hot paths: pybind11's dispatcher (argument conversion, overload resolution) costs more
// than a whole pool hit, so allocate() is a plain METH_O function bound as a method descriptor.
#ifndef CLPOOL_PYTHON_RAW_METHOD_H_
#define CLPOOL_PYTHON_RAW_METHOD_H_

#include <pybind11/pybind11.h>

#include <typeinfo>

#include "python/initialised_caster.h"

namespace clpool::python {

// Adds `def` (static storage: CPython keeps the pointer) to the class `cls` as a method. The
// descriptor checks that `self` is an instance of `cls` before calling.
inline void add_raw_method(pybind11::handle cls, PyMethodDef* def, const char* name = nullptr) {
  PyObject* descr = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), def);
  if (descr == nullptr) throw pybind11::error_already_set();
  pybind11::setattr(cls, name != nullptr ? name : def->ml_name,
                    pybind11::reinterpret_steal<pybind11::object>(descr));
}

// The C++ object of `self`, an instance of a pybind11 class W (or of a Python subclass of it),
// or nullptr with TypeError set when its __init__ has not run (python/initialised_caster.h).
template <class W>
W* raw_self(PyObject* self) {
  auto* inst = reinterpret_cast<pybind11::detail::instance*>(self);
  if (inst->simple_layout && inst->simple_holder_constructed) {
    return static_cast<W*>(inst->simple_value_holder[0]);
  }
  // Not simple (Python-side multiple inheritance), or not initialised: pybind11's own lookup,
  // after the check its lazy allocation would skip.
  if (!is_initialised(self, typeid(W))) {
    PyErr_Format(PyExc_TypeError, "%s: not initialised (its __init__ did not run, or raised)",
                 Py_TYPE(self)->tp_name);
    return nullptr;
  }
  try {
    return pybind11::cast<W*>(pybind11::handle(self));
  } catch (const pybind11::cast_error&) {
    PyErr_Format(PyExc_TypeError, "%s: not initialised (its __init__ did not run, or raised)",
                 Py_TYPE(self)->tp_name);
    return nullptr;
  }
}

}  // namespace clpool::python

#endif  // CLPOOL_PYTHON_RAW_METHOD_H_
