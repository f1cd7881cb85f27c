// Exception translation for the clpool._core extension: C++ pool errors become Python exceptions.
//   clpool::out_of_memory        -> clpool.OutOfMemoryError (a pyopencl.MemoryError, with figures)
//   argument_error, invalid_use  -> ValueError
//   opencl::cl_error             -> clpool._core.CLError (a RuntimeError with .status)
//   unsupported_feature          -> RuntimeError
#ifndef CLPOOL_PYTHON_ERRORS_BINDING_H_
#define CLPOOL_PYTHON_ERRORS_BINDING_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

namespace clpool::python {

void bind_errors(pybind11::module_& m);

// Sets the Python error for the C++ exception being handled (call it in a catch block), as the
// translator bind_errors() registers does, for functions that bypass pybind11's dispatch (the
// pools' raw allocate methods). Anything unknown becomes RuntimeError. `context` (e.g.
// "MemoryPool.allocate(4096 bytes)") prefixes the message of OpenCL and argument errors.
void set_python_error(const std::string& context = {}) noexcept;

// Sets the error a second release of a pooled object raises, clpool._errors.released_error's
// (pyopencl.LogicError, "ROUTINE failed: INVALID_VALUE - MESSAGE"), and returns nullptr. For
// PooledBuffer (C API) and the page-locked block; PooledSVM raises it in Python.
PyObject* set_released_error(const char* routine, const char* message) noexcept;

// A size argument as a uint64: accepts anything with __index__ (numpy integers too); raises
// TypeError for other types (bool and numpy.bool_ included) and ValueError for negative values
// and values above 64 bits. clpool._core.to_size(size, who) is the same, for Python code.
std::uint64_t to_size(const pybind11::handle& size, const char* who);

}  // namespace clpool::python

#endif  // CLPOOL_PYTHON_ERRORS_BINDING_H_
