// The seam's classification (CLPOOL_PYTHON_BINDING, then each library's table in turn), the
// operations that need nothing but CPython, and the generic table made of them. The libraries'
// own tables are in foreign_binding_pybind11.cc and foreign_binding_nanobind.cc.
#include "python/foreign_binding.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "python/foreign_binding_internal.h"

namespace clpool::python {
namespace binding_parts {

bool dict_is_empty(PyObject* self) {
  PyObject** dict = _PyObject_GetDictPtr(self);
  if (dict == nullptr) {  // could not even materialise the dict: keep out of the way
    PyErr_Clear();
    return false;
  }
  return *dict == nullptr || PyDict_GET_SIZE(*dict) == 0;
}

bool has_weak_references(PyObject* self) {
  const Py_ssize_t offset = Py_TYPE(self)->tp_weaklistoffset;
  return offset > 0 && *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(self) + offset);
}

namespace {

int add_methods(PyObject* type, PyMethodDef* defs) {
  for (PyMethodDef* def = defs; def != nullptr && def->ml_name != nullptr; ++def) {
    PyObject* descr = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(type), def);
    if (descr == nullptr) return -1;
    const int rc = PyObject_SetAttrString(type, def->ml_name, descr);
    Py_DECREF(descr);
    if (rc != 0) return -1;
  }
  return 0;
}

// The generic subclass's `__class__`: read as any object's, never assigned. Its objects are tied
// to their blocks by address and give them back from the type's finalizer, which a switched object
// no longer runs: the block would stay active and the table entry stale. A data descriptor in the
// subclass's own dict comes before object's `__class__` on every route (setattr,
// object.__setattr__), and leaves every other attribute as the base sets it.
PyObject* get_class(PyObject* self, void*) {
  return Py_NewRef(reinterpret_cast<PyObject*>(Py_TYPE(self)));
}

int refuse_class_switch(PyObject* self, PyObject*, void*) {
  PyErr_Format(PyExc_TypeError, "%s: __class__ cannot be changed: its pool tracks this object",
               Py_TYPE(self)->tp_name);
  return -1;
}

PyGetSetDef g_class_getset = {"__class__", get_class, refuse_class_switch,
                              "the object's type (fixed: its pool tracks the object)", nullptr};

int fix_class(PyTypeObject* t) {
  PyObject* descr = PyDescr_NewGetSet(t, &g_class_getset);
  if (descr == nullptr) return -1;
  // Into the dict itself: setattr on the type would reach the metaclass's `__class__`.
  const int rc = PyDict_SetItemString(t->tp_dict, "__class__", descr);
  Py_DECREF(descr);
  return rc;
}

}  // namespace

PyObject* make_metaclass_subclass(PyObject* base, const subclass_request& request,
                                  bool with_finalize) {
  const char* name = request.spec->name;
  const char* qualname = std::strrchr(name, '.') + 1;
  const std::string module(name, qualname - 1 - name);
  PyObject* slots = PyTuple_New(0);
  PyObject* ns = slots == nullptr ? nullptr
                                  : Py_BuildValue("{s:O,s:s,s:s,s:s}", "__slots__", slots,
                                                  "__module__", module.c_str(), "__qualname__",
                                                  qualname, "__doc__", request.doc);
  Py_XDECREF(slots);
  if (ns == nullptr) return nullptr;
  PyObject* sub = PyObject_CallFunction(reinterpret_cast<PyObject*>(Py_TYPE(base)), "s(O)O",
                                        qualname, base, ns);
  Py_DECREF(ns);
  if (sub == nullptr) return nullptr;
  if (add_methods(sub, request.methods) != 0 || add_methods(sub, request.dunders) != 0) {
    Py_DECREF(sub);
    return nullptr;
  }
  auto* t = reinterpret_cast<PyTypeObject*>(sub);
  if (with_finalize) {
    t->tp_finalize = request.finalize;
    if (fix_class(t) != 0) {
      Py_DECREF(sub);
      return nullptr;
    }
  } else {
    t->tp_dealloc = request.dealloc;
  }
  if ((request.spec->flags & Py_TPFLAGS_BASETYPE) == 0) t->tp_flags &= ~Py_TPFLAGS_BASETYPE;
  PyType_Modified(t);
  return sub;
}

PyObject* make_spec_subclass(PyObject* base, const subclass_request& request) {
  PyObject* bases = PyTuple_Pack(1, base);
  if (bases == nullptr) return nullptr;
  PyObject* sub = PyType_FromSpecWithBases(const_cast<PyType_Spec*>(request.spec), bases);
  Py_DECREF(bases);
  return sub;
}

int set_type(PyObject* obj, PyTypeObject* type) {
  Py_INCREF(type);  // instances of heap types own a reference to their type
  PyTypeObject* old = Py_TYPE(obj);
  Py_SET_TYPE(obj, type);
  Py_DECREF(old);
  return 0;
}

int assign_class(PyObject* obj, PyTypeObject* type) {
  return PyObject_SetAttrString(obj, "__class__", reinterpret_cast<PyObject*>(type));
}

void destroy_as_base(PyObject* self, PyTypeObject* base, destructor base_dealloc) {
  if (Py_TYPE(self) != base) {
    PyTypeObject* old = Py_TYPE(self);
    Py_INCREF(base);
    Py_SET_TYPE(self, base);
    Py_DECREF(old);
  }
  base_dealloc(self);
}

death_signal death_signal_by_slots(PyTypeObject* type) {
  if (type->tp_weaklistoffset > 0) return death_signal::weak_reference;
  if (type->tp_dictoffset != 0 || (type->tp_flags & Py_TPFLAGS_MANAGED_DICT) != 0) {
    return death_signal::dict_entry;
  }
  return death_signal::none;
}

bool always(PyObject*) { return true; }
bool never(PyObject*) { return false; }
bool any_layout(PyTypeObject*, PyTypeObject*) { return true; }

}  // namespace binding_parts

namespace {

PyObject* make_generic_subclass(PyObject* base, const subclass_request& request) {
  return binding_parts::make_metaclass_subclass(base, request, /*with_finalize=*/true);
}

}  // namespace

// generic: nothing of the binding library is relied on. The subclass is made by the base's own
// metaclass and gives blocks back from a finalizer (run once by CPython's own dealloc, before the
// binding library's), objects are never reused (it cannot see what the binding library attached),
// a fresh object becomes a subclass instance through `__class__` assignment, which CPython checks,
// and no dealloc of clpool's stands in front of one it does not know.
const binding_ops kGenericOps = {
    .kind = binding_kind::generic,
    .recognise = nullptr,
    .reuses_objects = false,
    .dealloc_leaves_object_tracked = false,
    .make_subclass = make_generic_subclass,
    .layout_fits = binding_parts::any_layout,
    .fresh_instance_is_plain = binding_parts::always,
    .is_clean = binding_parts::never,
    .adopt = binding_parts::assign_class,
    .destroy = binding_parts::destroy_as_base,
    .death_signal_of = binding_parts::death_signal_by_slots,
};

namespace {

// The libraries clpool knows, asked in turn; the first that recognises a class serves it.
const binding_ops* const kLibraries[] = {&kPybind11Ops, &kNanobindOps};

}  // namespace

const char* to_string(binding_kind kind) noexcept {
  switch (kind) {
    case binding_kind::pybind11:
      return "pybind11";
    case binding_kind::nanobind:
      return "nanobind";
    case binding_kind::generic:
      return "generic";
  }
  return "generic";
}

const char* to_string(death_signal signal) noexcept {
  switch (signal) {
    case death_signal::weak_reference:
      return "weakref";
    case death_signal::dict_entry:
      return "attribute";
    case death_signal::none:
      return "none";
  }
  return "none";
}

binding_kind binding_info::kind() const noexcept {
  return ops == nullptr ? binding_kind::generic : ops->kind;
}

bool classify_binding(PyTypeObject* type, binding_info& out) {
  const char* forced = std::getenv("CLPOOL_PYTHON_BINDING");
  if (forced != nullptr && *forced != '\0') {
    if (std::strcmp(forced, "generic") != 0) {
      PyErr_Format(PyExc_ValueError,
                   "CLPOOL_PYTHON_BINDING=%s: the only value is 'generic' (forces the path that "
                   "needs nothing of PyOpenCL's binding library); unset it for the default",
                   forced);
      return false;
    }
    out = {&kGenericOps, "forced by CLPOOL_PYTHON_BINDING=generic"};
    return true;
  }
  for (const binding_ops* library : kLibraries) {
    std::string detail;
    if (const binding_ops* ops = library->recognise(type, detail)) {
      out = {ops, std::move(detail)};
      return true;
    }
  }
  out = {&kGenericOps, std::string("neither pybind11 of clpool's ABI nor nanobind (metaclass ") +
                           Py_TYPE(type)->tp_name + ")"};
  return true;
}

}  // namespace clpool::python
