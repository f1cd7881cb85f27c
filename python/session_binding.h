// clpool._core's part of the pytest plugin: the followed session and the engine's rules
// (python/session_binding.cc).
#ifndef CLPOOL_PYTHON_SESSION_BINDING_H_
#define CLPOOL_PYTHON_SESSION_BINDING_H_

#include <pybind11/pybind11.h>

namespace clpool::python {

void bind_session(pybind11::module_& m);

}  // namespace clpool::python

#endif  // CLPOOL_PYTHON_SESSION_BINDING_H_
