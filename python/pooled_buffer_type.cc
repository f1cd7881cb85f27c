#include "python/pooled_buffer_type.h"

#include <new>
#include <string>
#include <unordered_map>
#include <utility>

#include "python/errors_binding.h"
#include "python/foreign_binding.h"

namespace clpool::python {
namespace {

PyTypeObject* g_types[2] = {};        // [0] clpool.pyopencl.PooledBuffer, [1] PyCUDA's flavour
PyTypeObject* g_base = nullptr;       // pyopencl.Buffer
destructor g_base_dealloc = nullptr;  // its tp_dealloc (pybind11's or nanobind's)
PyObject* g_from_int_ptr = nullptr;   // pyopencl.Buffer.from_int_ptr
// How pyopencl.Buffer was made, and the operations of its binding (python/foreign_binding.h).
binding_info g_binding;
// Objects may be taken back: the binding's reuses_objects, until a fresh object surprises us.
bool g_reuse = true;

// Object -> its block. Never destroyed: objects may outlive the module at interpreter exit.
std::unordered_map<PyObject*, block_record*>& objects() {
  static auto* table = new std::unordered_map<PyObject*, block_record*>();
  return *table;
}

// True when nothing of the last user's is attached to `self`, so that handing it to the next
// user is indistinguishable from handing out a fresh object (the binding's is_clean). Precondition:
// refcount 0, untracked.
bool is_clean(PyObject* self) {
  if (!g_reuse || !is_pooled_buffer_type(Py_TYPE(self))) return false;  // or __class__ changed
  return g_binding.ops->is_clean(self);
}

// Frees `self` for good, through the binding library's dealloc (which runs the C++ destructor:
// the object's own clReleaseMemObject). `self` is untracked, so weakref callbacks and attribute
// destructors that run in there may trigger a collection or release the GIL safely.
// How (pybind11's dealloc serves its subclasses; others need the object made a plain Buffer
// first) is the binding's destroy.
void destroy(PyObject* self) { g_binding.ops->destroy(self, g_base, g_base_dealloc); }

// Unties `self` from its block for good; the block goes back if its user had not released it.
void detach(std::unordered_map<PyObject*, block_record*>::iterator it) {
  block_record* record = it->second;
  objects().erase(it);
  record->object = nullptr;
  if (record->st == block_record::state::handed_out) record->give_back();
}

// Bindings whose objects are reused: the type's dealloc, which may take the object back.
void pooled_buffer_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);  // first, always: see the header (pybind11 2.10 does not)
  auto& table = objects();
  auto it = table.find(self);
  if (it == table.end()) return destroy(self);
  block_record* record = it->second;
  if (!is_clean(self)) {
    detach(it);
    return destroy(self);
  }
  // Take the object back: it belongs to the record again, with the reference the last user
  // dropped. It stays untracked while the pool holds it: only the table reaches it then, so
  // nothing (gc.get_objects()) can attach a new user's attribute to it, or an object whose
  // __del__ calls into the pool while forget_block() frees it under the pool's lock.
  // buffer_pool_allocate tracks it again when it is handed out.
  _Py_NewReference(self);
  if (record->st == block_record::state::handed_out) {
    record->st = block_record::state::in_pool;
    record->give_back();  // may forget_block(record): then `self` is destroyed in there
  } else {
    record->st = block_record::state::in_pool;  // released_by_user: the block is already back
  }
}

// Bindings whose objects are not reused (generic): the type's finalizer (tp_finalize, run once by
// CPython's own dealloc before the binding library's), which gives the block back and never keeps
// the object. The dealloc stays CPython's, so that CPython itself checks the `__class__` switch in
// make_pooled_buffer.
void pooled_buffer_finalize(PyObject* self) {
  auto& table = objects();
  auto it = table.find(self);
  if (it != table.end()) detach(it);
}

// PooledBuffer.release(): gives the block back now, as PyOpenCL's PooledBuffer.release() does.
// The object keeps its own reference to the cl_mem, so a use after release is a data race on the
// block's next user, never a dangling handle. A second call raises pyopencl.LogicError.
PyObject* pooled_buffer_release(PyObject* self, PyObject*) {
  auto& table = objects();
  auto it = table.find(self);
  if (it == table.end() || it->second->st != block_record::state::handed_out) {
    // In the flavour's own words: PyCUDA's is freed, PyOpenCL's released.
    return Py_TYPE(self) == g_types[1]
               ? set_released_error("PooledDeviceAllocation.free",
                                    "the allocation was already freed")
               : set_released_error("PooledBuffer.release",
                                    "the pooled buffer was already released");
  }
  block_record* record = it->second;
  record->st = block_record::state::released_by_user;
  record->give_back();  // may forget_block(record), which detaches `self`
  Py_RETURN_NONE;
}

// pyopencl.Buffer's own `method` (get_sub_region, __getitem__) on `self`, which marks the block as
// having sub-buffers (block_record::has_sub_buffers): it then never goes back to the pool for
// another user while a sub-buffer may still reach its memory. A released buffer has no block of
// its own to divide: pyopencl.LogicError, as a second release.
PyObject* sub_buffer_of(PyObject* self, const char* method_name, PyObject* args, PyObject* kwargs) {
  // Everything that may run Python code (an allocation can start a collection, whose finalizers
  // may release this very buffer) comes first; the record is looked up, checked and marked with
  // nothing in between, and the call follows.
  PyObject* method = PyObject_GetAttrString(reinterpret_cast<PyObject*>(g_base), method_name);
  if (method == nullptr) return nullptr;
  const Py_ssize_t n = PyTuple_GET_SIZE(args);
  PyObject* with_self = PyTuple_New(n + 1);
  if (with_self == nullptr) {
    Py_DECREF(method);
    return nullptr;
  }
  Py_INCREF(self);
  PyTuple_SET_ITEM(with_self, 0, self);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* arg = PyTuple_GET_ITEM(args, i);
    Py_INCREF(arg);
    PyTuple_SET_ITEM(with_self, i + 1, arg);
  }
  auto it = objects().find(self);
  if (it == objects().end() || it->second->st != block_record::state::handed_out) {
    Py_DECREF(with_self);
    Py_DECREF(method);
    const std::string routine = std::string("PooledBuffer.") + method_name;
    return set_released_error(routine.c_str(), "the pooled buffer was released");
  }
  // Marked before the call: a sub-buffer the driver made is the block's, even if its Python
  // object then fails. The record may be gone after the call (a finalizer run in there released
  // the buffer, whose block went to the device, marked), so it is not touched again.
  it->second->has_sub_buffers = true;
  PyObject* sub = PyObject_Call(method, with_self, kwargs);
  Py_DECREF(with_self);
  Py_DECREF(method);
  return sub;
}

PyObject* pooled_buffer_get_sub_region(PyObject* self, PyObject* args, PyObject* kwargs) {
  return sub_buffer_of(self, "get_sub_region", args, kwargs);
}

PyObject* pooled_buffer_getitem(PyObject* self, PyObject* key) {
  PyObject* args = PyTuple_Pack(1, key);
  if (args == nullptr) return nullptr;
  PyObject* sub = sub_buffer_of(self, "__getitem__", args, nullptr);
  Py_DECREF(args);
  return sub;
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

PyObject* pooled_buffer_int(PyObject* self) { return PyObject_GetAttrString(self, "int_ptr"); }

// The same as methods, for classes made through the binding library's metaclass, whose slots
// come from their dunder methods.
PyObject* pooled_buffer_len_method(PyObject* self, PyObject*) {
  const Py_ssize_t n = pooled_buffer_len(self);
  return n < 0 ? nullptr : PyLong_FromSsize_t(n);
}
PyObject* pooled_buffer_int_method(PyObject* self, PyObject*) { return pooled_buffer_int(self); }

// PyOpenCL's PooledBuffer has both; a buffer pool has no queue binding.
PyObject* pooled_buffer_bind_to_queue(PyObject*, PyObject*) { Py_RETURN_NONE; }
PyObject* pooled_buffer_unbind_from_queue(PyObject*, PyObject*) { Py_RETURN_NONE; }

constexpr char kGetSubRegionDoc[] =
    "pyopencl.Buffer.get_sub_region: a sub-buffer of this buffer. Its block then goes back to "
    "the device at release, never to another user of the pool, since the sub-buffer may still "
    "reach it.";

PyMethodDef g_methods[] = {
    {"release", pooled_buffer_release, METH_NOARGS,
     "Gives the block back to its pool now (PyOpenCL's PooledBuffer.release()). Do not use the "
     "buffer afterwards."},
    {"get_sub_region",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(pooled_buffer_get_sub_region)),
     METH_VARARGS | METH_KEYWORDS, kGetSubRegionDoc},
    {"bind_to_queue", pooled_buffer_bind_to_queue, METH_O, "No-op, as on PyOpenCL's PooledBuffer."},
    {"unbind_from_queue", pooled_buffer_unbind_from_queue, METH_NOARGS,
     "No-op, as on PyOpenCL's PooledBuffer."},
    {nullptr, nullptr, 0, nullptr},
};

PyMethodDef g_pycuda_methods[] = {
    {"release", pooled_buffer_release, METH_NOARGS, "Gives the block back to its pool now."},
    {"free", pooled_buffer_release, METH_NOARGS,
     "PyCUDA's PooledDeviceAllocation.free(): gives the block back to its pool now."},
    {"get_sub_region",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(pooled_buffer_get_sub_region)),
     METH_VARARGS | METH_KEYWORDS, kGetSubRegionDoc},
    {"bind_to_queue", pooled_buffer_bind_to_queue, METH_O, "No-op."},
    {"unbind_from_queue", pooled_buffer_unbind_from_queue, METH_NOARGS, "No-op."},
    {nullptr, nullptr, 0, nullptr},
};

// Slicing makes a sub-buffer (pyopencl.Buffer.__getitem__), as get_sub_region does.
PyMethodDef g_dunders[] = {
    {"__getitem__", pooled_buffer_getitem, METH_O, "A sub-buffer, as get_sub_region."},
    {nullptr, nullptr, 0, nullptr},
};

PyMethodDef g_pycuda_dunders[] = {
    {"__getitem__", pooled_buffer_getitem, METH_O, "A sub-buffer, as get_sub_region."},
    {"__len__", pooled_buffer_len_method, METH_NOARGS, "The bytes asked for."},
    {"__int__", pooled_buffer_int_method, METH_NOARGS, "The cl_mem handle."},
    {nullptr, nullptr, 0, nullptr},
};

const char* const g_docs[2] = {
    "A pyopencl.Buffer from a clpool pool: its block goes back to the pool when the last "
    "reference goes, or at release().",
    "PyCUDA's PooledDeviceAllocation for OpenCL: a pyopencl.Buffer from a clpool pool, with "
    "free(), len() (bytes asked for) and int() (the cl_mem handle).",
};

PyType_Slot g_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(pooled_buffer_dealloc)},
    {Py_tp_methods, g_methods},
    {Py_mp_subscript, reinterpret_cast<void*>(pooled_buffer_getitem)},
    {Py_tp_doc, const_cast<char*>(g_docs[0])},
    {0, nullptr},
};

PyType_Slot g_pycuda_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(pooled_buffer_dealloc)},
    {Py_tp_methods, g_pycuda_methods},
    {Py_mp_subscript, reinterpret_cast<void*>(pooled_buffer_getitem)},
    {Py_sq_length, reinterpret_cast<void*>(pooled_buffer_len)},
    {Py_mp_length, reinterpret_cast<void*>(pooled_buffer_len)},
    {Py_nb_int, reinterpret_cast<void*>(pooled_buffer_int)},
    {Py_tp_doc, const_cast<char*>(g_docs[1])},
    {0, nullptr},
};

// Not base types: the dealloc relies on the exact layout. Made only by the pools.
PyType_Spec g_specs[2] = {
    {"clpool.pyopencl.PooledBuffer", 0 /* pyopencl.Buffer's size */, 0,
     Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, g_slots},
    {"clpool.pycuda.PooledDeviceAllocation", 0, 0,
     Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, g_pycuda_slots},
};

// What switching an object's type between `base` and `sub` needs (CPython's own rule for
// `__class__` assignment): the same size, dict and weak-reference slots, and GC.
bool same_layout(PyTypeObject* base, PyTypeObject* sub) {
  constexpr unsigned long kLayoutFlags = Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_MANAGED_DICT;
  return base->tp_basicsize == sub->tp_basicsize && base->tp_itemsize == 0 &&
         sub->tp_itemsize == 0 && base->tp_dictoffset == sub->tp_dictoffset &&
         base->tp_weaklistoffset == sub->tp_weaklistoffset &&
         (base->tp_flags & kLayoutFlags) == (sub->tp_flags & kLayoutFlags);
}

// What the binding's make_subclass needs: a C subclass (pybind11) is made from the flavour's spec;
// one made by the base's own metaclass (nanobind, generic; not subclassable further, since the
// dealloc relies on the exact type) gets its methods, and its dealloc or finalizer.
subclass_request request_for(int flavour) {
  subclass_request request;
  request.spec = &g_specs[flavour];
  request.doc = g_docs[flavour];
  request.methods = flavour == 1 ? g_pycuda_methods : g_methods;
  request.dunders = flavour == 1 ? g_pycuda_dunders : g_dunders;
  request.dealloc = pooled_buffer_dealloc;
  request.finalize = pooled_buffer_finalize;
  return request;
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
  if (g_base != nullptr && g_base != base) {
    PyErr_SetString(PyExc_TypeError, "install_pooled_buffer_type: a different Buffer type");
    return nullptr;
  }
  binding_info binding;
  if (!classify_binding(base, binding)) return nullptr;
  if (g_base != nullptr && binding.ops != g_binding.ops) binding = g_binding;
  if ((base->tp_flags & Py_TPFLAGS_BASETYPE) == 0) {
    PyErr_Format(PyExc_TypeError,
                 "pyopencl.Buffer (%s) cannot be subclassed: clpool's pools "
                 "need a Buffer subclass",
                 binding.detail.c_str());
    return nullptr;
  }
  PyObject* from_int_ptr = PyObject_GetAttrString(buffer_type, "from_int_ptr");
  if (from_int_ptr == nullptr) return nullptr;
  g_binding = binding;  // the subclass's hooks depend on it
  g_reuse = binding.ops->reuses_objects;
  PyObject* sub = binding.ops->make_subclass(buffer_type, request_for(flavour));
  if (sub == nullptr) {
    Py_DECREF(from_int_ptr);
    return nullptr;
  }
  auto* sub_type = reinterpret_cast<PyTypeObject*>(sub);
  if (!same_layout(base, sub_type) || !binding.ops->layout_fits(base, sub_type)) {
    Py_DECREF(sub);
    Py_DECREF(from_int_ptr);
    PyErr_Format(PyExc_TypeError,
                 "pyopencl.Buffer's layout (%s) is not the one clpool's PooledBuffer needs",
                 binding.detail.c_str());
    return nullptr;
  }
  Py_XINCREF(buffer_type);
  Py_XDECREF(reinterpret_cast<PyObject*>(g_base));
  g_base = base;
  g_base_dealloc = base->tp_dealloc;
  Py_XDECREF(g_from_int_ptr);
  g_from_int_ptr = from_int_ptr;
  g_types[flavour] = sub_type;  // owned for the life of the process
  return sub_type;
}

const char* pooled_buffer_binding(std::string* detail) {
  if (detail != nullptr) *detail = g_binding.detail;
  return g_base == nullptr ? nullptr : to_string(g_binding.kind());
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
  if (Py_TYPE(obj) != g_base || Py_REFCNT(obj) != 1) {
    Py_DECREF(obj);
    PyErr_SetString(PyExc_RuntimeError,
                    "pyopencl.Buffer.from_int_ptr returned a shared or unexpected object");
    return nullptr;
  }
  if (g_reuse && !g_binding.ops->fresh_instance_is_plain(obj)) {
    // Not the instance header clpool knows: never reuse objects in this process.
    g_reuse = false;
    g_binding.detail += std::string("; objects not reused: a fresh Buffer's ") +
                        to_string(g_binding.kind()) + " header was unexpected";
  }
  // Becomes a PooledBuffer: the same layout, our dealloc. The generic path lets CPython check
  // the switch (`__class__` assignment); the others checked the layout once at install.
  if (g_binding.ops->adopt(obj, type) != 0) {
    Py_DECREF(obj);
    return nullptr;
  }
  try {
    objects().emplace(obj, record);
  } catch (const std::bad_alloc&) {
    Py_DECREF(obj);  // not in the table yet: destroyed as a plain Buffer
    return PyErr_NoMemory();
  }
  record->object = obj;
  return obj;
}

namespace {

// True while a Python object may still be freed here: the interpreter runs, or it is finalizing
// on this thread. Py_FinalizeEx clears Py_IsInitialized() before it clears the modules, and a
// pool in a module's globals dies there: the objects it kept must die with it, or their own
// references to the cl_mem outlive the program (mockcl's exit report named them). After
// finalization no thread state is current, and the object is left alone.
bool python_objects_can_die() noexcept {
  return Py_IsInitialized() || _PyThreadState_UncheckedGet() != nullptr;
}

}  // namespace

void forget_block(block_record* record) noexcept {
  PyObject* obj = record->object;
  if (obj == nullptr) return;
  record->object = nullptr;
  objects().erase(obj);
  // in_pool: the record owned the object: it dies now (a plain dealloc, since it is out of the
  // table). released_by_user: a user still holds it; it dies as a plain Buffer later.
  if (record->st == block_record::state::in_pool && python_objects_can_die()) Py_DECREF(obj);
}

const void* pooled_buffer_owner(PyObject* object) noexcept {
  auto it = objects().find(object);
  return it == objects().end() ? nullptr : it->second->owner;
}

std::size_t pooled_buffer_objects() noexcept { return objects().size(); }

}  // namespace clpool::python
