// The buffer protocol (memoryview, numpy) of a pybind11 class whose memory can go away: a block
// that was released raises ValueError. pybind11 2.10's own getbuffer calls def_buffer's function
// from a C callback without catching, so the exception it threw for a released block ended the
// process (std::terminate). The class is made with py::buffer_protocol() and no def_buffer;
// install_checked_buffer() replaces its getbuffer slot with this one.
#ifndef CLPOOL_PYTHON_CHECKED_BUFFER_H_
#define CLPOOL_PYTHON_CHECKED_BUFFER_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <limits>

#include "python/raw_method.h"

namespace clpool::python {

// `Span(self, &data, &size)` returns nullptr and the bytes, or why there are none (ValueError).
template <class W>
using buffer_span = const char* (*)(W& self, void** data, std::uint64_t* size);

template <class W, buffer_span<W> Span>
int checked_getbuffer(PyObject* self, Py_buffer* view, int flags) noexcept {
  view->obj = nullptr;
  W* w = raw_self<W>(self);  // TypeError when its __init__ did not run
  if (w == nullptr) return -1;
  void* data = nullptr;
  std::uint64_t size = 0;
  if (const char* why = Span(*w, &data, &size)) {
    PyErr_SetString(PyExc_ValueError, why);
    return -1;
  }
  if (size > static_cast<std::uint64_t>(std::numeric_limits<Py_ssize_t>::max())) {
    PyErr_SetString(PyExc_OverflowError, "the block is larger than a buffer can be");
    return -1;
  }
  // One dimension of unsigned bytes, writable, as def_buffer's buffer_info described it.
  return PyBuffer_FillInfo(view, self, data, static_cast<Py_ssize_t>(size), 0, flags);
}

// Precondition: `cls` is the pybind11 class of W, made with py::buffer_protocol(), and has no
// subclass yet (a subclass copies the slot when it is made).
template <class W, buffer_span<W> Span>
void install_checked_buffer(pybind11::handle cls) {
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  type->tp_as_buffer->bf_getbuffer = checked_getbuffer<W, Span>;
  type->tp_as_buffer->bf_releasebuffer = nullptr;  // PyBuffer_FillInfo's view owns nothing more
  PyType_Modified(type);
}

}  // namespace clpool::python

#endif  // CLPOOL_PYTHON_CHECKED_BUFFER_H_
