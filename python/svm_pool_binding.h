// Binds svm_pool (PyOpenCL's SVMPool / PooledSVM) into clpool._core.
#ifndef CLPOOL_PYTHON_SVM_POOL_BINDING_H_
#define CLPOOL_PYTHON_SVM_POOL_BINDING_H_

#include <pybind11/pybind11.h>

namespace clpool::python {
void bind_svm_pool(pybind11::module_& m);
}

#endif  // CLPOOL_PYTHON_SVM_POOL_BINDING_H_
