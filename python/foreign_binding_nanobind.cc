// The seam's table for nanobind (PyOpenCL 2024.2 onwards), for the nanobind ABIs whose instance
// header clpool knows (kNanobindAbis); a nanobind class of any other ABI gets the generic table.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "python/foreign_binding.h"
#include "python/foreign_binding_internal.h"

namespace clpool::python {
namespace {

// nanobind ABI versions whose instance header clpool reads (nb_inst in nanobind's
// src/nb_internals.h): PyObject_HEAD, int32 offset, then four bytes of state whose first byte
// holds `state:2, direct:1, internal:1, destruct:1, cpp_delete:1, intrusive:1` (low bits first,
// as GCC and Clang lay out bit-fields on x86-64 and AArch64) and whose second byte is
// `clear_keep_alive`. Checked against nanobind v2.15.0 (ABI v21), which PyOpenCL 2026.1.2 uses.
// A nanobind that changes this layout changes its ABI version, and then falls to the generic
// path until its layout is checked and added here.
constexpr int kNanobindAbis[] = {21};

struct nanobind_instance_v21 {
  PyObject_HEAD std::int32_t offset;
  std::uint8_t state_bits;
  std::uint8_t clear_keep_alive;
  std::uint16_t unused;
};
static_assert(sizeof(nanobind_instance_v21) == sizeof(PyObject) + 8);
constexpr std::uint8_t kStateMask = 0x3, kStateReady = 2;

constexpr std::string_view kInternalsPrefix = "__nb_internals_v";

// The nanobind ABI versions present in this interpreter (each nanobind extension registers its
// internals in the interpreter's state dict under a key naming its ABI), as text for the detail,
// and whether all of them are known.
bool nanobind_abis_known(std::string& found) {
  PyObject* dict = PyInterpreterState_GetDict(PyInterpreterState_Get());
  if (dict == nullptr) {
    found = "no interpreter state dict";
    return false;
  }
  PyObject* key;
  PyObject* value;
  Py_ssize_t pos = 0;
  bool any = false, all_known = true;
  while (PyDict_Next(dict, &pos, &key, &value)) {
    if (!PyUnicode_Check(key)) continue;
    const char* text = PyUnicode_AsUTF8(key);
    if (text == nullptr) {
      PyErr_Clear();
      continue;
    }
    std::string_view k(text);
    if (k.substr(0, kInternalsPrefix.size()) != kInternalsPrefix) continue;
    any = true;
    const int version = std::atoi(text + kInternalsPrefix.size());
    bool known = false;
    for (int v : kNanobindAbis) known = known || v == version;
    all_known = all_known && known;
    if (!found.empty()) found += ", ";
    found += "nanobind ABI ";
    found += k.substr(kInternalsPrefix.size() - 1, k.size() - kInternalsPrefix.size() - 1);
    if (!known) found += " (layout not known to clpool)";
  }
  if (!any) found = "no nanobind internals found";
  return any && all_known;
}

bool is_nanobind_class(PyTypeObject* type) {
  // nanobind's bound classes are instances of its metaclass `nanobind.nb_type` (itself an
  // instance of `nanobind.nb_meta`).
  PyTypeObject* meta = Py_TYPE(type);
  if ((type->tp_flags & Py_TPFLAGS_HEAPTYPE) == 0 || meta->tp_name == nullptr) return false;
  const char* dot = std::strrchr(meta->tp_name, '.');
  if (std::strcmp(dot != nullptr ? dot + 1 : meta->tp_name, "nb_type") != 0) return false;
  PyObject* module = PyObject_GetAttrString(reinterpret_cast<PyObject*>(meta), "__module__");
  if (module == nullptr) {
    PyErr_Clear();
    return false;
  }
  const bool ok =
      PyUnicode_Check(module) && PyUnicode_CompareWithASCIIString(module, "nanobind") == 0;
  Py_DECREF(module);
  return ok;
}

const binding_ops* recognise(PyTypeObject* type, std::string& detail) {
  if (!is_nanobind_class(type)) return nullptr;
  return nanobind_abis_known(detail) ? &kNanobindOps : &kGenericOps;
}

// Through nanobind's own metaclass, so that nanobind registers it as any Python subclass, with
// the requester's dealloc (nanobind's untracks first, and clpool's does too).
PyObject* make_subclass(PyObject* base, const subclass_request& request) {
  return binding_parts::make_metaclass_subclass(base, request, /*with_finalize=*/false);
}

// The C++ value is constructed and usable and nothing else is attached to it through nanobind
// (no keep-alive patients), as for a fresh Buffer.from_int_ptr() result.
bool instance_is_plain(PyObject* self) {
  const auto* inst = reinterpret_cast<const nanobind_instance_v21*>(self);
  return (inst->state_bits & kStateMask) == kStateReady && inst->clear_keep_alive == 0;
}

bool is_clean(PyObject* self) {
  return !binding_parts::has_weak_references(self) && instance_is_plain(self) &&
         binding_parts::dict_is_empty(self);
}

}  // namespace

const binding_ops kNanobindOps = {
    .kind = binding_kind::nanobind,
    .recognise = recognise,
    .reuses_objects = true,
    .dealloc_leaves_object_tracked = false,  // nanobind's dealloc untracks first
    .make_subclass = make_subclass,
    .layout_fits = binding_parts::any_layout,  // kNanobindAbis names the layouts checked
    .fresh_instance_is_plain = instance_is_plain,
    .is_clean = is_clean,
    .adopt = binding_parts::set_type,
    .destroy = binding_parts::destroy_as_base,
    // PyOpenCL's nanobind classes take no weak references (nanobind's default) but a __dict__
    // (dynamic attributes), which nanobind's dealloc releases.
    .death_signal_of = binding_parts::death_signal_by_slots,
};

}  // namespace clpool::python
