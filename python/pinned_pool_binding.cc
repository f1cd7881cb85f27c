// clpool._core.PinnedPool: a pool of host_pinned_allocator blocks handing out PinnedBlock objects,
// which expose the pinned host bytes through the buffer protocol (clpool/pagelocked.py makes numpy
// arrays over them, with the block as the array's base).
//
// A block's host memory stays mapped for as long as a PinnedBlock object over it exists, so as
// long as numpy can reach it, whatever was freed or closed: PinnedBlock.free() gives the block back
// to the pool at once (PyCUDA's meaning: the next user may get it, so using the array afterwards
// is a data race, never a dangling pointer), and when the pool would unmap and release a block
// (trimming, free_held, the pool's end) that an object still reaches, the unmap waits for the last
// such object (python/reachable_blocks.h).
#include "python/pinned_pool_binding.h"

#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "pool/memory_pool.h"
#include "pool/opencl/host_pinned_allocator.h"
#include "python/checked_buffer.h"
#include "python/errors_binding.h"
#include "python/initialised_caster.h"
#include "python/pool_extras.h"
#include "python/reachable_blocks.h"

namespace py = pybind11;

namespace clpool::python {
namespace {

using opencl::host_pinned_allocator;
using opencl::pinned_block;

// A block's memory, as reachable_blocks keys it.
const void* pinned_mem_of(const pinned_block& b) { return b.mem; }
using reachable_pinned = reachable_blocks<host_pinned_allocator>;
// A block some PinnedBlock object still reaches is unmapped only after that object.
using guarded_pinned_allocator = guarded_allocator<host_pinned_allocator, pinned_mem_of>;

using pinned_pool = memory_pool<guarded_pinned_allocator>;

class py_pinned_block {
 public:
  explicit py_pinned_block(pinned_pool::allocation a)
      : a_(std::move(a)), mem_(a_.handle().mem), data_(a_.handle().host_ptr), size_(a_.size()) {
    reachable_pinned::get().add_object(mem_);
  }
  py_pinned_block(const py_pinned_block&) = delete;
  ~py_pinned_block() {
    free();
    reachable_pinned::get().drop_object(mem_);
  }
  // The memory stays valid (mapped) while this object lives, even after free().
  void* data() const { return data_; }
  std::uint64_t size() const { return size_; }
  std::uintptr_t mem() const { return reinterpret_cast<std::uintptr_t>(mem_); }
  bool has_block() const { return a_.has_block(); }
  // Keeps the GIL: the block goes back to the pool without waiting for the device (the unmap of
  // a block the pool frees is only enqueued), and this runs inside numpy's dealloc.
  void free() {
    if (a_.has_block()) a_.release();
  }

 private:
  pinned_pool::allocation a_;
  cl_mem mem_;
  void* data_;
  std::uint64_t size_;
};

struct py_pinned_pool {
  py_pinned_pool(cl_command_queue queue, cl_mem_flags flags, unsigned leading_bits)
      : pool(guarded_pinned_allocator(host_pinned_allocator(queue, flags)),
             pool_options{.leading_bits = leading_bits}) {
    pool.add_reclaim_callback([](std::uint64_t) { collect_garbage(); });
  }
  ~py_pinned_pool() {
    try {
      stop_trace(pool, trace);
    } catch (...) {
    }
  }
  pinned_pool& core() { return pool; }

  pinned_pool pool;
  trace_recording trace;
};

}  // namespace
}  // namespace clpool::python

CLPOOL_REFUSE_UNINITIALISED(clpool::python::py_pinned_block);
CLPOOL_REFUSE_UNINITIALISED(clpool::python::py_pinned_pool);

namespace clpool::python {

namespace {

// The PinnedBlock's bytes for the buffer protocol (checked_buffer.h).
const char* pinned_block_bytes(py_pinned_block& b, void** data, std::uint64_t* size) {
  if (!b.has_block()) return "PinnedBlock: the block was freed";
  *data = b.data();
  *size = b.size();
  return nullptr;
}

}  // namespace

void bind_pinned_pool(py::module_& m) {
  py::class_<py_pinned_block> pinned_block(m, "PinnedBlock", py::buffer_protocol());
  install_checked_buffer<py_pinned_block, pinned_block_bytes>(pinned_block);
  pinned_block.def_property_readonly("size", &py_pinned_block::size)
      .def(
          "__len__",
          [](const py_pinned_block& b) {
            if (!b.has_block()) throw py::value_error("PooledHostAllocation: the block was freed");
            return b.size();
          },
          "PyCUDA's PooledHostAllocation.__len__(): the block's size in bytes.")
      .def_property_readonly("has_block", &py_pinned_block::has_block)
      .def_property_readonly(
          "host_ptr", [](py_pinned_block& b) { return reinterpret_cast<std::uintptr_t>(b.data()); })
      .def_property_readonly("mem_int_ptr", &py_pinned_block::mem)
      .def("free", [](py_pinned_block& b) {
        // A second free() raises, as a second release of any pooled object does (the
        // destructor's own free() of a freed block stays silent).
        if (!b.has_block()) {
          set_released_error("PinnedBlock.free", "the page-locked block was already freed");
          throw py::error_already_set();
        }
        b.free();
      });
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
        std::optional<pinned_pool::allocation> b;
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
