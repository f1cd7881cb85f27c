// mock_runtime: the one process-wide state of the mock (devices, objects, accounting, scheduler,
// faults, logs) behind one lock. Internal to //mockcl; the entry points in api_*.cc and the
// control API are its only users.
//
// Why one lock: entry points are short and the loader gives no per-object affinity; a single
// lock keeps the accounting exact and makes the runtime trivially race-free (checked under
// TSAN). It is biased to the first calling thread (see Lock), so a single-threaded client pays
// no atomic read-modify-write. User callbacks never run under it (see Call).
#ifndef MOCKCL_RUNTIME_RUNTIME_H_
#define MOCKCL_RUNTIME_RUNTIME_H_

#include <CL/cl_icd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device_model/device_memory.h"
#include "mockcl/api/entry_points.h"
#include "mockcl/api/info.h"  // set_info, which every entry point that answers a query uses
#include "mockcl/backing/backing.h"
#include "mockcl/config/config.h"
#include "mockcl/runtime/call_log.h"
#include "mockcl/runtime/device_state.h"
#include "mockcl/runtime/fault_injector.h"
#include "mockcl/runtime/free_records.h"
#include "mockcl/runtime/host_memory.h"
#include "mockcl/runtime/object_registry.h"
#include "mockcl/runtime/objects.h"
#include "mockcl/runtime/scheduler.h"
#include "mockcl/runtime/snapshot.h"
#include "sync/biased_lock.h"

namespace mockcl {

inline constexpr int kMaxDevices = 16;

// The runtime's one lock. Biased towards the first thread that calls in: while no other thread
// has, taking and dropping it are plain stores and loads (no atomic read-modify-write), which is
// most of a create+release pair's cost otherwise. The first other thread revokes the bias for
// the process's lifetime (one membarrier); from then on it is a spin lock. See sync/biased_lock.h.
using runtime_lock = clpool::detail::biased_lock;

// Bounds on what the runtime records, so a long run cannot exhaust memory.
inline constexpr size_t kMaxCommandRecords = 1u << 20;  // Command and free records.
inline constexpr size_t kMaxLogLines = 1u << 20;        // Call-log lines kept in memory.
inline constexpr size_t kMaxMessages = 256;             // Report messages (oldest dropped).

class mock_runtime {
 public:
  // The runtime of this process (of this copy of the library: the ICD .so has its own).
  // The runtime if it is initialised, else null (express paths: no initialisation call).
  static mock_runtime* get_if_ready() { return instance_.load(std::memory_order_acquire); }
  static mock_runtime& get() {
    mock_runtime* r = instance_.load(std::memory_order_acquire);
    return r ? *r : init();
  }

  // RAII for one entry-point call (call.h).
  class api_call;

  // ---- Configuration (lock held by caller where noted "locked") ----
  // False if the environment was invalid: the platform is then refused.
  bool platform_ok();
  // Replace devices/faults/schedule/call log. Errors as text; "" on success.
  std::string configure_devices(const std::vector<device_config>& d);
  std::string configure_faults(const std::vector<fault_rule>& f, bool append);
  std::string configure_schedule(const schedule_config& s);
  std::string configure_call_log(const std::string& path);
  // Destroys every object (stale handles become quarantined) and restores the configuration
  // read at platform init; zeroes counters, logs, reports and peaks.
  void reset();
  accounting_snapshot snapshot();
  uint64_t object_id(const void* handle);

  // ---- Everything below: lock held ----
  runtime_lock mu;
  std::condition_variable_any cv;  // Signalled whenever a command completes or a user event is set.

  _cl_platform_id platform;
  std::array<_cl_device_id, kMaxDevices> device_handles;
  std::vector<device_state> devices;
  command_scheduler scheduler;  // The virtual clock and the commands not yet executed.
  const cl_icd_dispatch* table = nullptr;

  object_registry objects;  // Every handle but the platform and devices.
  std::map<uintptr_t, svm_allocation> svm;

  // ---- Express paths (lock NOT held; express_paths.h): clCreateBuffer and clReleaseMemObject ----
  [[gnu::always_inline]] inline _cl_mem* create_buffer_express(cl_context h, cl_mem_flags flags,
                                                               size_t size, const void* host_ptr);
  [[gnu::always_inline]] inline bool release_mem_express(cl_mem h);

  // Validation: the object if `h` is a live handle of the type; reports use after release.
  // O(1): a handle is a slot that stays readable (slab.h), so its type and state are checked.
  _cl_device_id* device(cl_device_id h);
  _cl_context* context(cl_context h) { return check(h, "context"); }
  _cl_command_queue* queue(cl_command_queue h) { return check(h, "queue"); }
  _cl_mem* mem(cl_mem h) { return check(h, "mem"); }
  _cl_event* event(cl_event h) { return check(h, "event"); }
  _cl_program* program(cl_program h) { return check(h, "program"); }
  _cl_kernel* kernel(cl_kernel h) { return check(h, "kernel"); }
  _cl_sampler* sampler(cl_sampler h) { return check(h, "sampler"); }

  // Fills a new buffer's fields (its slot comes from objects.create) and takes an internal
  // reference on its context. `device`: the device charged, or -1 when nothing is charged yet
  // (deferred).
  void init_buffer(_cl_mem* m, _cl_context* ctx, cl_mem_flags flags, size_t size, void* host_ptr,
                   int device, bool pinned) {
    m->context = ctx;
    m->flags = flags ? flags : CL_MEM_READ_WRITE;
    m->size = size;
    m->host_ptr = (flags & CL_MEM_USE_HOST_PTR) ? host_ptr : nullptr;
    m->parent = nullptr;
    m->offset = 0;
    m->device = device;
    m->pinned = pinned;
    m->map_count = 0;
    m->shared_maps.clear();  // a reused slot keeps its fields (object_registry.h)
    m->last_use_end = 0;
    hold(ctx);
  }
  // clRelease*: quarantines on the last reference; reports double release (also of an object
  // only other objects still hold: the application has no reference left to drop).
  cl_int release(object_header* o, cl_int invalid_status) {
    if (!o || o->released || !o->in_use || o->refs == 0) [[unlikely]]
      return release_invalid(o, invalid_status);
    if (--o->refs > 0 || o->holds > 0) return CL_SUCCESS;
    unreferenced(o);
    return CL_SUCCESS;
  }
  // clReleaseMemObject's release: release() with the buffer's destruction inlined.
  [[gnu::always_inline]] cl_int release_mem(_cl_mem* m) {
    if (!m || m->released || !m->in_use || m->refs == 0) [[unlikely]]
      return release_invalid(m, CL_INVALID_MEM_OBJECT);
    if (--m->refs > 0 || m->holds > 0) return CL_SUCCESS;
    m->released = true;
    if (m->internal == 0) destroy_mem_inline(m);
    return CL_SUCCESS;
  }
  // An edge of the object graph (objects.h): `o` stays valid while a dependent holds it.
  void hold(object_header* o) { ++o->holds; }
  void drop_hold(object_header* o) {
    if (--o->holds == 0 && o->refs == 0) unreferenced(o);
  }
  void retain_internal(object_header* o) { ++o->internal; }
  void release_internal(object_header* o) {
    if (--o->internal == 0 && o->released) destroy(o);
  }
  // The handle `h` if it is a live object of its type (reports use after release), else null.
  template <typename T>
  T* live(T* h) {
    return check(h, type_name(object_registry::type_of<T>()));
  }

  // Charges `bytes` to a device (and context); returns 0 or the device's OOM status. `where`
  // receives what the charge took, for credit().
  cl_int charge(int dev, _cl_context* ctx, uint64_t bytes, bool pinned,
                clpool::device_model::placement& where) {
    return pinned ? charge_to<true>(dev, ctx, bytes, where)
                  : charge_to<false>(dev, ctx, bytes, where);
  }
  // kFaults false: the caller knows no fault rule is installed (the express create path).
  template <bool kPinned, bool kFaults = true>
  cl_int charge_to(int dev, _cl_context* ctx, uint64_t bytes,
                   clpool::device_model::placement& where) {
    device_state& d = devices[dev];
    clpool::device_model::device_memory& memory = kPinned ? d.pinned : d.memory;
    if (!kPinned && kFaults && !faults_.empty()) [[unlikely]] {
      // An injected failure fires only for a request that would otherwise fit.
      if (!memory.fits(bytes)) return oom_status(d);
      if (cl_int f = charge_fault(d, bytes)) return f;
    }
    if (!memory.try_commit(bytes, where)) [[unlikely]]
      return oom_status(d);
    if (ctx) {
      ctx->outstanding += bytes;
      if (ctx->outstanding > ctx->peak) ctx->peak = ctx->outstanding;
    }
    return CL_SUCCESS;
  }
  void credit(int dev, _cl_context* ctx, uint64_t bytes, bool pinned,
              const clpool::device_model::placement& where) {
    device_state& d = devices[dev];
    if (pinned) [[unlikely]]
      d.pinned.release(where, bytes);
    else
      d.memory.release(where, bytes);
    if (ctx) ctx->outstanding -= bytes;
  }
  // Deferred semantics: charges the root buffer of m to q's device at first use. On a device with
  // oom_at=execution it charges nothing at the enqueue: the command charges when it executes
  // (`at_execution`, charge_at_execution).
  cl_int use_mem(_cl_mem* m, _cl_command_queue* q, bool at_execution = false);
  // The same for an SVM block on a device with svm_oom_at=first_use: charges it at the first
  // command that uses it (at the enqueue, whatever oom_at says). CL_SUCCESS when already charged.
  cl_int use_svm(svm_allocation* b, _cl_command_queue* q);
  // use_mem of a copy's source and destination, all or nothing (use_scope.h).
  cl_int use_mems(_cl_mem* src, _cl_mem* dst, _cl_command_queue* q);
  // Gives back a charge use_mem / use_svm made, for a call that then failed (nothing queued).
  void unuse_mem(_cl_mem* m);
  void unuse_svm(svm_allocation* b);
  // Real bytes of a buffer (allocated lazily), or nullptr if the host refused.
  unsigned char* bytes_of(_cl_mem* m);
  svm_allocation* find_svm(const void* p);

  // ---- maps=copy mappings (maps.cc) ----
  // A new mapping of m's [offset, offset + size) with its own zeroed host copy; its address, or
  // nullptr if the host refused. Inactive until execute_map().
  // `at`: where the mapping lives instead of a copy of its own (the memory of an object made
  // with CL_MEM_USE_HOST_PTR; use_host_ptr_at()).
  void* map_copy(_cl_mem* m, cl_map_flags flags, size_t offset, size_t size, void* at = nullptr);
  // Backing mode, a maps=shared device: a new mapping of m's [offset, offset + size) that is POCL's
  // own mapping of the twin (the buffer's bytes: no copy at the map nor at the unmap); nullptr
  // with `err` set if POCL refuses.
  void* map_backing(_cl_mem* m, cl_map_flags flags, size_t offset, size_t size, cl_int& err);
  // The address of m's byte `offset` in its CL_MEM_USE_HOST_PTR memory (a sub-buffer's in its
  // buffer's); nullptr when m was not made with one.
  static unsigned char* use_host_ptr_at(const _cl_mem* m, size_t offset);
  // Forgets the mapping at `p` (a failed map, or an executed unmap).
  void cancel_map(_cl_mem* m, const void* p);
  // Marks the mapping at `p` as being unmapped; false if m has no such mapping (or it is already
  // being unmapped).
  bool begin_unmap(_cl_mem* m, const void* p);
  // A map command (ev->host: its mapping) executes: copies the buffer's bytes to the host copy
  // (not for CL_MAP_WRITE_INVALIDATE_REGION); an unmap executes: copies a write mapping back.
  // Each returns the command's status (the backing device's, or CL_OUT_OF_HOST_MEMORY).
  cl_int execute_map(_cl_event* ev);
  cl_int execute_unmap(_cl_event* ev);
  // Reports (misuse_reports::used_while_mapped) a command that starts while a buffer it uses is
  // mapped against it.
  void check_mapped_use(const _cl_event* ev);
  // A buffer is destroyed with mappings left.
  [[gnu::cold]] void drop_mappings(_cl_mem* m);
  // A map_backing mapping goes (its unmap executed, its map failed, its buffer destroyed): POCL
  // unmaps it. Nothing for any other mapping.
  void unmap_backing(_cl_mem* m, host_mapping& mp);
  void free_svm_now(std::map<uintptr_t, svm_allocation>::iterator it);

  // ---- Backing device (backing.cc) ----
  // Non-null in backing mode (MOCKCL_BACKING=pocl, or not given and POCL loadable): POCL runs
  // kernels and holds buffer bytes. Fixed while contexts live.
  pocl_library* pocl = nullptr;
  // Sets the mode (refused while contexts live); pocl loads POCL now (an error if it cannot).
  std::string configure_backing(backing_mode mode, const std::string& icd);
  // At context creation: a automatic mode becomes pocl if POCL's ICD loads, else none.
  void settle_backing() {
    if (!backing_settled_) [[unlikely]]
      settle_backing_slow();
  }
  // POCL twins, made lazily; null with `err` set if POCL refuses. A buffer's is zero-filled.
  cl_context pocl_context(_cl_context* c, cl_int& err);
  cl_command_queue pocl_queue(_cl_command_queue* q, cl_int& err);
  cl_mem pocl_buffer(_cl_mem* m, cl_int& err);
  // At creation of a buffer with COPY_HOST_PTR / USE_HOST_PTR: its twin, from the host memory.
  cl_int pocl_init_buffer(_cl_mem* m, void* host_ptr);
  // Blocking read or write of m's [offset, offset + n) through q's twin.
  // `pe`, if not null, gets POCL's event of the transfer (the caller releases it).
  cl_int pocl_transfer(_cl_mem* m, _cl_command_queue* q, bool write, size_t offset, size_t n,
                       void* host, cl_event* pe = nullptr);
  // Whether POCL runs commands of this type (the others stay host-side: SVM, maps, markers).
  static bool pocl_runs(cl_command_type t);
  // Runs a command on POCL and waits for it; its status.
  // `pe`, if not null, gets POCL's event of the command's work where there is one (the caller
  // releases it): its START and END are the command's (a profiling queue's twin profiles).
  cl_int pocl_execute(_cl_event* ev, cl_event* pe = nullptr);
  // pocl_execute's rectangle commands and kernel launches, each finished on POCL's queue `pq`.
  cl_int pocl_rect(_cl_event* ev, cl_command_queue pq, cl_event* pe);
  cl_int pocl_kernel(_cl_event* ev, cl_command_queue pq, cl_event* pe);
  // Images and samplers (backing_image.cc): their twins, made at creation (`buffer`: the mock
  // buffer an image is made on, or null); a blocking image read or write through q's twin (maps);
  // and the image commands POCL runs.
  cl_mem pocl_create_image(_cl_context* ctx, cl_mem_flags flags, const cl_image_format* format,
                           const cl_image_desc* desc, _cl_mem* buffer, void* host_ptr, cl_int& err);
  cl_sampler pocl_create_sampler(_cl_context* ctx, const cl_sampler_properties* props, cl_int& err);
  cl_int pocl_image_rw(_cl_mem* m, _cl_command_queue* q, bool write, const size_t origin[3],
                       const size_t region[3], size_t row_pitch, size_t slice_pitch, void* host);
  static bool is_image_command(cl_command_type t);
  cl_int pocl_image_command(_cl_event* ev, cl_command_queue pq);
  // Releases o's twin (its destruction).
  void pocl_drop(object_header* o);
  // Backing mode SVM: a zeroed block of POCL's SVM in ctx's twin, or null; and its free.
  void* pocl_svm_alloc(_cl_context* ctx, cl_svm_mem_flags flags, size_t size, cl_uint alignment);
  void pocl_svm_free(_cl_context* ctx, void* p);

  // ---- Scheduler (scheduler.cc) ----
  // Validates a wait list; returns 0 or CL_INVALID_EVENT_WAIT_LIST / CL_INVALID_CONTEXT.
  cl_int check_wait_list(cl_uint n, const cl_event* list, _cl_context* ctx);
  // A new command on q with the given wait list. Its exec fault is decided here.
  _cl_event* new_command(_cl_command_queue* q, cl_command_type type, const char* kind,
                         entry_point e, cl_uint n, const cl_event* wait);
  // Makes the command visible to the scheduler; runs it in eager mode. If `out` is non-null
  // the application gets a reference to the event.
  void submit(_cl_event* ev, cl_event* out);
  // The commands of q not yet executed, each with an internal reference for the caller.
  std::vector<_cl_event*> pending_on(_cl_command_queue* q);
  // Runs every command that can run, in deterministic order.
  void run();
  // Blocks until all events are complete (running the scheduler); returns the worst status.
  cl_int wait(runtime_lock& lk, const std::vector<_cl_event*>& evs);
  // Sets an event's status and queues its callbacks.
  void set_status(_cl_event* ev, cl_int status);
  // Queues a user callback to run after the lock is dropped.
  void defer(std::function<void()> f) {
    callbacks_.push_back(std::move(f));
    finish_slow_ = true;
  }

  // ---- Reports and logging ----
  void report_use_after_release(const object_header* o, const char* what);
  void report(const std::string& message);
  // Counts a double release/free that has no handle to name.
  void note_double_release(const std::string& message) {
    ++reports_.double_release;
    report(message);
  }
  uint64_t leaked_at_context_release = 0;
  bool log_enabled() const { return log_.on(); }
  // True while a call log or a fault rule is installed (see hooks_).
  bool hooks() const { return hooks_; }
  void log_line(const std::string& line);
  void record(const command_record& r);
  // Called by the ICD at process exit: reports live objects on stderr and in the call log.
  void report_exit();
  uint64_t live(object_type t) const { return objects.live(t); }

 private:
  friend class api_call;
  mock_runtime();
  static mock_runtime& init();
  static std::atomic<mock_runtime*> instance_;
  call_recorder log_{kMaxLogLines};
  // the log is on || callbacks_ not empty: a Call's end has more to do than unlock (one branch).
  bool finish_slow_ = false;
  // the log is on || fault rules installed: entry points that check hooks() take their instrumented
  // path (fault checks, logged arguments) only then.
  bool hooks_ = false;
  void update_flags() {
    finish_slow_ = log_.on() || !callbacks_.empty();
    hooks_ = log_.on() || !faults_.empty();
  }
  // The fault rules' verdict on this call / charge, reported when one fires (else 0).
  cl_int call_fault(entry_point e) {
    std::string what;
    const cl_int s = faults_.on_call(e, what);
    if (s != 0) report(what);
    return s;
  }
  cl_int charge_fault(const device_state& d, uint64_t bytes) {
    std::string what;
    const cl_int s = faults_.on_charge(d.memory.committed(), bytes, oom_status(d), what);
    if (s != 0) report(what);
    return s;
  }
  static cl_int oom_status(const device_state& d) {
    return d.cfg.semantics == alloc_semantics::host_oom ? CL_OUT_OF_HOST_MEMORY
                                                        : d.cfg.model.oom_status;
  }
  [[gnu::cold]] cl_int release_invalid(object_header* o, cl_int invalid_status);
  [[gnu::cold]] void count_leaks(_cl_context* ctx);
  // Neither the application nor another object references `o` any more: its handle is released,
  // and the object goes once the runtime's own references have too.
  void unreferenced(object_header* o) {
    o->released = true;
    if (o->type == object_type::context) [[unlikely]]
      count_leaks(static_cast<_cl_context*>(o));
    if (o->internal == 0) destroy(o);
  }
  // Destroys an object whose references (application and internal) are all gone. Buffers, the
  // hot case, go straight to destroy_mem.
  void destroy(object_header* o) {
    if (o->type == object_type::mem)
      destroy_mem(static_cast<_cl_mem*>(o));
    else
      destroy_other(o);
  }
  void destroy_other(object_header* o);
  void destroy_mem(_cl_mem* m);  // Out of line: destroy_mem_inline for every caller but one.
  // The create+release benchmark's path: a buffer's last reference goes and nothing uses it.
  [[gnu::always_inline]] void destroy_mem_inline(_cl_mem* m) {
    objects.forget(m);
    record_free(false, m->id, 0, m->device >= 0 ? m->size : 0, m->last_use_end);
    m->last_use_end = 0;
    if (m->device >= 0) credit(m->device, m->context, m->size, m->pinned, m->where);
    m->device = -1;
    m->backing.reset();
    if (!m->maps.empty()) [[unlikely]]
      drop_mappings(m);  // Before the twin goes: POCL unmaps.
    if (m->pocl_mem) [[unlikely]]
      pocl_drop(m);
    if (!m->destructors.empty()) [[unlikely]]
      defer_destructors(m);
    if (m->parent) [[unlikely]]
      drop_hold(m->parent);
    m->parent = nullptr;
    drop_hold(m->context);
    objects.retire(m);
  }
  [[gnu::cold, gnu::noinline]] void defer_destructors(_cl_mem* m);
  void apply(const runtime_config& c);
  void execute(_cl_event* ev);
  // execute()'s parts: the command's status (its dependencies, an injected fault, the charge at
  // execution, then running it); moving its bytes on the host; a queued SVM free; its record and
  // log line; what completing it releases.
  cl_int command_status(_cl_event* ev, bool dep_failed);
  cl_int move_bytes(_cl_event* ev);
  // Backing mode, a profiled command has run: its real START and END (_cl_event::real).
  void settle_real_profile(_cl_event* ev);
  void execute_svm_free(_cl_event* ev);
  void record_command(_cl_event* ev, cl_int st);
  void complete_command(_cl_event* ev, cl_int st);
  cl_int charge_at_execution(_cl_event* ev);
  void force_destroy_all();
  template <typename T>
  T* check(T* h, const char* what) {
    switch (object_registry::state_of(h, object_registry::type_of<T>())) {
      case object_registry::handle_state::live:
        return h;
      case object_registry::handle_state::released:
        [[unlikely]] report_use_after_release(h, what);
        break;
      case object_registry::handle_state::foreign:
        break;
    }
    return nullptr;
  }

  void settle_backing_slow();
  backing_mode backing_mode_ = backing_mode::none;
  bool backing_settled_ = true;
  std::string pocl_icd_;
  std::unique_ptr<pocl_library> pocl_lib_;  // Loaded once, kept (POCL is never unloaded).
  bool env_read_ = false;
  bool env_ok_ = true;
  std::string env_error_;
  runtime_config base_;
  std::array<uint64_t, kEntryCount> calls_{};
  fault_injector faults_;
  std::vector<command_record> commands_;
  free_record_log frees_{kMaxCommandRecords};
  // `not_before`: the end of the last command that used the memory. A command that already ran
  // (eager mode) can end later, in virtual time, than the host clock at the release.
  void record_free(bool svm, uint64_t id, uint64_t address, uint64_t size, uint64_t not_before) {
    frees_.add(svm, id, address, size, std::max(scheduler.free_time(), not_before));
  }
  misuse_reports reports_;
  std::vector<std::function<void()>> callbacks_;
};

// What a mock device with SVM offers: coarse-grain buffers, and fine-grain buffers where the
// backing device has them (its SVM is the memory mockcl's blocks then live in).
inline cl_device_svm_capabilities svm_capabilities(const mock_runtime& rt) {
  return CL_DEVICE_SVM_COARSE_GRAIN_BUFFER |
         (rt.pocl ? rt.pocl->svm_caps & CL_DEVICE_SVM_FINE_GRAIN_BUFFER : 0);
}

// An image's extent on each axis as its type counts them (api_image.cc): width, then height or
// array size, then depth or array size; 1 where the type has no such axis.
void image_extent(const cl_image_desc& d, size_t out[3]);

// `s` escaped for a JSON string literal (call log).
std::string json_escape(const std::string& s);

// Slot fillers, one per concept file (api_*.cc). dispatch.cc calls them all.
void fill_platform(cl_icd_dispatch& d);
void fill_context(cl_icd_dispatch& d);
void fill_memory(cl_icd_dispatch& d);
void fill_svm(cl_icd_dispatch& d);
void fill_queue(cl_icd_dispatch& d);
void fill_enqueue(cl_icd_dispatch& d);
void fill_event(cl_icd_dispatch& d);
void fill_program(cl_icd_dispatch& d);
void fill_kernel(cl_icd_dispatch& d);
void fill_image(cl_icd_dispatch& d);
void fill_image_enqueue(cl_icd_dispatch& d);

}  // namespace mockcl

#include "mockcl/api/call.h"  // mock_runtime::api_call, which every entry point uses

#endif  // MOCKCL_RUNTIME_RUNTIME_H_
