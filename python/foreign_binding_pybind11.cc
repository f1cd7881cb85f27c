// The seam's table for pybind11 (PyOpenCL 2022.x and 2023.x): a class of clpool's own pybind11
// ABI, whose instances clpool reads through pybind11 2.10's instance layout (the one clpool._core
// is built with, so the same headers describe both).
#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>

#include "python/foreign_binding.h"
#include "python/foreign_binding_internal.h"

namespace clpool::python {
namespace {

pybind11::detail::instance* as_instance(PyObject* self) {
  return reinterpret_cast<pybind11::detail::instance*>(self);
}

// True if `type` is a pybind11 instance type of the shared internals: its dealloc is pybind11's
// instance dealloc, so that the layout reads below hold.
bool is_pybind11_instance_type(PyTypeObject* type) {
  auto* instance_base =
      reinterpret_cast<PyTypeObject*>(pybind11::detail::get_internals().instance_base);
  return PyType_IsSubtype(type, instance_base) && type->tp_dealloc == instance_base->tp_dealloc &&
         (type->tp_flags & Py_TPFLAGS_HEAPTYPE) != 0;
}

const binding_ops* recognise(PyTypeObject* type, std::string& detail) {
  if (!is_pybind11_instance_type(type)) return nullptr;
  detail = "pybind11 (clpool._core's ABI)";
  return &kPybind11Ops;
}

// A C type from the spec, with the requester's dealloc: pybind11's dealloc serves its subclasses
// (it finds the C++ type through the MRO), so the subclass needs no metaclass of pybind11's.
PyObject* make_subclass(PyObject* base, const subclass_request& request) {
  return binding_parts::make_spec_subclass(base, request);
}

// What is_clean relies on: a pybind11 instance (weak reference list where pybind11 puts it, GC and
// a managed dict or none), freed by pybind11's own tp_free.
bool layout_fits(PyTypeObject* base, PyTypeObject* sub) {
  return base->tp_weaklistoffset ==
             static_cast<Py_ssize_t>(offsetof(pybind11::detail::instance, weakrefs)) &&
         base->tp_free == sub->tp_free;
}

// No weak references, no keep-alive patients (py::keep_alive), no attributes.
bool is_clean(PyObject* self) {
  pybind11::detail::instance* inst = as_instance(self);
  if (inst->weakrefs != nullptr || inst->has_patients) return false;
  return binding_parts::dict_is_empty(self);
}

// pybind11's dealloc serves its subclasses: no type switch first.
void destroy(PyObject* self, PyTypeObject*, destructor base_dealloc) { base_dealloc(self); }

}  // namespace

// pybind11 2.10 leaves a dying object tracked by the garbage collector (fixed in pybind11 2.11,
// PR #4461): gc_safe_subclass.cc puts an untracking dealloc in front of its own.
const binding_ops kPybind11Ops = {
    .kind = binding_kind::pybind11,
    .recognise = recognise,
    .reuses_objects = true,
    .dealloc_leaves_object_tracked = true,
    .make_subclass = make_subclass,
    .layout_fits = layout_fits,
    .fresh_instance_is_plain = binding_parts::always,
    .is_clean = is_clean,
    .adopt = binding_parts::set_type,
    .destroy = destroy,
    // Every pybind11 instance takes weak references (pybind11's instance header has the list),
    // and its dealloc clears them and the dict.
    .death_signal_of = binding_parts::death_signal_by_slots,
};

}  // namespace clpool::python
