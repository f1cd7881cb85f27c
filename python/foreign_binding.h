// Which binding library made another extension's class (PyOpenCL's pyopencl.Buffer), and what
// clpool's fast paths may rely on because of it. PyOpenCL 2022.x and 2023.x are built with
// pybind11, every release since 2024.2 with nanobind; clpool supports both, chosen here at run
// time from the class itself, never from a version number or a user setting:
//
//   pybind11   the class is a pybind11 instance type of clpool's own pybind11 ABI (the same
//              internals clpool._core uses) with pybind11 2.10's instance layout: a C subclass,
//              objects reused across pool hits (python/pooled_buffer_type.h).
//   nanobind   the class's metaclass is nanobind's and every nanobind ABI in the interpreter is
//              one whose instance layout clpool knows (kNanobindAbis): a subclass made through
//              nanobind's own metaclass, objects reused across pool hits.
//   generic    anything else (an unknown nanobind ABI, another binding library): the same
//              subclass as for nanobind, but a new object per hit and none reused, which needs
//              nothing of the binding library beyond what CPython checks itself (`__class__`
//              assignment). Slower, never unsafe.
//
// CLPOOL_PYTHON_BINDING=generic forces the generic path (the tests run both); any other value
// but empty is an error.
#ifndef CLPOOL_PYTHON_FOREIGN_BINDING_H_
#define CLPOOL_PYTHON_FOREIGN_BINDING_H_

#include <Python.h>

#include <cstdint>
#include <string>

namespace clpool::python {

enum class binding_kind : std::uint8_t { pybind11, nanobind, generic };

const char* to_string(binding_kind kind) noexcept;

struct binding_info {
  binding_kind kind = binding_kind::generic;
  std::string
      detail;  // what was found: "nanobind ABI v21_gcc_libstdcpp_cxxabi1018", or why generic
};

// Classifies `type` (must be a type object). Returns false with a Python exception set only for a
// bad CLPOOL_PYTHON_BINDING value.
bool classify_binding(PyTypeObject* type, binding_info& out);

// nanobind instances (kind nanobind only): true when the object's C++ value is constructed and
// usable and nothing else is attached to it through nanobind (no keep-alive patients), as for a
// fresh Buffer.from_int_ptr() result.
bool nanobind_instance_is_plain(PyObject* self) noexcept;

}  // namespace clpool::python

#endif  // CLPOOL_PYTHON_FOREIGN_BINDING_H_
