// clpool._core.PinnedPool: a pool of host_pinned_allocator blocks handing out PinnedBlock objects,
// which expose the pinned host bytes through the buffer protocol (clpool/pagelocked.py makes numpy
// arrays over them, with the block as the array's base).
//
// A block's host memory stays mapped for as long as a PinnedBlock object over it exists, so as
// long as numpy can reach it, whatever was freed or closed: PinnedBlock.free() gives the block back
// to the pool at once (PyCUDA's meaning: the next user may get it, so using the array afterwards
// is a data race, never a dangling pointer), and when the pool would unmap and release a block
// (trimming, free_held, the pool's end) that an object still reaches, the unmap waits for the last
// such object (reachable_blocks below).
#include "python/pinned_pool_binding.h"

#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "pool/memory_pool.h"
#include "pool/opencl/host_pinned_allocator.h"
#include "python/checked_buffer.h"
#include "python/errors_binding.h"
#include "python/initialised_caster.h"
#include "python/pool_extras.h"

namespace py = pybind11;

namespace clpool::python {
namespace {

using opencl::host_pinned_allocator;
using opencl::pinned_block;

// The blocks PinnedBlock objects reach, and the unmaps that wait for them. Process-wide, since a
// deferred unmap may outlive its pool; its own lock, since the pool frees blocks with the GIL
// released (allocate's miss path may trim).
class reachable_blocks {
 public:
  static reachable_blocks& get() {
    static auto* r = new reachable_blocks();  // never destroyed: objects may outlive the module
    return *r;
  }
  void add_object(cl_mem mem) {
    std::lock_guard<std::mutex> lock(mu_);
    ++table_[mem].objects;
  }
  // An object over `mem` is gone: runs the unmap that waited for it, if this was the last one.
  void drop_object(cl_mem mem) noexcept {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = table_.find(mem);
    if (it == table_.end() || --it->second.objects > 0) return;
    entry e = std::move(it->second);
    table_.erase(it);
    lock.unlock();
    if (e.release) e.release->allocator->deallocate(e.release->block, e.release->bytes);
  }
  // The pool frees `block`: true when an object still reaches it, and the unmap now waits for it.
  bool defer(const std::shared_ptr<host_pinned_allocator>& allocator, pinned_block block,
             std::uint64_t bytes) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = table_.find(block.mem);
    if (it == table_.end()) return false;
    it->second.release = deferred{allocator, block, bytes};
    return true;
  }

 private:
  struct deferred {
    std::shared_ptr<host_pinned_allocator> allocator;
    pinned_block block;
    std::uint64_t bytes;
  };
  struct entry {
    int objects = 0;
    std::optional<deferred> release;
  };
  std::mutex mu_;
  std::unordered_map<cl_mem, entry> table_;
};

// host_pinned_allocator, except that a block some PinnedBlock object still reaches is unmapped
// only after that object (reachable_blocks::defer).
class guarded_pinned_allocator {
 public:
  using handle_type = pinned_block;
  explicit guarded_pinned_allocator(host_pinned_allocator a)
      : inner_(std::make_shared<host_pinned_allocator>(std::move(a))) {}
  bool try_allocate(std::uint64_t bytes, pinned_block& out, allocator_refusal& refusal) {
    return inner_->try_allocate(bytes, out, refusal);
  }
  pinned_block allocate(std::uint64_t bytes) { return inner_->allocate(bytes); }
  void deallocate(pinned_block block, std::uint64_t bytes) noexcept {
    if (!reachable_blocks::get().defer(inner_, block, bytes)) inner_->deallocate(block, bytes);
  }
  std::uint64_t largest_block() const noexcept { return inner_->largest_block(); }

 private:
  std::shared_ptr<host_pinned_allocator> inner_;  // shared with unmaps that outlive the pool
};

using pinned_pool = memory_pool<guarded_pinned_allocator>;

class py_pinned_block {
 public:
  explicit py_pinned_block(pinned_pool::allocation a)
      : a_(std::move(a)), mem_(a_.handle().mem), data_(a_.handle().host_ptr), size_(a_.size()) {
    reachable_blocks::get().add_object(mem_);
  }
  py_pinned_block(const py_pinned_block&) = delete;
  ~py_pinned_block() {
    free();
    reachable_blocks::get().drop_object(mem_);
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
