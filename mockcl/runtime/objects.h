// The structs behind every OpenCL handle the mock hands out. Internal to //mockcl.
//
// Every handle's first member is the dispatch pointer (the ICD loader calls
// handle->dispatch->clX without checks), so each struct derives from Object, which has no
// virtual functions and keeps `dispatch` at offset 0.
#ifndef MOCKCL_RUNTIME_OBJECTS_H_
#define MOCKCL_RUNTIME_OBJECTS_H_

#include <CL/cl_icd.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "device_model/device_memory.h"
#include "mockcl/api/mem_flags.h"
#include "mockcl/compiler/kernel_signature.h"
#include "mockcl/runtime/host_memory.h"
#include "mockcl/runtime/rect.h"
#include "mockcl/runtime/snapshot.h"

namespace mockcl {

enum class object_type : uint32_t {
  none = 0,
  platform = 0x4d4f4301,
  device,
  context,
  queue,
  mem,
  event,
  program,
  kernel,
  sampler,
};

// "mem", "queue", ... (snapshot keys and messages).
inline const char* type_name(object_type t) {
  switch (t) {
    case object_type::platform:
      return "platform";
    case object_type::device:
      return "device";
    case object_type::context:
      return "context";
    case object_type::queue:
      return "queue";
    case object_type::mem:
      return "mem";
    case object_type::event:
      return "event";
    case object_type::program:
      return "program";
    case object_type::kernel:
      return "kernel";
    case object_type::sampler:
      return "sampler";
    default:
      return "none";
  }
}

// Lifetime, in three counts:
// - `refs`: the application's references (clCreate*, clRetain*, clRelease*).
// - `holds`: references other objects hold on it as the OpenCL object graph says: a queue holds
//   its context, a buffer its context, a sub-buffer its buffer, a program its context, a kernel
//   its program, an event its queue and context. Like the application's, they keep the handle
//   valid: an application may release its context and go on using it through its queue's
//   CL_QUEUE_CONTEXT, as it may on every real driver. CL_*_REFERENCE_COUNT is refs + holds.
// - `internal`: the runtime's own (commands in flight hold their buffers and kernels, a queue its
//   last command): they keep the object, not the handle.
// When refs and holds are both 0 the handle is `released` (quarantined: using it is reported and
// refused; releasing it again is a double release); when all three are 0 the object is destroyed
// and its slot retired to its slab. The application cannot release a hold: a release with no
// application reference left is a double release even while the object is held.
struct object_header {
  const cl_icd_dispatch* dispatch = nullptr;
  object_type type = object_type::none;
  bool in_use = false;    // Between acquire and destruction.
  bool released = false;  // The application dropped its last reference.
  uint32_t refs = 0;
  uint32_t holds = 0;
  uint32_t internal = 0;
  uint64_t id = 0;  // Unique over the process lifetime (slots are reused, ids are not).
  object_header* link = nullptr;  // Slab free list (only while the slot is free).
};

}  // namespace mockcl

struct _cl_platform_id : mockcl::object_header {};

struct _cl_device_id : mockcl::object_header {
  int index = 0;        // Index into the runtime's device table.
  bool active = false;  // False once reconfiguration removed it.
};

struct _cl_context : mockcl::object_header {
  std::vector<cl_device_id> devices;
  std::vector<cl_context_properties> properties;
  uint64_t outstanding = 0;
  uint64_t peak = 0;
  uint64_t live_children = 0;  // Queues, mems, programs, SVM blocks created in it and alive.
  // Cached at creation (devices cannot be reconfigured while a context lives), so
  // clCreateBuffer does not walk `devices`: the device charged (and whether its semantics charge
  // at creation), and the smallest max alloc.
  int device0 = 0;
  bool charge_at_create = true;  // device0's semantics are not deferred.
  uint64_t max_alloc = 0;
  void(CL_CALLBACK* notify)(const char*, const void*, size_t, void*) = nullptr;
  void* notify_data = nullptr;
  // clSetContextDestructorCallback: run last-registered first when the context is destroyed.
  std::vector<std::pair<void(CL_CALLBACK*)(cl_context, void*), void*>> destructors;
  cl_context pocl_ctx = nullptr;      // Backing mode: POCL's twin (lazy), and a queue of it for
  cl_command_queue pocl_q = nullptr;  // creation-time transfers.
  // What the context itself holds on its devices (device_config::context_cost), given back when
  // it is destroyed.
  struct device_charge {
    int device = 0;
    uint64_t bytes = 0;
    clpool::device_model::placement where;
  };
  std::vector<device_charge> own_memory;
};

struct _cl_command_queue : mockcl::object_header {
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  cl_command_queue_properties properties = 0;
  // clCreateCommandQueueWithProperties' list as given, terminator included (empty: none given),
  // for CL_QUEUE_PROPERTIES_ARRAY.
  std::vector<cl_queue_properties> properties_array;
  bool out_of_order = false;
  cl_event last = nullptr;            // In-order: last enqueued command (internal ref).
  cl_event last_barrier = nullptr;    // Out-of-order: last barrier (internal ref).
  uint64_t busy_until = 0;            // Virtual time the queue's engine is next free.
  cl_command_queue pocl_q = nullptr;  // Backing mode: POCL's twin (lazy).
};

struct mem_destructor {
  void(CL_CALLBACK* fn)(cl_mem, void*);
  void* data;
};

namespace mockcl {
// A mapping on a maps=copy device: the host's own copy of [offset, offset + size) of a buffer.
struct host_mapping {
  void* at = nullptr;  // What clEnqueueMap{Buffer,Image} returned: copy's bytes, or, for an
                       // object made with CL_MEM_USE_HOST_PTR, its host memory (OpenCL
                       // requires a pointer derived from host_ptr).
  host_block copy;     // The host's own copy (empty when `at` is the host memory).
  size_t offset = 0;   // In the mapped mem object.
  size_t size = 0;
  cl_map_flags flags = 0;
  bool active = false;     // Its map command has executed (and its unmap has not).
  bool unmapping = false;  // An unmap naming it was enqueued.
  // Backing mode on a maps=shared device: `at` is POCL's own mapping of the buffer's twin (its
  // device is the CPU: the buffer's bytes, no copy), mapped at the enqueue, unmapped on POCL when
  // the unmap executes (maps.cc, map_backing).
  bool backing = false;
  // A mapped image (backing mode): the region, and the copy's pitches (tight rows and slices).
  bool image = false;
  size_t origin[3] = {}, region[3] = {};
  size_t row_pitch = 0, slice_pitch = 0;
};
}  // namespace mockcl

namespace mockcl {
// CL_DEVICE_MEM_BASE_ADDR_ALIGN, which OpenCL gives in bits: a sub-buffer's origin must be a
// multiple of it in bytes (128).
inline constexpr cl_uint kMemBaseAddrAlignBits = 1024;
}  // namespace mockcl

struct _cl_mem : mockcl::object_header {
  cl_context context = nullptr;
  cl_mem_flags flags = 0;
  size_t size = 0;
  void* host_ptr = nullptr;  // CL_MEM_USE_HOST_PTR: the application's memory.
  cl_mem parent = nullptr;   // Sub-buffer: its buffer (internal ref), at `offset`.
  size_t offset = 0;
  int device = -1;  // Device charged for it; -1: not charged (deferred, unused).
  clpool::device_model::placement where;  // What the charge took on that device.
  bool pinned = false;  // Charged to the host-pinned budget instead of device memory.
  uint32_t map_count = 0;
  std::vector<mockcl::host_mapping> maps;  // maps=copy mappings of this object (not its family).
  // maps=shared in none mode: the pointers its maps returned (into the mock's bytes), each until
  // its unmap; an unmap must name one of them (OpenCL: "a pointer returned by a map").
  std::vector<void*> shared_maps;
  uint32_t write_mapped = 0;   // Root buffer: active copy mappings for writing in its family;
  uint32_t read_mapped = 0;    // and for reading only.
  uint64_t last_use_end = 0;   // Virtual end of the last executed command that used it.
  mockcl::host_block backing;  // Lazily allocated bytes (not for sub-buffers/USE_HOST_PTR).
  std::vector<mem_destructor> destructors;
  cl_mem pocl_mem = nullptr;  // Backing mode: POCL's twin, made at first use (zero-filled).
  // clCreateBufferWithProperties was given a (necessarily empty) property list: CL_MEM_PROPERTIES
  // answers {0}. Holds that buffer's id, so a reused slot (a new id) reads as "not given" without
  // the express create path resetting a field.
  uint64_t properties_given_for = 0;
  // Backing mode: an image (api_image.cc) when `image_for` is this object's id (as above: a reused
  // slot reads as a buffer). Its POCL twin is made at creation; `size` is what it is charged:
  // width * height * depth * array size * element size.
  uint64_t image_for = 0;
  cl_image_format format{};
  cl_image_desc desc{};
  size_t element_size = 0;
  bool is_image() const { return image_for == id; }
};

// A sampler (backing mode only: samplers exist where images do). It holds its context.
struct _cl_sampler : mockcl::object_header {
  cl_context context = nullptr;
  cl_bool normalized = CL_TRUE;
  cl_addressing_mode addressing = CL_ADDRESS_CLAMP;
  cl_filter_mode filter = CL_FILTER_NEAREST;
  std::vector<cl_sampler_properties> properties;  // As given to WithProperties (terminator kept).
  cl_sampler pocl_sampler = nullptr;              // POCL's twin, made at creation.
};

namespace mockcl {
// A clSVMAlloc block.
struct svm_allocation {
  uint64_t id = 0;
  size_t size = 0;
  cl_context context = nullptr;  // Internal ref.
  int device = 0;
  clpool::device_model::placement where;  // what its charge took on the device
  host_block block;
  void* pocl_svm =
      nullptr;  // Backing mode: the block is POCL's SVM allocation instead (backing.h).
  void* data() const { return pocl_svm ? pocl_svm : block.data(); }
  uint32_t pending = 0;  // Commands in flight that use it.
  bool freed = false;    // clSVMFree or an executed clEnqueueSVMFree asked for it.
  bool charged = true;   // Its bytes are charged (false until its first use: svm_oom_at=first_use).
  bool free_enqueued = false;
  uint64_t last_use_end = 0;  // Virtual end of the last executed command that used it.
};
}  // namespace mockcl

struct kernel_arg {
  bool set = false;
  cl_mem mem = nullptr;  // A buffer argument (not a reference: the launch takes one).
  void* svm = nullptr;   // An SVM pointer argument.
  size_t size = 0;       // Backing mode: the value as given (null value: empty, e.g. local memory).
  std::vector<unsigned char> value;
  // Backing mode: a sampler argument (not a reference; a launch's copy holds an internal one, so
  // POCL's sampler outlives the command however early the application releases it).
  cl_sampler sampler = nullptr;
  // Set by clSetKernelArgSVMPointer, whose pointer (svm) may be NULL: the launch passes it on as an
  // SVM pointer, not as a value.
  bool svm_arg = false;
};

struct event_callback {
  cl_int type;
  void(CL_CALLBACK* fn)(cl_event, cl_int, void*);
  void* data;
};

// Commands and user events share this struct: a command's handle is its event.
struct _cl_event : mockcl::object_header {
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;  // Null for user events (internal ref otherwise).
  cl_command_type command_type = 0;
  cl_int status = CL_QUEUED;
  uint64_t queued = 0, submitted = 0, started = 0, ended = 0;  // The virtual clock's.
  // Backing mode, a command on a profiling queue: QUEUED, SUBMIT, START and END on the real clock
  // POCL's events use (pocl_clock_ns, backing.h), START and END POCL's own for a command POCL ran;
  // clGetEventProfilingInfo answers them. All 0 otherwise.
  uint64_t real[4] = {};
  uint64_t command_id = 0;
  const char* kind = "";
  std::vector<cl_event> deps;  // Internal refs; the first `explicit_deps` came from a wait list.
  size_t explicit_deps = 0;
  std::vector<cl_mem> mems;  // Internal refs, dropped at completion.
  std::vector<mockcl::live_svm_range> svm;
  std::vector<event_callback> callbacks;
  cl_int fault_status = 0;  // Nonzero: an injected execution failure.
  // Payload of data-moving commands.
  void* host = nullptr;       // read: destination; write: source; SVM memcpy/fill: destination.
  const void* src = nullptr;  // SVM memcpy: source.
  bool svm_counted = false;   // `svm` ranges hold a pending use on their blocks.
  bool to_host = false;       // A migration to the host: charges nothing.
  size_t offset = 0, bytes = 0, src_offset = 0;
  // Rect transfers: the region, and the source and destination sides (the host's side of a read
  // or write too), pitches normalized at the enqueue.
  size_t region[3] = {};
  mockcl::rect_side rect_src, rect_dst;
  std::vector<unsigned char> pattern;  // fill, or the copied source of a non-blocking write.
  std::vector<void*> svm_free;         // svm_free: pointers to free.
  void(CL_CALLBACK* svm_free_fn)(cl_command_queue, cl_uint, void**, void*) = nullptr;
  void* svm_free_data = nullptr;
  // Backing mode, kernel launches: the kernel (internal ref) and its arguments and sizes as they
  // were at the enqueue; POCL gets them when the command executes.
  cl_kernel kernel = nullptr;
  std::vector<kernel_arg> args;
  cl_uint dims = 0;
  size_t work[9] = {};  // offset[3], global[3], local[3]
  bool has_offset = false, has_local = false;
};

struct _cl_program : mockcl::object_header {
  cl_context context = nullptr;
  std::string source;
  std::string options;
  std::vector<std::string> kernel_names;
  bool built = false;
  bool compiled = false;  // clCompileProgram succeeded: an input clLinkProgram takes
  // clCreateProgramWithSource: its kernels' signatures are read at build (kernel_signature.h), in
  // both modes. A program from a binary or IL has none (its kernels take any argument).
  bool from_source = false;
  bool build_failed = false;  // No backing device: the signature reader refused the source.
  std::string build_log;      // Its message (no backing device).
  std::vector<mockcl::kernel_signature> signatures;
  uint32_t kernels = 0;            // Live kernels (they keep the program).
  cl_program pocl_prog = nullptr;  // Backing mode: POCL's twin.
};

struct _cl_kernel : mockcl::object_header {
  cl_program program = nullptr;  // Internal ref.
  std::string name;
  std::vector<kernel_arg> args;
  // Its signature from the source, when known: clSetKernelArg's checks and, with no backing
  // device, CL_KERNEL_NUM_ARGS and clGetKernelArgInfo.
  bool has_sig = false;
  mockcl::kernel_signature sig;
  // Its work-group limits, for clEnqueueNDRangeKernel's checks: the device's maximum, or in
  // backing mode POCL's CL_KERNEL_WORK_GROUP_SIZE and reqd_work_group_size (all 0: none), read
  // once at creation.
  size_t max_work_group = 0;
  size_t reqd_work_group[3] = {0, 0, 0};
  // Whether global sizes must be multiples of local sizes: the device has no non-uniform
  // work-groups, the program is OpenCL C before 2.0, or it was built -cl-uniform-work-group-size.
  bool uniform_work_groups = true;
  cl_kernel pocl_kernel = nullptr;  // Backing mode: POCL's twin.
};

#endif  // MOCKCL_RUNTIME_OBJECTS_H_
