// clpool._core: the C++ pools for Python. The user-facing API is the pure-Python package around
// it (clpool/__init__.py, clpool/pyopencl.py).
#include <pybind11/pybind11.h>

#include "python/buffer_pool_binding.h"
#include "python/death_log.h"
#include "python/errors_binding.h"
#include "python/initialised_caster.h"
#include "python/pinned_pool_binding.h"
#include "python/record_file.h"
#include "python/replay_binding.h"
#include "python/session_binding.h"
#include "python/svm_pool_binding.h"
#include "python/trace_recording.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "clpool's memory pools (C++), wrapped by the clpool package";
  clpool::python::bind_errors(m);
  clpool::python::bind_buffer_pools(m);
  clpool::python::bind_pinned_pool(m);
  clpool::python::bind_svm_pool(m);
  clpool::python::bind_death_log(m);
  clpool::python::bind_record_file(m);
  clpool::python::bind_replay(m);
  clpool::python::bind_session(m);
  m.def("initialised", &clpool::python::all_initialised, pybind11::arg("obj"),
        "Whether obj's C++ part is constructed (a pool's __init__ has run).");
  m.def("stop_all_traces", &clpool::python::stop_all_traces,
        "Finishes every trace a pool is still recording (run at exit).");
}
