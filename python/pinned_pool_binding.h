// Binds host_pinned_pool (PyCUDA's PageLockedMemoryPool for OpenCL) into clpool._core.
#ifndef CLPOOL_PYTHON_PINNED_POOL_BINDING_H_
#define CLPOOL_PYTHON_PINNED_POOL_BINDING_H_

#include <pybind11/pybind11.h>

namespace clpool::python {
void bind_pinned_pool(pybind11::module_& m);
}

#endif  // CLPOOL_PYTHON_PINNED_POOL_BINDING_H_
