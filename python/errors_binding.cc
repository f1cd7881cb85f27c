#include "python/errors_binding.h"

#include <cstring>
#include <string>

#include "pool/errors.h"
#include "pool/opencl/cl_error.h"

namespace py = pybind11;

namespace clpool::python {
namespace {

py::object limit_or_none(std::uint64_t limit) {
  return limit == unlimited ? py::object(py::none()) : py::object(py::int_(limit));
}

// Raises clpool.OutOfMemoryError, built by clpool/_errors.py (which imports pyopencl lazily).
void raise_out_of_memory(const out_of_memory& e) {
  const oom_report& r = e.report();
  py::dict figures;
  figures["requested_bytes"] = r.requested_bytes;
  figures["rounded_bytes"] = r.rounded_bytes;
  figures["active_bytes"] = r.active_bytes;
  figures["active_rounded_bytes"] = r.active_rounded_bytes;
  figures["held_bytes"] = r.held_bytes;
  figures["managed_bytes"] = r.managed_bytes;
  figures["limit_bytes"] = limit_or_none(r.limit_bytes);
  figures["cause"] = r.cause == oom_cause::limit ? "limit" : "allocator";
  figures["allocator_status"] = r.allocator_status;
  figures["allocator_message"] = r.allocator_message;
  py::object exc =
      py::module_::import("clpool._errors").attr("make_out_of_memory")(e.what(), figures);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
}

}  // namespace

namespace {
// numpy.bool_ (numpy.bool in numpy 2) has __index__ (deprecated), but is no more a size than
// Python's bool.
bool is_numpy_bool(PyObject* obj) {
  const char* name = Py_TYPE(obj)->tp_name;
  return std::strcmp(name, "numpy.bool_") == 0 || std::strcmp(name, "numpy.bool") == 0;
}
}  // namespace

std::uint64_t to_size(const py::handle& size, const char* who) {
  if (PyBool_Check(size.ptr()) || is_numpy_bool(size.ptr()) || !PyIndex_Check(size.ptr())) {
    throw py::type_error(std::string(who) + ": size must be an integer, not " +
                         std::string(py::str(size.get_type().attr("__name__"))));
  }
  py::int_ value = py::reinterpret_steal<py::int_>(PyNumber_Index(size.ptr()));
  if (!value) throw py::error_already_set();
  if (value < py::int_(0)) {
    throw py::value_error(std::string(who) + ": size must not be negative, got " +
                          std::string(py::str(value)));
  }
  const unsigned long long v = PyLong_AsUnsignedLongLong(value.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw py::value_error(std::string(who) + ": size " + std::string(py::str(value)) +
                          " does not fit in 64 bits");
  }
  return v;
}

PyObject* set_released_error(const char* routine, const char* message) noexcept {
  PyObject* errors = PyImport_ImportModule("clpool._errors");
  PyObject* error = errors == nullptr
                        ? nullptr
                        : PyObject_CallMethod(errors, "released_error", "ss", routine, message);
  Py_XDECREF(errors);
  if (error != nullptr) {  // else the import's or the call's own error stays set
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error)), error);
    Py_DECREF(error);
  }
  return nullptr;
}

void set_python_error(const std::string& context) noexcept {
  const auto with_context = [&](const char* what) {
    return context.empty() ? std::string(what) : context + ": " + what;
  };
  try {
    throw;
  } catch (const out_of_memory& e) {
    try {
      raise_out_of_memory(e);
    } catch (py::error_already_set& err) {
      err.restore();
    } catch (...) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    }
  } catch (const argument_error& e) {  // invalid_use too
    PyErr_SetString(PyExc_ValueError, with_context(e.what()).c_str());
  } catch (const opencl::cl_error& e) {
    try {
      // A clpool.CLError that is PyOpenCL's class for the status too (clpool._errors.cl_error).
      py::object exc =
          py::module_::import("clpool._errors")
              .attr("cl_error")(with_context(e.what()), static_cast<int>(e.status()), e.call());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    } catch (py::error_already_set& err) {
      err.restore();
    } catch (...) {
      PyErr_SetString(PyExc_RuntimeError, with_context(e.what()).c_str());
    }
  } catch (const opencl::unsupported_feature& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "clpool: unknown C++ exception");
  }
}

void bind_errors(py::module_& m) {
  py::exception<opencl::cl_error>(m, "CLError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const out_of_memory&) {
      set_python_error();
    } catch (const argument_error&) {
      set_python_error();
    } catch (const opencl::cl_error&) {
      set_python_error();
    } catch (const opencl::unsupported_feature&) {
      set_python_error();
    }
  });
  // The one size rule, for the Python side's own size arguments (clpool/_handles.py byte_count).
  m.def(
      "to_size",
      [](const py::handle& size, const std::string& who) { return to_size(size, who.c_str()); },
      py::arg("size"), py::arg("who"));
}

}  // namespace clpool::python
