// What the seam's files (foreign_binding.cc and one file per binding library) share: the
// operations that need nothing but CPython, from which the tables are made. Not for the seam's
// users, which go through python/foreign_binding.h.
#ifndef CLPOOL_PYTHON_FOREIGN_BINDING_INTERNAL_H_
#define CLPOOL_PYTHON_FOREIGN_BINDING_INTERNAL_H_

#include <Python.h>

#include "python/foreign_binding.h"

namespace clpool::python::binding_parts {

// True when `self` has no __dict__ or an empty one (false when it could not be read).
bool dict_is_empty(PyObject* self);

// True when a weak reference to `self` exists (the type's own weak-reference list).
bool has_weak_references(PyObject* self);

// A subclass made by the base's own metaclass, as `class Name(base): __slots__ = ()` would make
// it (so the binding library registers it as it registers any Python subclass), then given the
// request's methods and its `finalize` (with_finalize) or `dealloc` as its slot.
PyObject* make_metaclass_subclass(PyObject* base, const subclass_request& request,
                                  bool with_finalize);

// A C subclass from the request's spec (PyType_FromSpecWithBases).
PyObject* make_spec_subclass(PyObject* base, const subclass_request& request);

// Switches `obj`'s type to `type` directly (the caller checked the layout once); 0.
int set_type(PyObject* obj, PyTypeObject* type);

// Switches `obj`'s type through `__class__` assignment, which CPython itself checks.
int assign_class(PyObject* obj, PyTypeObject* type);

// Makes `self` a `base` again (the subclass adds no slots: same layout), then `base_dealloc`:
// CPython's subtype_dealloc would otherwise find the subclass's dealloc again as the nearest one.
void destroy_as_base(PyObject* self, PyTypeObject* base, destructor base_dealloc);

// What CPython's own contract for a type guarantees: a type that takes weak references clears
// them in its dealloc, and a type with a __dict__ releases it there.
death_signal death_signal_by_slots(PyTypeObject* type);

bool always(PyObject*);
bool never(PyObject*);
bool any_layout(PyTypeObject*, PyTypeObject*);

}  // namespace clpool::python::binding_parts

#endif  // CLPOOL_PYTHON_FOREIGN_BINDING_INTERNAL_H_
