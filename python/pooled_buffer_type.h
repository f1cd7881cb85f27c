// clpool.pyopencl.PooledBuffer: what clpool's buffer pools hand to Python. It is a subclass of
// pyopencl.Buffer (so PyOpenCL accepts it wherever it takes a Buffer), made in C with its own
// tp_dealloc, for two reasons:
//
// 1. Safety. PyOpenCL 2022.3 is built with pybind11 2.10, whose dealloc leaves a dying object
//    tracked by the garbage collector (fixed in pybind11 2.11, PR #4461). Any Python code that
//    runs inside that dealloc (a weakref callback, say) and triggers a collection, or releases
//    the GIL while another thread collects, makes the collector free the object a second time.
//    clpool used weakref callbacks on pyopencl.Buffer to take blocks back; that was the crash.
//    This type untracks the object before anything else, as CPython's own types do, and gives
//    the block back in C without running Python code or releasing the GIL.
// 2. Speed. Making a pyopencl.Buffer (Buffer.from_int_ptr) costs more than a whole pool hit, so
//    each block keeps its Python object while it is held by the pool (untracked by the garbage
//    collector then, so that only the pool reaches it), and a hit hands the same object out
//    again. When the last user reference goes, tp_dealloc takes the object back
//    (resurrects it) instead of freeing it, provided nothing of the old user's is attached to
//    it (no weak references, attributes or pybind11 keep-alive patients); otherwise the object
//    is freed and the block gets a new one next time.
//
// How the subclass is made and whether objects are reused depends on the binding library PyOpenCL
// was built with (python/foreign_binding.h): pybind11 (PyOpenCL 2022.x, 2023.x) and nanobind of a
// known ABI (2024.2 onwards) reuse objects; anything else gets a new object per hit.
//
// Every function here must be called with the GIL held, and the pools that use it hold the GIL
// in all their operations (python/README.md, "Threads and the GIL"), so the block records and the
// object table need no lock of their own.
#ifndef CLPOOL_PYTHON_POOLED_BUFFER_TYPE_H_
#define CLPOOL_PYTHON_POOLED_BUFFER_TYPE_H_

#include <Python.h>

#include <cstdint>
#include <string>

namespace clpool::python {

// The pool side of one block: implemented by the pool binding for its allocator type.
class block_record {
 public:
  enum class state : std::uint8_t {
    in_pool,           // the pool holds the block; `object` (if any) is owned by this record
    handed_out,        // a user holds `object` (borrowed here); the record owns the allocation
    released_by_user,  // release() gave the block back; users may still hold `object` (borrowed)
  };

  block_record() = default;
  block_record(const block_record&) = delete;
  block_record& operator=(const block_record&) = delete;

  // Gives the block of a handed-out record back to its pool. May free the block to the device
  // (not holding, trim, limit), which calls forget_block() on this record and deletes it: the
  // caller must not touch the record afterwards.
  virtual void give_back() noexcept = 0;

  // The size the user asked for (while handed out), for len().
  virtual std::uint64_t requested_size() const noexcept = 0;

  PyObject* object = nullptr;
  state st = state::in_pool;
  // Its user made a sub-buffer of the block (PooledBuffer.get_sub_region, or a slice). OpenCL
  // keeps a buffer's memory while any sub-buffer of it lives, so the block must never reach
  // another user: give_back() hands it to the device, not to the pool.
  bool has_sub_buffers = false;
  const void* owner = nullptr;  // the pool's allocator that made the block, for MemoryPool.release

 protected:
  ~block_record() = default;  // deleted by the allocator that made it (forget_block first)
};

// Makes a PooledBuffer type as a subclass of `buffer_type` (pyopencl.Buffer), once per flavour:
// clpool.pyopencl.PooledBuffer, or with `pycuda_methods` clpool.pycuda.PooledDeviceAllocation,
// which adds PyCUDA's free(), len() (the requested size) and int() (the cl_mem handle); those
// stay off the PyOpenCL flavour, where len() would make PyOpenCL's Buffer look like a sequence.
// Returns a borrowed reference, or nullptr with a Python exception set when pyopencl.Buffer cannot
// be subclassed with its own layout (or CLPOOL_PYTHON_BINDING is bad).
PyTypeObject* install_pooled_buffer_type(PyObject* buffer_type, bool pycuda_methods);

// "pybind11", "nanobind" or "generic" (python/foreign_binding.h) once a type was installed, else
// nullptr; `detail` gets what was found.
const char* pooled_buffer_binding(std::string* detail);

// The flavour's type, or nullptr before install_pooled_buffer_type made it.
PyTypeObject* pooled_buffer_type(bool pycuda_methods);
bool is_pooled_buffer_type(PyTypeObject* type);

// A new reference to a PooledBuffer of `type` wrapping `mem` (retained by the object) for
// `record`, which must have no object yet; sets record->object (borrowed) and registers the
// pair. nullptr with a Python exception set on failure.
PyObject* make_pooled_buffer(PyTypeObject* type, void* mem, block_record* record);

// Called by the allocator when the pool frees `record`'s block to the device: drops the record's
// own reference to an object it owns (in_pool), or detaches an object a user still holds
// (released_by_user), which then dies as a plain Buffer.
void forget_block(block_record* record) noexcept;

// The `owner` of the block `object` is tied to, or nullptr when it is tied to none (not a
// PooledBuffer, or one whose block the pool freed).
const void* pooled_buffer_owner(PyObject* object) noexcept;

// Objects currently tied to a block (for tests and statistics).
std::size_t pooled_buffer_objects() noexcept;

}  // namespace clpool::python

#endif  // CLPOOL_PYTHON_POOLED_BUFFER_TYPE_H_
