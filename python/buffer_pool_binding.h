// Binds the OpenCL buffer pools (immediate and deferred allocation) into clpool._core.
#ifndef CLPOOL_PYTHON_BUFFER_POOL_BINDING_H_
#define CLPOOL_PYTHON_BUFFER_POOL_BINDING_H_

#include <pybind11/pybind11.h>

namespace clpool::python {
void bind_buffer_pools(pybind11::module_& m);
}

#endif  // CLPOOL_PYTHON_BUFFER_POOL_BINDING_H_
