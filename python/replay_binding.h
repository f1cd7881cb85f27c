// clpool._core.replay_json and diff_json: the replay engine in-process (python/clpool/replay.py
// wraps them).
#ifndef CLPOOL_PYTHON_REPLAY_BINDING_H_
#define CLPOOL_PYTHON_REPLAY_BINDING_H_

#include <pybind11/pybind11.h>

namespace clpool::python {

void bind_replay(pybind11::module_& m);

}  // namespace clpool::python

#endif  // CLPOOL_PYTHON_REPLAY_BINDING_H_
