#include "python/initialised_caster.h"

#include <string>

namespace clpool::python {

bool is_initialised(PyObject* self, const std::type_info& type) {
  pybind11::detail::type_info* info = pybind11::detail::get_type_info(type);
  if (info == nullptr || !PyObject_TypeCheck(self, info->type)) return true;  // not ours to judge
  auto* inst = reinterpret_cast<pybind11::detail::instance*>(self);
  if (inst->simple_layout) return inst->simple_holder_constructed;
  const pybind11::detail::value_and_holder vh =
      inst->get_value_and_holder(info, /*throw_if_missing=*/false);
  return vh && vh.holder_constructed();
}

bool all_initialised(pybind11::handle self) {
  if (pybind11::detail::all_type_info(Py_TYPE(self.ptr())).empty()) return false;
  auto* inst = reinterpret_cast<pybind11::detail::instance*>(self.ptr());
  for (const pybind11::detail::value_and_holder& vh : pybind11::detail::values_and_holders(inst)) {
    if (!vh.holder_constructed()) return false;
  }
  return true;
}

void require_initialised(pybind11::handle src, const std::type_info& type) {
  if (!src || is_initialised(src.ptr(), type)) return;
  throw pybind11::type_error(std::string(Py_TYPE(src.ptr())->tp_name) +
                             ": not initialised (its __init__ did not run, or raised)");
}

}  // namespace clpool::python
