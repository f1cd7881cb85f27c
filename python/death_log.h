// clpool._core.DeathLog: a weakref callback (its bound method note) that notes when an object
// died, without running Python code. clpool.record puts one on every buffer it hands out. A call
// appends (the weak reference, CLOCK_MONOTONIC in ns) to a C++ vector: no Python allocation that
// could start a garbage collection and no GIL release, which is what a callback running inside
// PyOpenCL 2022.3's dealloc must avoid (python/pooled_buffer_type.h). drain() hands the entries
// over.
#ifndef CLPOOL_PYTHON_DEATH_LOG_H_
#define CLPOOL_PYTHON_DEATH_LOG_H_

#include <pybind11/pybind11.h>

namespace clpool::python {
void bind_death_log(pybind11::module_& m);
}

#endif  // CLPOOL_PYTHON_DEATH_LOG_H_
