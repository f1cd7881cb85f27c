#include "python/pooled_buffer_type.h"

#include "python/gc_safe_subclass.h"

#include <pybind11/pybind11.h>

#include <new>
#include <unordered_map>

namespace clpool::python {
namespace {

PyTypeObject* g_types[2] = {};        // [0] clpool.pyopencl.PooledBuffer, [1] PyCUDA's flavour
destructor g_base_dealloc = nullptr;   // pyopencl.Buffer's tp_dealloc (pybind11's)
PyObject* g_from_int_ptr = nullptr;    // pyopencl.Buffer.from_int_ptr
PyObject* g_logic_error = nullptr;     // pyopencl.LogicError, for a second release()

// Object -> its block. Never destroyed: objects may outlive the module at interpreter exit.
std::unordered_map<PyObject*, block_record*>& objects() {
  static auto* table = new std::unordered_map<PyObject*, block_record*>();
  return *table;
}

pybind11::detail::instance* as_instance(PyObject* self) {
  return reinterpret_cast<pybind11::detail::instance*>(self);
}

// True when nothing of the last user's is attached to `self`, so that handing it to the next
// user is indistinguishable from handing out a fresh object. Precondition: refcount 0, untracked.
bool is_clean(PyObject* self) {
  if (!is_pooled_buffer_type(Py_TYPE(self))) return false;  // __class__ was reassigned
  pybind11::detail::instance* inst = as_instance(self);
  if (inst->weakrefs != nullptr || inst->has_patients) return false;
  PyObject** dict = _PyObject_GetDictPtr(self);
  if (dict == nullptr) {  // could not even materialise the dict: keep out of the way
    PyErr_Clear();
    return false;
  }
  return *dict == nullptr || PyDict_GET_SIZE(*dict) == 0;
}

// Frees `self` for good, through pybind11's dealloc (which runs the C++ destructor: the object's
// own clReleaseMemObject). `self` is untracked, so weakref callbacks and attribute destructors
// that run in there may trigger a collection or release the GIL safely.
void destroy(PyObject* self) { g_base_dealloc(self); }

void pooled_buffer_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);  // first, always: see the header (pybind11 2.10 does not)
  auto& table = objects();
  auto it = table.find(self);
  if (it == table.end()) return destroy(self);
  block_record* record = it->second;
  if (!is_clean(self)) {
    table.erase(it);
    record->object = nullptr;
    if (record->st == block_record::state::handed_out) record->give_back();
    return destroy(self);
  }
  // Take the object back: it belongs to the record again, with the reference the last user
  // dropped, and it is tracked as any live object is.
  _Py_NewReference(self);
  PyObject_GC_Track(self);
  if (record->st == block_record::state::handed_out) {
    record->st = block_record::state::in_pool;
    record->give_back();  // may forget_block(record): then `self` is destroyed in there
  } else {
    record->st = block_record::state::in_pool;  // released_by_user: the block is already back
  }
}

PyObject* raise_released(const char* what) {
  if (g_logic_error != nullptr) {
    // pyopencl.LogicError(routine, code, msg), as PyOpenCL's PooledBuffer raises it.
    PyObject* err = PyObject_CallFunction(g_logic_error, "sis", what, -30 /*CL_INVALID_VALUE*/,
                                          "the pooled buffer was already released");
    if (err != nullptr) {
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(err)), err);
      Py_DECREF(err);
    }
    return nullptr;
  }
  PyErr_SetString(PyExc_ValueError, "PooledBuffer: the pooled buffer was already released");
  return nullptr;
}

// PooledBuffer.release(): gives the block back now, as PyOpenCL's PooledBuffer.release() does.
// The object keeps its own reference to the cl_mem, so a use after release is a data race on the
// block's next user, never a dangling handle. A second call raises pyopencl.LogicError.
PyObject* pooled_buffer_release(PyObject* self, PyObject*) {
  auto& table = objects();
  auto it = table.find(self);
  if (it == table.end() || it->second->st != block_record::state::handed_out) {
    return raise_released("PooledBuffer.release");
  }
  block_record* record = it->second;
  record->st = block_record::state::released_by_user;
  record->give_back();  // may forget_block(record), which detaches `self`
  Py_RETURN_NONE;
}

// PyCUDA's PooledDeviceAllocation: len() is the size asked for, int() the cl_mem handle (its
// "device address"), free() is release().
Py_ssize_t pooled_buffer_len(PyObject* self) {
  auto& table = objects();
  auto it = table.find(self);
  if (it == table.end() || it->second->st != block_record::state::handed_out) {
    PyErr_SetString(PyExc_ValueError, "PooledDeviceAllocation: the allocation was freed");
    return -1;
  }
  return static_cast<Py_ssize_t>(it->second->requested_size());
}

PyObject* pooled_buffer_int(PyObject* self) {
  return PyObject_GetAttrString(self, "int_ptr");
}

// PyOpenCL's PooledBuffer has both; a buffer pool has no queue binding.
PyObject* pooled_buffer_bind_to_queue(PyObject*, PyObject*) { Py_RETURN_NONE; }
PyObject* pooled_buffer_unbind_from_queue(PyObject*, PyObject*) { Py_RETURN_NONE; }

PyMethodDef g_methods[] = {
    {"release", pooled_buffer_release, METH_NOARGS,
     "Gives the block back to its pool now (PyOpenCL's PooledBuffer.release()). Do not use the "
     "buffer afterwards."},
    {"bind_to_queue", pooled_buffer_bind_to_queue, METH_O, "No-op, as on PyOpenCL's PooledBuffer."},
    {"unbind_from_queue", pooled_buffer_unbind_from_queue, METH_NOARGS,
     "No-op, as on PyOpenCL's PooledBuffer."},
    {nullptr, nullptr, 0, nullptr},
};

PyMethodDef g_pycuda_methods[] = {
    {"release", pooled_buffer_release, METH_NOARGS, "Gives the block back to its pool now."},
    {"free", pooled_buffer_release, METH_NOARGS,
     "PyCUDA's PooledDeviceAllocation.free(): gives the block back to its pool now."},
    {"bind_to_queue", pooled_buffer_bind_to_queue, METH_O, "No-op."},
    {"unbind_from_queue", pooled_buffer_unbind_from_queue, METH_NOARGS, "No-op."},
    {nullptr, nullptr, 0, nullptr},
};

PyType_Slot g_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(pooled_buffer_dealloc)},
    {Py_tp_methods, g_methods},
    {Py_tp_doc, const_cast<char*>(
                    "A pyopencl.Buffer from a clpool pool: its block goes back to the pool when "
                    "the last reference goes, or at release().")},
    {0, nullptr},
};

PyType_Slot g_pycuda_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(pooled_buffer_dealloc)},
    {Py_tp_methods, g_pycuda_methods},
    {Py_sq_length, reinterpret_cast<void*>(pooled_buffer_len)},
    {Py_mp_length, reinterpret_cast<void*>(pooled_buffer_len)},
    {Py_nb_int, reinterpret_cast<void*>(pooled_buffer_int)},
    {Py_tp_doc, const_cast<char*>(
                    "PyCUDA's PooledDeviceAllocation for OpenCL: a pyopencl.Buffer from a clpool "
                    "pool, with free(), len() (bytes asked for) and int() (the cl_mem handle).")},
    {0, nullptr},
};

// Not base types: the dealloc relies on the exact layout. Made only by the pools.
PyType_Spec g_specs[2] = {
    {"clpool.pyopencl.PooledBuffer", 0 /* pyopencl.Buffer's size */, 0,
     Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, g_slots},
    {"clpool.pycuda.PooledDeviceAllocation", 0, 0,
     Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, g_pycuda_slots},
};

// What the dealloc and the type switch rely on: a pybind11 instance (weak reference list where
// pybind11 puts it, GC and a managed dict or none), made by pybind11's dealloc.
bool check_layout(PyTypeObject* base, PyTypeObject* sub) {
  constexpr unsigned long kLayoutFlags = Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_MANAGED_DICT;
  return base->tp_basicsize == sub->tp_basicsize && base->tp_itemsize == 0 &&
         sub->tp_itemsize == 0 && base->tp_dictoffset == sub->tp_dictoffset &&
         base->tp_weaklistoffset == sub->tp_weaklistoffset &&
         base->tp_weaklistoffset ==
             static_cast<Py_ssize_t>(offsetof(pybind11::detail::instance, weakrefs)) &&
         (base->tp_flags & kLayoutFlags) == (sub->tp_flags & kLayoutFlags) &&
         base->tp_free == sub->tp_free;
}

}  // namespace

PyTypeObject* install_pooled_buffer_type(PyObject* buffer_type, bool pycuda_methods) {
  const int flavour = pycuda_methods ? 1 : 0;
  if (g_types[flavour] != nullptr) return g_types[flavour];
  if (!PyType_Check(buffer_type)) {
    PyErr_SetString(PyExc_TypeError, "install_pooled_buffer_type: expected pyopencl.Buffer");
    return nullptr;
  }
  auto* base = reinterpret_cast<PyTypeObject*>(buffer_type);
  if (!is_pybind11_instance_type(base)) {
    PyErr_SetString(PyExc_TypeError,
                    "pyopencl.Buffer is not a pybind11 class of this pybind11 ABI");
    return nullptr;
  }
  if (g_base_dealloc != nullptr && g_base_dealloc != base->tp_dealloc) {
    PyErr_SetString(PyExc_TypeError, "install_pooled_buffer_type: a different Buffer type");
    return nullptr;
  }
  PyObject* from_int_ptr = PyObject_GetAttrString(buffer_type, "from_int_ptr");
  if (from_int_ptr == nullptr) return nullptr;
  PyObject* bases = PyTuple_Pack(1, buffer_type);
  if (bases == nullptr) {
    Py_DECREF(from_int_ptr);
    return nullptr;
  }
  PyObject* sub = PyType_FromSpecWithBases(&g_specs[flavour], bases);
  Py_DECREF(bases);
  if (sub == nullptr) {
    Py_DECREF(from_int_ptr);
    return nullptr;
  }
  auto* sub_type = reinterpret_cast<PyTypeObject*>(sub);
  if (!check_layout(base, sub_type)) {
    Py_DECREF(sub);
    Py_DECREF(from_int_ptr);
    PyErr_SetString(PyExc_TypeError,
                    "pyopencl.Buffer's layout is not the one clpool's PooledBuffer needs");
    return nullptr;
  }
  if (g_logic_error == nullptr) {
    PyObject* pyopencl = PyImport_ImportModule("pyopencl");
    if (pyopencl != nullptr) {
      g_logic_error = PyObject_GetAttrString(pyopencl, "LogicError");
      Py_DECREF(pyopencl);
    }
    PyErr_Clear();  // without LogicError, release() raises ValueError
  }
  g_base_dealloc = base->tp_dealloc;
  Py_XDECREF(g_from_int_ptr);
  g_from_int_ptr = from_int_ptr;
  g_types[flavour] = sub_type;  // owned for the life of the process
  return sub_type;
}

PyTypeObject* pooled_buffer_type(bool pycuda_methods) { return g_types[pycuda_methods ? 1 : 0]; }

bool is_pooled_buffer_type(PyTypeObject* type) {
  return type != nullptr && (type == g_types[0] || type == g_types[1]);
}

PyObject* make_pooled_buffer(PyTypeObject* type, void* mem, block_record* record) {
  PyObject* ptr = PyLong_FromVoidPtr(mem);
  if (ptr == nullptr) return nullptr;
  PyObject* args[] = {ptr, Py_True};  // retain: the object holds its own reference
  PyObject* obj = PyObject_Vectorcall(g_from_int_ptr, args, 2, nullptr);
  Py_DECREF(ptr);
  if (obj == nullptr) return nullptr;
  if (Py_TYPE(obj) != type->tp_base || Py_REFCNT(obj) != 1) {
    Py_DECREF(obj);
    PyErr_SetString(PyExc_RuntimeError,
                    "pyopencl.Buffer.from_int_ptr returned a shared or unexpected object");
    return nullptr;
  }
  try {
    objects().emplace(obj, record);
  } catch (const std::bad_alloc&) {
    Py_DECREF(obj);
    return PyErr_NoMemory();
  }
  // Becomes a PooledBuffer: the same layout, our dealloc. Instances of heap types own a
  // reference to their type.
  Py_INCREF(type);
  PyTypeObject* old = Py_TYPE(obj);
  Py_SET_TYPE(obj, type);
  Py_DECREF(old);
  record->object = obj;
  return obj;
}

void forget_block(block_record* record) noexcept {
  PyObject* obj = record->object;
  if (obj == nullptr) return;
  record->object = nullptr;
  objects().erase(obj);
  // in_pool: the record owned the object: it dies now (a plain dealloc, since it is out of the
  // table). released_by_user: a user still holds it; it dies as a plain Buffer later.
  if (record->st == block_record::state::in_pool && Py_IsInitialized()) Py_DECREF(obj);
}

std::size_t pooled_buffer_objects() noexcept { return objects().size(); }

}  // namespace clpool::python
