// clpool._core.SVMPool: svm_pool handing out SVMBlock objects (a pooled_svm with PyOpenCL's
// queue semantics). A block exposes its bytes through the buffer protocol, so that
// pyopencl.SVM(block) (clpool/pyopencl.py's PooledSVM) passes it to kernels and enqueue_copy.
//
// A block's SVM memory stays allocated for as long as an SVMBlock object over it exists, so as
// long as anything exported from it (the pyopencl.SVM base's own view, a memoryview, a numpy
// array) can reach it: release() gives the block back to the pool at once (the next user may get
// it, so using an old view is a data race, never a dangling pointer), and when the pool would
// free a block (trimming, free_held, the pool's end) that an object still reaches, clSVMFree
// waits for the last such object (python/reachable_blocks.h), as the pinned pool's unmap does.
#include "python/svm_pool_binding.h"

#include <CL/cl.h>

#include <cstdint>
#include <optional>
#include <utility>

#include "pool/opencl/svm_pool.h"
#include "pool/shared_limit.h"
#include "python/checked_buffer.h"
#include "python/errors_binding.h"
#include "python/gc_safe_subclass.h"
#include "python/initialised_caster.h"
#include "python/pool_extras.h"
#include "python/reachable_blocks.h"

namespace py = pybind11;

namespace clpool::python {
namespace {

using opencl::svm_allocator;
using opencl::svm_block;

// A block's memory, as reachable_blocks keys it.
const void* svm_ptr_of(const svm_block& b) { return b.ptr; }
using reachable_svm = reachable_blocks<svm_allocator>;
using guarded_svm_allocator = guarded_allocator<svm_allocator, svm_ptr_of>;

// Under the limit the pool may share with sibling arenas (pool/shared_limit.h; null: none).
using limited_svm_allocator = limited_allocator<guarded_svm_allocator>;
using svm_pool = opencl::basic_svm_pool<limited_svm_allocator>;
using pooled_svm = svm_pool::pooled_svm;

cl_command_queue as_queue(std::uintptr_t q) { return reinterpret_cast<cl_command_queue>(q); }

class py_svm_block {
 public:
  explicit py_svm_block(pooled_svm b) : b_(std::move(b)), ptr_(b_.ptr()) {
    if (ptr_ != nullptr) reachable_svm::get().add_object(ptr_);
  }
  py_svm_block(const py_svm_block&) = delete;
  ~py_svm_block() {
    if (b_.has_block()) release();
    if (ptr_ != nullptr) reachable_svm::get().drop_object(ptr_);
  }
  pooled_svm& get() { return b_; }
  // Keeps the GIL (README: "Threads and the GIL"): this runs inside the dealloc of the
  // pyopencl.SVM that wraps the block, where releasing the GIL lets another thread's garbage
  // collection free that object twice (python/pooled_buffer_type.h).
  void release() { b_.release(); }

 private:
  pooled_svm b_;
  void* ptr_;  // its memory, reachable through this object until it dies (reachable_svm)
};

struct py_svm_pool {
  py_svm_pool(svm_allocator allocator, unsigned leading_bits, std::shared_ptr<shared_limit> limit)
      : pool(limited_svm_allocator(guarded_svm_allocator(std::move(allocator)), std::move(limit)),
             pool_options{.leading_bits = leading_bits}) {
    pool.pool().add_reclaim_callback([](std::uint64_t) { collect_garbage(); });
  }
  ~py_svm_pool() {
    try {
      stop_trace(pool.pool(), trace);
    } catch (...) {
    }
  }
  memory_pool<limited_svm_allocator>& core() { return pool.pool(); }

  svm_pool pool;
  trace_recording trace;
};

}  // namespace
}  // namespace clpool::python

CLPOOL_REFUSE_UNINITIALISED(clpool::python::py_svm_block);
CLPOOL_REFUSE_UNINITIALISED(clpool::python::py_svm_pool);

namespace clpool::python {

namespace {

// The SVMBlock's bytes for the buffer protocol (checked_buffer.h).
const char* svm_block_bytes(py_svm_block& b, void** data, std::uint64_t* size) {
  if (!b.get().has_block()) return "SVMBlock: the block was released";
  *data = b.get().ptr();
  *size = b.get().size();
  return nullptr;
}

}  // namespace

void bind_svm_pool(py::module_& m) {
  m.def(
      "make_svm_base",
      [](py::handle svm_type) {
        PyObject* t = make_gc_safe_subclass(
            svm_type.ptr(), "clpool.pyopencl.SVMBase",
            "pyopencl.SVM with a dealloc that is safe against the garbage collector (the base of "
            "clpool.pyopencl.PooledSVM).");
        if (t == nullptr) throw py::error_already_set();
        return py::reinterpret_steal<py::object>(t);
      },
      py::arg("svm_type"));
  using gil_release = py::call_guard<py::gil_scoped_release>;
  py::class_<py_svm_block> svm_block(m, "SVMBlock", py::buffer_protocol());
  install_checked_buffer<py_svm_block, svm_block_bytes>(svm_block);
  svm_block
      .def_property_readonly(
          "svm_ptr",
          [](py_svm_block& b) { return reinterpret_cast<std::uintptr_t>(b.get().ptr()); })
      .def_property_readonly("size", [](py_svm_block& b) { return b.get().size(); })
      .def_property_readonly("has_block", [](py_svm_block& b) { return b.get().has_block(); })
      .def_property_readonly(
          "queue_int_ptr",
          [](py_svm_block& b) { return reinterpret_cast<std::uintptr_t>(b.get().queue()); })
      .def("release", &py_svm_block::release)
      .def(
          "enqueue_release",
          [](py_svm_block& b, std::uintptr_t q) { b.get().enqueue_release(as_queue(q)); },
          py::arg("queue_int_ptr") = 0)
      .def(
          "bind_to_queue",
          [](py_svm_block& b, std::uintptr_t q) { b.get().bind_to_queue(as_queue(q)); },
          py::arg("queue_int_ptr"))
      .def(
          "unbind_from_queue", [](py_svm_block& b) { b.get().unbind_from_queue(); }, gil_release());
  py::class_<py_svm_pool> cls(m, "SVMPool");
  cls.def(py::init([](std::uintptr_t context, cl_uint alignment, cl_svm_mem_flags flags,
                      std::uintptr_t queue, unsigned leading_bits,
                      std::shared_ptr<shared_limit> limit) {
            return new py_svm_pool(svm_allocator(reinterpret_cast<cl_context>(context), alignment,
                                                 flags, as_queue(queue)),
                                   leading_bits, std::move(limit));
          }),
          py::arg("context_int_ptr"), py::arg("alignment") = 0,
          py::arg("flags") = CL_MEM_READ_WRITE, py::arg("queue_int_ptr") = 0,
          py::arg("leading_bits") = 4, py::arg("shared_limit") = nullptr)
      .def(
          "allocate",
          [](py_svm_pool& w, const py::handle& size, std::uintptr_t queue) -> py::object {
            const std::uint64_t bytes = to_size(size, "SVMPool.allocate");
            if (bytes == 0) return py::none();
            return py::cast(new py_svm_block(w.pool.allocate(bytes, as_queue(queue))),
                            py::return_value_policy::take_ownership);
          },
          py::arg("size"), py::arg("queue_int_ptr") = 0);
  def_pool_extras(cls);
}

}  // namespace clpool::python
