// clpool._core.BufferPool: PyOpenCL's MemoryPool over clpool's memory_pool, handing out
// clpool.pyopencl.PooledBuffer objects (python/pooled_buffer_type.h), which are pyopencl.Buffers.
//
// Each block carries a record (pooled_buffer_type.h's block_record) through the pool: the
// allocator below makes one with every new block and drops it when the block is freed, so a hit
// finds the block's Python object in the block's own handle, without a lookup.
//
// The GIL is held in every operation (README: "Threads and the GIL"): freeing a block may free
// its Python object, and the object table is guarded by the GIL.
#include "python/buffer_pool_binding.h"

#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "pool/opencl/buffer_allocators.h"
#include "pool/opencl/cl_object.h"
#include "pool/opencl/queue_sync.h"
#include "pool/shared_limit.h"
#include "python/errors_binding.h"
#include "python/foreign_binding.h"
#include "python/initialised_caster.h"
#include "python/pool_extras.h"
#include "python/pooled_buffer_type.h"
#include "python/raw_method.h"

namespace py = pybind11;

namespace clpool::python {
namespace {

using opencl::buffer_block;
using opencl::deferred_buffer_allocator;
using opencl::immediate_buffer_allocator;

// PyOpenCL's two allocators behind one type, so that Python has one pool class.
class either_buffer_allocator {
 public:
  using handle_type = buffer_block;
  explicit either_buffer_allocator(immediate_buffer_allocator a) : a_(std::move(a)) {}
  explicit either_buffer_allocator(deferred_buffer_allocator a) : a_(std::move(a)) {}

  bool try_allocate(std::uint64_t bytes, buffer_block& out, allocator_refusal& refusal) {
    return std::visit([&](auto& a) { return a.try_allocate(bytes, out, refusal); }, a_);
  }
  buffer_block allocate(std::uint64_t bytes) { return allocate_or_throw(*this, bytes); }
  void deallocate(buffer_block block, std::uint64_t bytes) noexcept {
    std::visit([&](auto& a) { a.deallocate(block, bytes); }, a_);
  }
  bool is_deferred() const noexcept {
    return std::holds_alternative<deferred_buffer_allocator>(a_);
  }
  std::uint64_t largest_block() const noexcept {
    return std::visit([](const auto& a) { return a.largest_block(); }, a_);
  }

 private:
  std::variant<immediate_buffer_allocator, deferred_buffer_allocator> a_;
};

// Every block with a record for its Python object (see the file comment), under the limit the
// pool shares with its sibling arenas, if any (pool/shared_limit.h).
class recording_allocator {
 public:
  struct handle_type : buffer_block {
    block_record* record = nullptr;
  };
  recording_allocator(either_buffer_allocator inner, std::shared_ptr<shared_limit> limit)
      : inner_(std::move(inner), std::move(limit)) {}

  bool try_allocate(std::uint64_t bytes, handle_type& out, allocator_refusal& refusal);
  handle_type allocate(std::uint64_t bytes) { return allocate_or_throw(*this, bytes); }
  void deallocate(handle_type block, std::uint64_t bytes) noexcept;
  std::uint64_t largest_block() const noexcept { return inner_.largest_block(); }
  const either_buffer_allocator& inner() const noexcept { return inner_.inner(); }

 private:
  limited_allocator<either_buffer_allocator> inner_;
};

using core_pool = memory_pool<recording_allocator>;

class buffer_record final : public block_record {
 public:
  // The allocation leaves the record first: giving the block back may free it to the device,
  // which deletes this record (recording_allocator::deallocate).
  void give_back() noexcept override {
    core_pool::allocation a = std::move(live);
    if (has_sub_buffers) {
      a.discard();
    } else {
      a.release();
    }
  }
  std::uint64_t requested_size() const noexcept override { return live.size(); }
  core_pool::allocation live;      // while handed out
  bool handed_out_before = false;  // a user has had the block: its commands may still be queued
};

bool recording_allocator::try_allocate(std::uint64_t bytes, handle_type& out,
                                       allocator_refusal& refusal) {
  auto record = std::make_unique<buffer_record>();  // before the block: nothing to undo
  buffer_block block;
  if (!inner_.try_allocate(bytes, block, refusal)) return false;
  static_cast<buffer_block&>(out) = block;
  record->owner = this;
  out.record = record.release();
  return true;
}

void recording_allocator::deallocate(handle_type block, std::uint64_t bytes) noexcept {
  forget_block(block.record);
  delete static_cast<buffer_record*>(block.record);
  inner_.deallocate(block, bytes);
}

struct py_buffer_pool {
  py_buffer_pool(either_buffer_allocator allocator, unsigned leading_bits,
                 std::shared_ptr<shared_limit> limit, PyTypeObject* object_type)
      : pool(recording_allocator(std::move(allocator), std::move(limit)),
             pool_options{.leading_bits = leading_bits}),
        type(object_type) {
    pool.add_reclaim_callback([](std::uint64_t) { collect_garbage(); });
  }
  ~py_buffer_pool() {
    try {
      stop_trace(pool, trace);
    } catch (...) {
    }
  }
  core_pool& core() { return pool; }

  core_pool pool;
  trace_recording trace;
  PyTypeObject* type;  // the PooledBuffer flavour this pool hands out
  // The ImmediateAllocator's queue when it is out-of-order (the allocator holds a reference),
  // else null: a reused block then orders that queue first (buffer_pool_allocate).
  cl_command_queue out_of_order_queue = nullptr;
};

}  // namespace
}  // namespace clpool::python

CLPOOL_REFUSE_UNINITIALISED(clpool::python::py_buffer_pool);
CLPOOL_REFUSE_UNINITIALISED(clpool::shared_limit);
namespace clpool::python {
namespace {

// The size argument: an int (the fast path) or anything with __index__.
bool parse_size(PyObject* arg, std::uint64_t& bytes) {
  if (PyLong_CheckExact(arg)) {
    bytes = PyLong_AsUnsignedLongLong(arg);
    if (bytes != static_cast<std::uint64_t>(-1) || !PyErr_Occurred()) return true;
    PyErr_Clear();
  }
  try {
    bytes = to_size(py::handle(arg), "MemoryPool.allocate");
    return true;
  } catch (...) {
    set_python_error();
    return false;
  }
}

// MemoryPool.allocate(size) / __call__ / malloc: a PooledBuffer of at least `size` bytes, or
// None for 0. The hit path: one pool hit, and the block's own Python object handed out again.
PyObject* buffer_pool_allocate(PyObject* self, PyObject* size) {
  py_buffer_pool* w = raw_self<py_buffer_pool>(self);
  if (w == nullptr) return nullptr;
  std::uint64_t bytes;
  if (!parse_size(size, bytes)) return nullptr;
  if (bytes == 0) Py_RETURN_NONE;
  try {
    core_pool::allocation a = w->pool.allocate(bytes);
    auto* record = static_cast<buffer_record*>(a.handle().record);
    // An out-of-order queue may run the new user's commands before the last user's (a write
    // before a read still queued): order them, as clReleaseMemObject's deferred free would.
    if (w->out_of_order_queue != nullptr && record->handed_out_before) {
      opencl::order_after_enqueued(w->out_of_order_queue);
    }
    PyObject* object = record->object;
    if (object != nullptr && record->st == block_record::state::released_by_user) {
      // Its last user called release() and still holds it: the block gets a new object.
      forget_block(record);
      object = nullptr;
    }
    if (object == nullptr) {
      object = make_pooled_buffer(w->type, a.handle().mem, record);
      if (object == nullptr) return nullptr;  // `a` gives the block back
    } else if (!PyObject_GC_IsTracked(object)) {
      PyObject_GC_Track(object);  // a user's object again (held untracked: pooled_buffer_dealloc)
    }
    // The record's reference to the object becomes the caller's.
    record->live = std::move(a);
    record->st = block_record::state::handed_out;
    record->handed_out_before = true;
    return object;
  } catch (...) {
    set_python_error("MemoryPool.allocate(" + std::to_string(bytes) + " bytes)");
    return nullptr;
  }
}

PyMethodDef g_allocate = {"allocate", buffer_pool_allocate, METH_O,
                          "allocate(size): a PooledBuffer (a pyopencl.Buffer) of at least size "
                          "bytes, or None for 0."};
PyMethodDef g_call = {"__call__", buffer_pool_allocate, METH_O, "The same as allocate(size)."};
PyMethodDef g_malloc = {"malloc", buffer_pool_allocate, METH_O, "CuPy's name for allocate(size)."};

// SharedLimit: one limit several pools draw on.
void bind_shared_limit(py::module_& m) {
  py::class_<shared_limit, std::shared_ptr<shared_limit>>(
      m, "SharedLimit", "One byte limit that several pools (arenas) draw on; None is no limit.")
      .def(py::init([](const py::object& limit) {
             return std::make_shared<shared_limit>(limit_from(limit, "SharedLimit"));
           }),
           py::arg("limit_bytes") = py::none())
      .def(
          "set_limit",
          [](shared_limit& l, const py::object& limit) {
            l.set_limit(limit_from(limit, "SharedLimit.set_limit"));
          },
          py::arg("limit_bytes"))
      .def_property_readonly("limit",
                             [](const shared_limit& l) -> py::object {
                               return l.limit() == unlimited ? py::object(py::none())
                                                             : py::object(py::int_(l.limit()));
                             })
      .def_property_readonly("used_bytes", &shared_limit::used);
}

// What the binding seam (python/foreign_binding.h) found: for the pools' pyopencl.Buffer, and for
// any class (clpool.record asks it how a buffer tells its death).
void bind_binding_queries(py::module_& m) {
  m.def(
      "binding",
      []() -> py::object {
        std::string detail;
        const char* kind = pooled_buffer_binding(&detail);
        if (kind == nullptr) return py::none();
        return py::make_tuple(kind, detail);
      },
      "(kind, detail) of the binding library pyopencl.Buffer was made with, as the pools use it: "
      "'pybind11', 'nanobind' or 'generic' (python/foreign_binding.h); None before "
      "install_pooled_buffer_type.");
  m.def(
      "binding_of",
      [](const py::handle& type) -> py::tuple {
        if (!PyType_Check(type.ptr())) throw py::type_error("binding_of: expected a type");
        auto* t = reinterpret_cast<PyTypeObject*>(type.ptr());
        binding_info info;
        if (!classify_binding(t, info)) throw py::error_already_set();
        return py::make_tuple(to_string(info.kind()), info.detail,
                              to_string(info.ops->death_signal_of(t)));
      },
      py::arg("type"),
      "(kind, detail, death_signal) of the binding library `type` was made with, as clpool's "
      "binding seam classifies it (python/foreign_binding.h; CLPOOL_PYTHON_BINDING honoured, a "
      "bad value a ValueError): kind 'pybind11', 'nanobind' or 'generic'; death_signal how "
      "clpool.record sees an object of it die: 'weakref' (a weak reference on the object), "
      "'attribute' (one on a sentinel in its __dict__) or 'none'.");
}

}  // namespace

void bind_buffer_pools(py::module_& m) {
  m.def(
      "install_pooled_buffer_type",
      [](py::handle buffer_type, bool pycuda_methods) {
        PyTypeObject* t = install_pooled_buffer_type(buffer_type.ptr(), pycuda_methods);
        if (t == nullptr) throw py::error_already_set();
        return py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(t));
      },
      py::arg("buffer_type"), py::arg("pycuda_methods") = false,
      "Makes (once per flavour) the PooledBuffer subclass of buffer_type (pyopencl.Buffer) that "
      "buffer pools hand out; with pycuda_methods, also free(), len() and int() (PyCUDA's "
      "PooledDeviceAllocation).");
  bind_binding_queries(m);
  m.def(
      "is_pooled_buffer",
      [](const py::handle& obj) { return is_pooled_buffer_type(Py_TYPE(obj.ptr())); },
      py::arg("obj"),
      "True for a PooledBuffer of either flavour (clpool.pyopencl, clpool.pycuda).");
  m.def("pooled_buffer_objects", &pooled_buffer_objects,
        "Python objects currently tied to pooled blocks (handed out, or kept for reuse).");

  bind_shared_limit(m);

  py::class_<py_buffer_pool> cls(m, "BufferPool");
  cls.def(py::init([](std::uintptr_t handle, cl_mem_flags flags, unsigned leading_bits,
                      bool deferred, std::shared_ptr<shared_limit> limit,
                      const py::handle& object_type) {
            PyTypeObject* type = object_type.is_none()
                                     ? pooled_buffer_type(false)
                                     : reinterpret_cast<PyTypeObject*>(object_type.ptr());
            if (type == nullptr || !is_pooled_buffer_type(type)) {
              throw py::type_error(
                  "BufferPool: object_type must be a type made by "
                  "install_pooled_buffer_type (call it first)");
            }
            either_buffer_allocator allocator =
                deferred ? either_buffer_allocator(deferred_buffer_allocator(
                               reinterpret_cast<cl_context>(handle), flags))
                         : either_buffer_allocator(immediate_buffer_allocator(
                               reinterpret_cast<cl_command_queue>(handle), {.flags = flags}));
            const auto queue = reinterpret_cast<cl_command_queue>(handle);
            const bool out_of_order = !deferred && opencl::queue_is_out_of_order(queue);
            auto* pool =
                new py_buffer_pool(std::move(allocator), leading_bits, std::move(limit), type);
            if (out_of_order) pool->out_of_order_queue = queue;
            return pool;
          }),
          py::arg("int_ptr"), py::arg("flags") = CL_MEM_READ_WRITE, py::arg("leading_bits") = 4,
          py::arg("deferred") = false, py::arg("shared_limit") = nullptr,
          py::arg("object_type") = py::none())
      .def_property_readonly(
          "is_deferred", [](py_buffer_pool& w) { return w.pool.allocator().inner().is_deferred(); })
      .def(
          "_owns",
          [](py_buffer_pool& w, const py::handle& buffer) -> py::object {
            const void* owner = pooled_buffer_owner(buffer.ptr());
            if (owner == nullptr) return py::none();
            return py::bool_(owner == &w.pool.allocator());
          },
          py::arg("buffer"),
          "True when `buffer` is tied to a block of this pool, False to another pool's, None to "
          "none.");
  add_raw_method(cls, &g_allocate);
  add_raw_method(cls, &g_call);
  add_raw_method(cls, &g_malloc);
  def_pool_extras(cls);
}

}  // namespace clpool::python
