#include "python/gc_safe_subclass.h"

#include "python/foreign_binding.h"

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

PyObject* make_gc_safe_subclass(PyObject* base, const char* name, const char* doc) {
  if (!PyType_Check(base)) {
    PyErr_Format(PyExc_TypeError, "%s: the base is not a type", name);
    return nullptr;
  }
  binding_info binding;
  if (!classify_binding(reinterpret_cast<PyTypeObject*>(base), binding)) return nullptr;
  if (!binding.ops->dealloc_leaves_object_tracked) {
    // No defect to guard against (nanobind's dealloc untracks first), or no dealloc of this
    // file's kind that could stand in for an unknown binding library's (generic). The base serves
    // as it is.
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
  subclass_request request;
  request.spec = &spec;
  request.doc = doc;
  request.dealloc = kDeallocs[g_types];
  PyObject* type = binding.ops->make_subclass(base, request);
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
