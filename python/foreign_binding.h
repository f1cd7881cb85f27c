// The one seam between clpool and the binding library another extension's classes were made with
// (PyOpenCL's pyopencl.Buffer and pyopencl.SVM). PyOpenCL 2022.x and 2023.x are built with
// pybind11, every release since 2024.2 with nanobind; clpool supports both, chosen here at run
// time from the class itself, never from a version number:
//
//   pybind11   the class is a pybind11 instance type of clpool's own pybind11 ABI (the same
//              internals clpool._core uses) with pybind11 2.10's instance layout: a C subclass,
//              objects reused across pool hits (python/pooled_buffer_type.h), and a dealloc that
//              untracks first (python/gc_safe_subclass.h).
//   nanobind   the class's metaclass is nanobind's and every nanobind ABI in the interpreter is
//              one whose instance layout clpool knows: a subclass made through nanobind's own
//              metaclass, objects reused across pool hits.
//   generic    anything else (an unknown nanobind ABI, another binding library): the same
//              subclass as for nanobind, but a new object per hit and none reused, and no dealloc
//              of clpool's in front of the binding library's, which needs nothing of the binding
//              library beyond what CPython checks itself (`__class__` assignment). Slower, and
//              as safe as the binding library itself.
//
// CLPOOL_PYTHON_BINDING=generic forces the generic path for every class classified here (the
// tests run both); any other value but empty is an error.
//
// Everything that depends on the binding library is one table of operations per kind
// (binding_ops, as mimalloc's prim.h is per platform): the users (pooled_buffer_type.cc,
// gc_safe_subclass.cc, clpool.record through clpool._core) classify a class, then call through
// its table and never switch on the kind. A new binding library, or a nanobind ABI of a new
// layout, is one table entry (foreign_binding_nanobind.cc's kNanobindAbis, or a file of its own
// like foreign_binding_pybind11.cc) plus its case in python/tests/binding_test.py. This seam
// includes none of its users' headers.
#ifndef CLPOOL_PYTHON_FOREIGN_BINDING_H_
#define CLPOOL_PYTHON_FOREIGN_BINDING_H_

#include <Python.h>

#include <cstdint>
#include <string>

namespace clpool::python {

enum class binding_kind : std::uint8_t { pybind11, nanobind, generic };

const char* to_string(binding_kind kind) noexcept;

// What a user wants of a subclass of a foreign class. A C subclass (pybind11) is made from `spec`
// (its slots, dealloc included); a subclass made through the base's own metaclass (nanobind,
// generic) gets `methods` and `dunders` as attributes, and `dealloc` (where objects are reused) or
// `finalize` (where they are not) as its slot. Without Py_TPFLAGS_BASETYPE in spec->flags the
// subclass cannot be subclassed further.
struct subclass_request {
  const PyType_Spec* spec = nullptr;  // spec->name is "module.QualName"
  const char* doc = nullptr;
  PyMethodDef* methods = nullptr;
  PyMethodDef* dunders = nullptr;
  destructor dealloc = nullptr;
  destructor finalize = nullptr;
};

// How clpool.record sees an object of the class die: a weak reference on the object, or one on a
// sentinel kept in the object's __dict__ (which the object's dealloc releases), or neither.
enum class death_signal : std::uint8_t { weak_reference, dict_entry, none };

const char* to_string(death_signal signal) noexcept;

// The operations of one binding kind. Every function needs the GIL.
struct binding_ops {
  binding_kind kind;
  // The table that serves `type` when it is this library's class (this one, or kGenericOps for a
  // layout it does not know), with `detail` set to what was found; nullptr when it is not.
  // classify_binding asks each library's table in turn (kGenericOps has none: it is the rest).
  const binding_ops* (*recognise)(PyTypeObject* type, std::string& detail);
  // Objects of a subclass may be taken back at their last reference and handed out again (the
  // subclass gets the request's `dealloc`); else a new object per use (it gets `finalize`).
  bool reuses_objects;
  // The binding library's dealloc leaves a dying object tracked by the garbage collector
  // (pybind11 2.10): gc_safe_subclass.cc then puts an untracking dealloc in front of it.
  bool dealloc_leaves_object_tracked;
  // A new reference to a subclass of `base` as `request` asks, or nullptr with an exception set.
  PyObject* (*make_subclass)(PyObject* base, const subclass_request& request);
  // True when the instance layout of `base` and its subclass `sub` is the one this binding's
  // operations read (beyond CPython's own rule for a type switch, which the caller checks).
  bool (*layout_fits)(PyTypeObject* base, PyTypeObject* sub);
  // True when an object fresh from the base's constructor has the instance header this binding's
  // is_clean reads (a constructed value, nothing attached); false stops reuse for good.
  bool (*fresh_instance_is_plain)(PyObject* obj);
  // True when nothing of the last user's is attached to `self`, so that handing it out again is
  // indistinguishable from handing out a fresh object. Precondition: refcount 0, untracked.
  bool (*is_clean)(PyObject* self);
  // Makes `obj` (refcount 1, of the base) an instance of `type` (a subclass of the same layout):
  // 0, or -1 with an exception set and `obj` unchanged.
  int (*adopt)(PyObject* obj, PyTypeObject* type);
  // Frees `self` (untracked, refcount 0, of a subclass) for good through `base_dealloc`, the
  // base's dealloc, which runs the C++ destructor.
  void (*destroy)(PyObject* self, PyTypeObject* base, destructor base_dealloc);
  // How clpool.record sees an object of `type` die.
  death_signal (*death_signal_of)(PyTypeObject* type);
};

struct binding_info {
  const binding_ops* ops = nullptr;  // never nullptr after classify_binding succeeds
  std::string
      detail;  // what was found: "nanobind ABI v21_gcc_libstdcpp_cxxabi1018", or why generic
  binding_kind kind() const noexcept;
};

// Classifies `type` (must be a type object), honouring CLPOOL_PYTHON_BINDING. Returns false with a
// Python exception set only for a bad CLPOOL_PYTHON_BINDING value.
bool classify_binding(PyTypeObject* type, binding_info& out);

// The tables, for foreign_binding*.cc only (the users get theirs from classify_binding).
extern const binding_ops kPybind11Ops;
extern const binding_ops kNanobindOps;
extern const binding_ops kGenericOps;

}  // namespace clpool::python

#endif  // CLPOOL_PYTHON_FOREIGN_BINDING_H_
