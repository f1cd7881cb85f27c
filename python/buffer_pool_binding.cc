// clpool._core.ImmediateBufferPool / DeferredBufferPool: buffer_pool<A> for Python, handing out
// BufferBlock objects (a pooled cl_mem as int_ptr). clpool/pyopencl.py wraps them for PyOpenCL.
#include "python/buffer_pool_binding.h"

#include <CL/cl.h>

#include <cstdint>
#include <optional>
#include <utility>

#include "pool/opencl/buffer_pool.h"
#include "python/errors_binding.h"
#include "python/pool_extras.h"

namespace py = pybind11;

namespace clpool::python {
namespace {

using opencl::buffer_pool;
using opencl::pooled_buffer;

// One pooled buffer. release() (or destruction) gives the block back, without the GIL.
template <class A>
class py_buffer_block {
 public:
  explicit py_buffer_block(pooled_buffer<A> b) : b_(std::move(b)) {}
  py_buffer_block(const py_buffer_block&) = delete;
  ~py_buffer_block() {
    if (b_.has_block() && Py_IsInitialized() && PyGILState_Check()) {
      py::gil_scoped_release nogil;
      b_.release();
    }  // otherwise b_'s own destructor releases it
  }
  std::uintptr_t int_ptr() const { return reinterpret_cast<std::uintptr_t>(b_.mem()); }
  std::uint64_t size() const { return b_.size(); }
  std::uint64_t rounded_size() const { return b_.rounded_size(); }
  bool has_block() const { return b_.has_block(); }
  void release() {
    py::gil_scoped_release nogil;
    b_.release();
  }

 private:
  pooled_buffer<A> b_;
};

template <class A>
struct py_buffer_pool {
  py_buffer_pool(A allocator, unsigned leading_bits)
      : pool(std::move(allocator), opencl::buffer_pool_options{.pool = {.leading_bits = leading_bits}}) {
    pool.pool().add_reclaim_callback([](std::uint64_t) { collect_garbage(); });
  }
  ~py_buffer_pool() {
    try {
      stop_trace(pool.pool(), trace);
    } catch (...) {
    }
  }
  memory_pool<A>& core() { return pool.pool(); }

  buffer_pool<A> pool;
  trace_recording trace;
};

template <class A>
void bind_one(py::module_& m, const char* pool_name, const char* block_name,
              A (*make)(std::uintptr_t, cl_mem_flags)) {
  using block = py_buffer_block<A>;
  using wrapper = py_buffer_pool<A>;
  py::class_<block>(m, block_name)
      .def_property_readonly("int_ptr", &block::int_ptr)
      .def_property_readonly("size", &block::size)
      .def_property_readonly("rounded_size", &block::rounded_size)
      .def_property_readonly("has_block", &block::has_block)
      .def("release", &block::release);
  py::class_<wrapper> cls(m, pool_name);
  cls.def(py::init([make](std::uintptr_t handle, cl_mem_flags flags, unsigned leading_bits) {
           return new wrapper(make(handle, flags), leading_bits);
         }),
         py::arg("int_ptr"), py::arg("flags") = CL_MEM_READ_WRITE, py::arg("leading_bits") = 4)
      .def("allocate", [](wrapper& w, const py::handle& size) -> py::object {
        const std::uint64_t bytes = to_size(size, "MemoryPool.allocate");
        if (bytes == 0) return py::none();
        std::optional<pooled_buffer<A>> b;
        {
          py::gil_scoped_release nogil;
          b.emplace(w.pool.allocate(bytes));
        }
        return py::cast(new block(std::move(*b)), py::return_value_policy::take_ownership);
      });
  def_pool_extras(cls);
}

}  // namespace

void bind_buffer_pools(py::module_& m) {
  bind_one<opencl::immediate_buffer_allocator>(
      m, "ImmediateBufferPool", "ImmediateBufferBlock", [](std::uintptr_t queue, cl_mem_flags f) {
        return opencl::immediate_buffer_allocator(reinterpret_cast<cl_command_queue>(queue),
                                                  {.flags = f});
      });
  bind_one<opencl::deferred_buffer_allocator>(
      m, "DeferredBufferPool", "DeferredBufferBlock", [](std::uintptr_t context, cl_mem_flags f) {
        return opencl::deferred_buffer_allocator(reinterpret_cast<cl_context>(context), f);
      });
}

}  // namespace clpool::python
