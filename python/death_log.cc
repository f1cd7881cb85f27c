#include "python/death_log.h"

#include <time.h>

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace clpool::python {
namespace {

struct death {
  PyObject* ref;  // a strong reference to the weak reference
  std::int64_t time_ns;
};

struct death_log_object {
  PyObject_HEAD std::vector<death>* deaths;
  std::mutex* mutex;  // drain() may run on another thread than a callback
};

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // time.monotonic_ns()'s clock
  return std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// note(ref), the callback: a METH_O method, so that CPython calls the bound method without making
// an argument tuple (a tuple is a tracked object, whose allocation may start a collection).
PyObject* death_log_note(PyObject* self, PyObject* ref) {
  auto* log = reinterpret_cast<death_log_object*>(self);
  try {
    std::lock_guard<std::mutex> guard(*log->mutex);
    log->deaths->push_back({Py_NewRef(ref), monotonic_ns()});
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  }
  Py_RETURN_NONE;
}

PyObject* death_log_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  if (PyTuple_GET_SIZE(args) != 0 || (kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0)) {
    PyErr_SetString(PyExc_TypeError, "DeathLog() takes no arguments");
    return nullptr;
  }
  auto* self = reinterpret_cast<death_log_object*>(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  self->deaths = new (std::nothrow) std::vector<death>();
  self->mutex = new (std::nothrow) std::mutex();
  if (self->deaths == nullptr || self->mutex == nullptr) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return reinterpret_cast<PyObject*>(self);
}

void death_log_dealloc(PyObject* self) {
  auto* log = reinterpret_cast<death_log_object*>(self);
  if (log->deaths != nullptr) {
    for (const death& d : *log->deaths) Py_DECREF(d.ref);
    delete log->deaths;
  }
  delete log->mutex;
  Py_TYPE(self)->tp_free(self);
}

// drain(): [(weak reference, time_ns), ...] in the order the objects died; the log is empty after.
PyObject* death_log_drain(PyObject* self, PyObject*) {
  auto* log = reinterpret_cast<death_log_object*>(self);
  std::vector<death> taken;
  {
    std::lock_guard<std::mutex> guard(*log->mutex);
    taken.swap(*log->deaths);
  }
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(taken.size()));
  if (list == nullptr) {
    for (const death& d : taken) Py_DECREF(d.ref);
    return nullptr;
  }
  for (std::size_t i = 0; i < taken.size(); ++i) {
    PyObject* time = PyLong_FromLongLong(taken[i].time_ns);
    PyObject* pair = time == nullptr ? nullptr : PyTuple_Pack(2, taken[i].ref, time);
    Py_XDECREF(time);
    Py_DECREF(taken[i].ref);
    if (pair == nullptr) {
      for (std::size_t j = i + 1; j < taken.size(); ++j) Py_DECREF(taken[j].ref);
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), pair);
  }
  return list;
}

Py_ssize_t death_log_len(PyObject* self) {
  auto* log = reinterpret_cast<death_log_object*>(self);
  std::lock_guard<std::mutex> guard(*log->mutex);
  return static_cast<Py_ssize_t>(log->deaths->size());
}

PyMethodDef g_methods[] = {
    {"note", death_log_note, METH_O,
     "note(ref): the weakref callback. Pass the bound method: weakref.ref(obj, log.note)."},
    {"drain", death_log_drain, METH_NOARGS,
     "drain() -> [(weakref, time_ns), ...]: the deaths noted so far, oldest first."},
    {nullptr, nullptr, 0, nullptr},
};

PyType_Slot g_slots[] = {
    {Py_tp_new, reinterpret_cast<void*>(death_log_new)},
    {Py_tp_dealloc, reinterpret_cast<void*>(death_log_dealloc)},
    {Py_tp_methods, g_methods},
    {Py_sq_length, reinterpret_cast<void*>(death_log_len)},
    {Py_tp_doc,
     const_cast<char*>("A weakref callback that notes (ref, time.monotonic_ns()) without running "
                       "Python code; drain() returns what it noted.")},
    {0, nullptr},
};

PyType_Spec g_spec = {"clpool._core.DeathLog", sizeof(death_log_object), 0, Py_TPFLAGS_DEFAULT,
                      g_slots};

}  // namespace

void bind_death_log(py::module_& m) {
  PyObject* type = PyType_FromSpec(&g_spec);
  if (type == nullptr) throw py::error_already_set();
  m.add_object("DeathLog", py::reinterpret_steal<py::object>(type));
}

}  // namespace clpool::python
