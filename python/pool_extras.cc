#include "python/pool_extras.h"

#include <cmath>
#include <string>

namespace py = pybind11;

namespace clpool::python {

py::dict statistics_dict(const pool_counters& c, const pool_statistics& s) {
  py::dict d;
  d["held_blocks"] = c.held_blocks;
  d["active_blocks"] = c.active_blocks;
  d["held_bytes"] = c.held_bytes;
  d["active_bytes"] = c.active_bytes;
  d["active_rounded_bytes"] = c.active_rounded_bytes;
  d["managed_bytes"] = c.managed_bytes;
  d["limit_bytes"] = c.limit_bytes == unlimited ? py::object(py::none()) : py::int_(c.limit_bytes);
  d["peak_active_bytes"] = s.peak_active_bytes;
  d["peak_managed_bytes"] = s.peak_managed_bytes;
  d["hits"] = s.hits;
  d["misses"] = s.misses;
  d["allocator_allocations"] = s.allocator_allocations;
  d["allocator_failures"] = s.allocator_failures;
  d["allocator_frees"] = s.allocator_frees;
  d["oom_retries"] = s.oom_retries;
  d["reclaim_calls"] = s.reclaim_calls;
  d["ooms_raised"] = s.ooms_raised;
  d["blocks_trimmed"] = s.blocks_trimmed;
  d["bytes_trimmed"] = s.bytes_trimmed;
  return d;
}

double ratio_from(const py::object& value, const char* who) {
  if (value.is_none()) return -1.0;
  if (PyBool_Check(value.ptr()) || !(PyFloat_Check(value.ptr()) || PyIndex_Check(value.ptr()))) {
    throw py::type_error(std::string(who) + ": ratio must be a number or None");
  }
  const double ratio = value.cast<double>();
  if (!(ratio >= 0.0) || std::isinf(ratio)) {
    throw py::value_error(std::string(who) +
                          ": ratio must be a finite number >= 0 (None turns "
                          "it off), got " +
                          std::string(py::str(value)));
  }
  return ratio;
}

std::string fspath(const py::object& path, const char* who) {
  PyObject* p = PyOS_FSPath(path.ptr());
  if (p == nullptr) {
    PyErr_Clear();
    throw py::type_error(std::string(who) + ": path must be a str, bytes or os.PathLike, not " +
                         std::string(py::str(path.get_type().attr("__name__"))));
  }
  py::object fs = py::reinterpret_steal<py::object>(p);
  std::string s;
  if (PyBytes_Check(fs.ptr())) {
    s = std::string(PyBytes_AS_STRING(fs.ptr()), PyBytes_GET_SIZE(fs.ptr()));
  } else {
    py::object encoded = py::reinterpret_steal<py::object>(PyUnicode_EncodeFSDefault(fs.ptr()));
    if (!encoded) throw py::error_already_set();
    s = std::string(PyBytes_AS_STRING(encoded.ptr()), PyBytes_GET_SIZE(encoded.ptr()));
  }
  if (s.empty()) throw py::value_error(std::string(who) + ": path is empty");
  if (s.find('\0') != std::string::npos) {
    throw py::value_error(std::string(who) + ": path contains a NUL byte");
  }
  return s;
}

std::shared_ptr<python_refs> make_python_refs() {
  return std::shared_ptr<python_refs>(new python_refs(), [](python_refs* r) noexcept {
    if (!Py_IsInitialized()) return;  // finalized: its objects are gone with the interpreter
    py::gil_scoped_acquire gil;
    delete r;
  });
}

reclaim_callback reclaim_callback_of(std::shared_ptr<python_refs> refs) {
  return [refs = std::move(refs)](std::uint64_t bytes) {
    py::gil_scoped_acquire gil;
    py::object f = refs->strong;
    if (!f) f = py::reinterpret_borrow<py::object>(PyWeakref_GetObject(refs->weak.ptr()));
    if (f.is_none()) return;  // collected with its pool
    try {
      f(bytes);
    } catch (py::error_already_set& e) {
      e.discard_as_unraisable("clpool: a pool's reclaim callback");
    }
  };
}

void collect_garbage() noexcept {
  if (!Py_IsInitialized()) return;
  py::gil_scoped_acquire gil;
  try {
    py::module_::import("gc").attr("collect")();
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("clpool: gc.collect() in the pool's reclaim callback");
  }
}

}  // namespace clpool::python
