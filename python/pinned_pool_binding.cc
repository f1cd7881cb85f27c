// clpool._core.PinnedPool: host_pinned_pool handing out PinnedBlock objects, which expose the
// pinned host bytes through the buffer protocol (clpool/pagelocked.py makes numpy arrays over
// them, with the block as the array's base).
#include "python/pinned_pool_binding.h"

#include <CL/cl.h>

#include <cstdint>
#include <optional>
#include <utility>

#include "pool/opencl/host_pinned_pool.h"
#include "python/errors_binding.h"
#include "python/pool_extras.h"

namespace py = pybind11;

namespace clpool::python {
namespace {

using opencl::host_pinned_allocator;
using opencl::host_pinned_pool;
using opencl::pinned_memory;

class py_pinned_block {
 public:
  explicit py_pinned_block(pinned_memory m) : m_(std::move(m)) {}
  py_pinned_block(const py_pinned_block&) = delete;
  ~py_pinned_block() {
    if (m_.has_block()) free();
  }
  void* data() const { return m_.data(); }
  std::uint64_t size() const { return m_.size(); }
  std::uintptr_t mem() const { return reinterpret_cast<std::uintptr_t>(m_.mem()); }
  bool has_block() const { return m_.has_block(); }
  // Keeps the GIL: the block goes back to the pool without waiting for the device (the unmap of
  // a block the pool frees is only enqueued), and this runs inside numpy's dealloc.
  void free() { m_.free(); }

 private:
  pinned_memory m_;
};

struct py_pinned_pool {
  py_pinned_pool(cl_command_queue queue, cl_mem_flags flags, unsigned leading_bits)
      : pool(host_pinned_allocator(queue, flags), pool_options{.leading_bits = leading_bits}) {
    pool.pool().add_reclaim_callback([](std::uint64_t) { collect_garbage(); });
  }
  ~py_pinned_pool() {
    try {
      stop_trace(pool.pool(), trace);
    } catch (...) {
    }
  }
  memory_pool<host_pinned_allocator>& core() { return pool.pool(); }

  host_pinned_pool pool;
  trace_recording trace;
};

}  // namespace

void bind_pinned_pool(py::module_& m) {
  py::class_<py_pinned_block>(m, "PinnedBlock", py::buffer_protocol())
      .def_buffer([](py_pinned_block& b) {
        if (!b.has_block()) throw py::value_error("PinnedBlock: the block was freed");
        return py::buffer_info(b.data(), 1, py::format_descriptor<std::uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(b.size())}, {1});
      })
      .def_property_readonly("size", &py_pinned_block::size)
      .def("__len__", [](const py_pinned_block& b) {
        if (!b.has_block()) throw py::value_error("PooledHostAllocation: the block was freed");
        return b.size();
      }, "PyCUDA's PooledHostAllocation.__len__(): the block's size in bytes.")
      .def_property_readonly("has_block", &py_pinned_block::has_block)
      .def_property_readonly("host_ptr", [](py_pinned_block& b) {
        return reinterpret_cast<std::uintptr_t>(b.data());
      })
      .def_property_readonly("mem_int_ptr", &py_pinned_block::mem)
      .def("free", &py_pinned_block::free);
  py::class_<py_pinned_pool> cls(m, "PinnedPool");
  cls.def(py::init([](std::uintptr_t queue, cl_mem_flags flags, unsigned leading_bits) {
           return new py_pinned_pool(reinterpret_cast<cl_command_queue>(queue), flags,
                                     leading_bits);
         }),
         py::arg("queue_int_ptr"), py::arg("flags") = CL_MEM_READ_WRITE,
         py::arg("leading_bits") = 4)
      .def("allocate", [](py_pinned_pool& w, const py::handle& size) -> py::object {
        const std::uint64_t bytes = to_size(size, "PageLockedMemoryPool.allocate");
        if (bytes == 0) return py::none();
        std::optional<pinned_memory> b;
        {
          py::gil_scoped_release nogil;
          b.emplace(w.pool.allocate(bytes));
        }
        return py::cast(new py_pinned_block(std::move(*b)),
                        py::return_value_policy::take_ownership);
      });
  def_pool_extras(cls);
}

}  // namespace clpool::python
