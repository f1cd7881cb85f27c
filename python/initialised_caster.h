// Methods of clpool._core's classes on an object whose __init__ never ran: refused with TypeError.
//
// Such an object is easy to reach: an __init__ that raises leaves `self` in the traceback's frame
// (and in whatever registry a subclass put it in first), and cls.__new__(cls) makes one outright.
// pybind11 hands a method that object as a W& to memory it allocates there and then and never
// constructs (type_caster_generic::load_value): a pool's counters read garbage, allocate() crashes
// or waits on a lock that is not one. CLPOOL_REFUSE_UNINITIALISED(W), after W's definition and
// before its bindings (followed by ';'), gives W a caster that refuses first, for every method,
// property and argument of type W.
#ifndef CLPOOL_PYTHON_INITIALISED_CASTER_H_
#define CLPOOL_PYTHON_INITIALISED_CASTER_H_

#include <pybind11/pybind11.h>

#include <typeinfo>

namespace clpool::python {

// Throws pybind11::type_error "TYPE: not initialised (its __init__ did not run, or raised)" when
// `src` is an instance of the pybind11 class of `type` whose C++ object was never constructed.
// Anything else (another type, None) is left to pybind11's own caster.
void require_initialised(pybind11::handle src, const std::type_info& type);

// The same as a flag, for the raw methods (python/raw_method.h), which run without pybind11.
bool is_initialised(PyObject* self, const std::type_info& type);

// Whether every C++ object of `self` (an instance of one or more pybind11 classes) is
// constructed: false for a pool whose __init__ has not run yet, true after. False for an object
// of no pybind11 class.
bool all_initialised(pybind11::handle self);

}  // namespace clpool::python

#define CLPOOL_REFUSE_UNINITIALISED(W)                       \
  namespace pybind11::detail {                               \
  template <>                                                \
  class type_caster<W> : public type_caster_base<W> {        \
   public:                                                   \
    bool load(handle src, bool convert) {                    \
      ::clpool::python::require_initialised(src, typeid(W)); \
      return type_caster_base<W>::load(src, convert);        \
    }                                                        \
  };                                                         \
  }

#endif  // CLPOOL_PYTHON_INITIALISED_CASTER_H_
