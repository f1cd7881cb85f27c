// The deterministic scheduler: commands run on a virtual clock, one engine per queue.
//
// A command may run once its dependencies (its wait list, plus the previous command of an
// in-order queue or the last barrier of an out-of-order one) have completed. It then starts
// at max(enqueue time, its queue's engine free time, its dependencies' end times) and takes a
// fixed virtual duration, so commands on different queues overlap in virtual time exactly when
// nothing orders them: a missing dependency shows up as a start before another command's end.
// Eager mode runs the scheduler after every enqueue; lazy mode only on flush, finish, waits
// and blocking calls. Among ready commands of an out-of-order queue a seeded pick decides.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "mockcl/runtime/runtime.h"
#include "mockcl/runtime/splitmix.h"
#include "mockcl/runtime/use_scope.h"

namespace mockcl {

cl_int mock_runtime::check_wait_list(cl_uint n, const cl_event* list, _cl_context* ctx) {
  if ((n == 0) != (list == nullptr)) return CL_INVALID_EVENT_WAIT_LIST;
  for (cl_uint i = 0; i < n; ++i) {
    _cl_event* e = event(list[i]);
    if (!e) return CL_INVALID_EVENT_WAIT_LIST;
    if (ctx && e->context != ctx) return CL_INVALID_CONTEXT;
  }
  return CL_SUCCESS;
}

_cl_event* mock_runtime::new_command(_cl_command_queue* q, cl_command_type type, const char* kind,
                                     entry_point e, cl_uint n, const cl_event* wait) {
  _cl_event* ev = objects.create<_cl_event>();
  ev->context = q->context;
  hold(q->context);
  ev->queue = q;
  hold(q);
  ev->command_type = type;
  ev->status = CL_QUEUED;
  ev->queued = ev->submitted = scheduler.now;
  ev->started = ev->ended = 0;
  ev->real[0] = pocl && (q->properties & CL_QUEUE_PROFILING_ENABLE) ? pocl_clock_ns() : 0;
  ev->real[1] = ev->real[2] = ev->real[3] = 0;
  ev->command_id = scheduler.next_command_id();
  ev->kind = kind;
  ev->deps.clear();
  ev->mems.clear();
  ev->svm.clear();
  ev->callbacks.clear();
  ev->fault_status = 0;
  ev->host = nullptr;
  ev->src = nullptr;
  ev->svm_counted = false;
  ev->to_host = false;
  ev->offset = ev->bytes = ev->src_offset = 0;
  ev->pattern.clear();
  ev->svm_free.clear();
  ev->svm_free_fn = nullptr;
  ev->svm_free_data = nullptr;
  for (cl_uint i = 0; i < n; ++i) {
    ev->deps.push_back(wait[i]);
    retain_internal(wait[i]);
  }
  ev->explicit_deps = n;
  bool sync_all = (type == CL_COMMAND_MARKER || type == CL_COMMAND_BARRIER) && n == 0;
  if (sync_all) {
    // A marker or barrier without a wait list waits for everything before it on its queue.
    for (_cl_event* p : scheduler.pending())
      if (p->queue == q) {
        ev->deps.push_back(p);
        retain_internal(p);
      }
  }
  if (!q->out_of_order && q->last) {
    ev->deps.push_back(q->last);
    retain_internal(q->last);
  } else if (q->out_of_order && q->last_barrier) {
    ev->deps.push_back(q->last_barrier);
    retain_internal(q->last_barrier);
  }
  if (!faults_.empty()) ev->fault_status = faults_.on_command(e);
  return ev;
}

cl_int finish_command(mock_runtime::api_call& c, _cl_event* ev, cl_event* out, bool blocking) {
  mock_runtime& rt = c.runtime();
  c.arg("command", ev->command_id);
  if (!blocking) {
    rt.submit(ev, out);
    return CL_SUCCESS;
  }
  rt.retain_internal(ev);
  rt.submit(ev, out);
  // The command's own status: -14 when an event it waited for failed (command_status), or the
  // error the command itself ended with (-4 when its buffer could not be committed): OpenCL
  // lists CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST for a blocking call only for the events
  // of its wait list, and CL_MEM_OBJECT_ALLOCATION_FAILURE for its own memory.
  const cl_int s = rt.wait(c.lock(), {ev});
  rt.release_internal(ev);
  return s < 0 ? s : CL_SUCCESS;
}

void mock_runtime::submit(_cl_event* ev, cl_event* out) {
  _cl_command_queue* q = ev->queue;
  retain_internal(ev);  // The scheduler's reference.
  scheduler.add(ev);
  if (!q->out_of_order) {
    retain_internal(ev);
    if (q->last) release_internal(q->last);
    q->last = ev;
  } else if (ev->command_type == CL_COMMAND_BARRIER) {
    retain_internal(ev);
    if (q->last_barrier) release_internal(q->last_barrier);
    q->last_barrier = ev;
  }
  if (out) {
    *out = ev;
  } else {
    ev->refs = 0;
    ev->released = true;  // Nobody outside can name it.
  }
  if (scheduler.eager()) run();
}

std::vector<_cl_event*> mock_runtime::pending_on(_cl_command_queue* q) {
  std::vector<_cl_event*> out;
  for (_cl_event* e : scheduler.pending())
    if (e->queue == q) {
      retain_internal(e);
      out.push_back(e);
    }
  return out;
}

bool command_scheduler::ready(const _cl_event* ev) {
  for (const _cl_event* d : ev->deps)
    if (d->status > CL_COMPLETE) return false;
  return true;
}

_cl_event* command_scheduler::take_next() {
  size_t pick = pending_.size();
  for (size_t i = 0; i < pending_.size(); ++i)
    if (ready(pending_[i])) {
      pick = i;
      break;
    }
  if (pick == pending_.size()) return nullptr;
  _cl_command_queue* q = pending_[pick]->queue;
  if (q->out_of_order && config_.seed != 0) {
    std::vector<size_t> cands;
    for (size_t i = pick; i < pending_.size(); ++i)
      if (pending_[i]->queue == q && ready(pending_[i])) cands.push_back(i);
    pick = cands[splitmix(rng_) % cands.size()];
  }
  _cl_event* ev = pending_[pick];
  pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(pick));
  return ev;
}

uint64_t command_scheduler::duration(const _cl_event* ev) const {
  switch (ev->command_type) {
    case CL_COMMAND_READ_BUFFER:
    case CL_COMMAND_WRITE_BUFFER:
    case CL_COMMAND_COPY_BUFFER:
    case CL_COMMAND_FILL_BUFFER:
    case CL_COMMAND_SVM_MEMCPY:
    case CL_COMMAND_SVM_MEMFILL:
    case CL_COMMAND_READ_BUFFER_RECT:
    case CL_COMMAND_WRITE_BUFFER_RECT:
    case CL_COMMAND_COPY_BUFFER_RECT:
    case CL_COMMAND_READ_IMAGE:
    case CL_COMMAND_WRITE_IMAGE:
    case CL_COMMAND_COPY_IMAGE:
    case CL_COMMAND_FILL_IMAGE:
    case CL_COMMAND_COPY_IMAGE_TO_BUFFER:
    case CL_COMMAND_COPY_BUFFER_TO_IMAGE:
      return 1000 + ev->bytes / 16;  // ~16 GB/s plus a fixed launch cost.
    case CL_COMMAND_NDRANGE_KERNEL:
    case CL_COMMAND_TASK:
      return config_.kernel_ns;
    case CL_COMMAND_MAP_BUFFER:
    case CL_COMMAND_MAP_IMAGE:
    case CL_COMMAND_UNMAP_MEM_OBJECT:
    case CL_COMMAND_MIGRATE_MEM_OBJECTS:
    case CL_COMMAND_SVM_MAP:
    case CL_COMMAND_SVM_UNMAP:
      return 1000;
    default:
      return 0;
  }
}

void mock_runtime::run() {
  while (_cl_event* ev = scheduler.take_next()) {
    execute(ev);
    release_internal(ev);  // The scheduler's reference.
  }
}

cl_int mock_runtime::charge_at_execution(_cl_event* ev) {
  // Deferred devices with oom_at=execution charge buffers here, so a failure lands in the event.
  if (ev->to_host) return CL_SUCCESS;
  // All or nothing, as at an enqueue: a command whose second buffer does not fit gives back the
  // first, so a failed command has no effect.
  use_scope scope(*this, ev->queue, /*at_execution=*/true);
  for (cl_mem m : ev->mems) {
    if (cl_int s = scope.mem(m)) return s;
  }
  scope.keep();
  return CL_SUCCESS;
}

void mock_runtime::execute(_cl_event* ev) {
  _cl_command_queue* q = ev->queue;
  uint64_t start = std::max(ev->queued, q->busy_until);
  bool dep_failed = false;
  for (size_t i = 0; i < ev->deps.size(); ++i) {
    start = std::max(start, ev->deps[i]->ended);
    if (i < ev->explicit_deps && ev->deps[i]->status < 0) dep_failed = true;
  }
  // The virtual clock saturates rather than wrap (a kernel's END before its START): kernel_ns is
  // at most a week (kMaxKernelNs), so only some 30000 such kernels in a row could get there.
  const uint64_t dur = scheduler.duration(ev);
  const uint64_t end = dur > UINT64_MAX - start ? UINT64_MAX : start + dur;
  struct completion_clock {  // Frees made while this command completes happen at its end.
    command_scheduler& s;
    ~completion_clock() { s.set_completion_time(0); }
  } clock{scheduler};
  scheduler.set_completion_time(end);
  if (ev->real[0]) ev->real[1] = pocl_clock_ns();  // Backing mode's real profile: submitted now.
  const cl_int st = command_status(ev, dep_failed);
  if (ev->real[0]) settle_real_profile(ev);
  ev->started = start;
  ev->ended = end;
  q->busy_until = std::max(q->busy_until, ev->ended);
  // The memory it used is not really free before it ends (free_record::time).
  for (cl_mem m : ev->mems) {
    _cl_mem* root = m->parent ? m->parent : m;
    root->last_use_end = std::max(root->last_use_end, ev->ended);
  }
  if (ev->command_type != CL_COMMAND_SVM_FREE) {
    for (const auto& range : ev->svm) {
      if (svm_allocation* b = find_svm(reinterpret_cast<const void*>(range.address))) {
        b->last_use_end = std::max(b->last_use_end, ev->ended);
      }
    }
  }
  record_command(ev, st);
  complete_command(ev, st);
}

cl_int mock_runtime::command_status(_cl_event* ev, bool dep_failed) {
  if (dep_failed) return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  if (ev->fault_status) {
    faults_.fired();
    report("injected execution failure " + std::string(status_name(ev->fault_status)) +
           " into command " + std::to_string(ev->command_id) + " (" + ev->kind + ")");
    return ev->fault_status;
  }
  if (cl_int oom = charge_at_execution(ev); oom != CL_SUCCESS) {
    report("command " + std::to_string(ev->command_id) + " (" + ev->kind +
           ") failed at execution: " + std::string(status_name(oom)));
    return oom;
  }
  cl_int st = CL_COMPLETE;
  if (ev->command_type == CL_COMMAND_MAP_BUFFER || ev->command_type == CL_COMMAND_MAP_IMAGE ||
      ev->command_type == CL_COMMAND_UNMAP_MEM_OBJECT) {
    if (ev->host) {  // maps=copy (maps.cc)
      const cl_int e =
          ev->command_type != CL_COMMAND_UNMAP_MEM_OBJECT ? execute_map(ev) : execute_unmap(ev);
      if (e != CL_SUCCESS) {
        st = e;
        report("command " + std::to_string(ev->command_id) + " (" + ev->kind +
               ") failed to move the mapped bytes: " + std::string(status_name(e)));
      }
    }
  } else if (!ev->mems.empty()) {
    check_mapped_use(ev);
  }
  // Backing mode: POCL runs data commands and kernels now, and mockcl waits for it.
  if (pocl && pocl_runs(ev->command_type)) {
    cl_event pe = nullptr;
    const cl_int e = pocl_execute(ev, ev->real[0] ? &pe : nullptr);
    if (pe) {  // POCL's START and END of its work (settle_real_profile checks them).
      pocl->d->clGetEventProfilingInfo(pe, CL_PROFILING_COMMAND_START, sizeof ev->real[2],
                                       &ev->real[2], nullptr);
      pocl->d->clGetEventProfilingInfo(pe, CL_PROFILING_COMMAND_END, sizeof ev->real[3],
                                       &ev->real[3], nullptr);
      pocl->d->clReleaseEvent(pe);
    }
    if (e != CL_SUCCESS) {
      st = e;
      report("command " + std::to_string(ev->command_id) + " (" + ev->kind +
             ") failed on the backing device: " + std::string(status_name(e)));
    }
  } else if (ev->command_type == CL_COMMAND_SVM_FREE) {
    execute_svm_free(ev);
  } else if (cl_int e = move_bytes(ev); e != CL_SUCCESS) {
    st = e;
  }
  return st;
}

void mock_runtime::settle_real_profile(_cl_event* ev) {
  const uint64_t now = pocl_clock_ns();
  uint64_t* r = ev->real;
  // POCL's START and END, where it ran the command and they lie within the mock's bracket of it;
  // else the bracket itself (a marker, a map, a command that failed, another POCL's clock).
  if (!(r[1] <= r[2] && r[2] <= r[3] && r[3] <= now)) {
    r[2] = r[1];
    r[3] = now;
  }
}

cl_int mock_runtime::move_bytes(_cl_event* ev) {
  cl_int st = CL_SUCCESS;
  switch (ev->command_type) {
    case CL_COMMAND_WRITE_BUFFER:
    case CL_COMMAND_READ_BUFFER: {
      unsigned char* b = bytes_of(ev->mems[0]);
      if (!b)
        st = CL_OUT_OF_HOST_MEMORY;
      else if (ev->command_type == CL_COMMAND_WRITE_BUFFER)
        std::memcpy(b + ev->offset, ev->host, ev->bytes);
      else
        std::memcpy(ev->host, b + ev->offset, ev->bytes);
      break;
    }
    case CL_COMMAND_COPY_BUFFER: {
      unsigned char* s = bytes_of(ev->mems[0]);
      unsigned char* d = bytes_of(ev->mems[1]);
      if (!s || !d)
        st = CL_OUT_OF_HOST_MEMORY;
      else
        std::memmove(d + ev->offset, s + ev->src_offset, ev->bytes);
      break;
    }
    case CL_COMMAND_READ_BUFFER_RECT:
    case CL_COMMAND_WRITE_BUFFER_RECT:
    case CL_COMMAND_COPY_BUFFER_RECT: {
      const bool copy = ev->command_type == CL_COMMAND_COPY_BUFFER_RECT;
      const bool write = ev->command_type == CL_COMMAND_WRITE_BUFFER_RECT;
      unsigned char* b = bytes_of(ev->mems[0]);
      unsigned char* other = copy ? bytes_of(ev->mems[1]) : static_cast<unsigned char*>(ev->host);
      if (!b || !other)
        st = CL_OUT_OF_HOST_MEMORY;
      else if (write)
        rect_copy(b, ev->rect_dst, other, ev->rect_src, ev->region);
      else
        rect_copy(other, ev->rect_dst, b, ev->rect_src, ev->region);
      break;
    }
    case CL_COMMAND_FILL_BUFFER:
    case CL_COMMAND_SVM_MEMFILL: {
      unsigned char* b = ev->command_type == CL_COMMAND_FILL_BUFFER
                             ? bytes_of(ev->mems[0])
                             : static_cast<unsigned char*>(ev->host);
      if (!b) {
        st = CL_OUT_OF_HOST_MEMORY;
        break;
      }
      size_t off = ev->command_type == CL_COMMAND_FILL_BUFFER ? ev->offset : 0;
      size_t n = ev->pattern.size();
      for (size_t i = 0; i < ev->bytes; i += n) std::memcpy(b + off + i, ev->pattern.data(), n);
      break;
    }
    case CL_COMMAND_SVM_MEMCPY:
      std::memmove(ev->host, ev->src, ev->bytes);
      break;
    default:
      break;
  }
  return st;
}

void mock_runtime::execute_svm_free(_cl_event* ev) {
  _cl_command_queue* q = ev->queue;
  if (ev->svm_free_fn) {
    auto fn = ev->svm_free_fn;
    auto data = ev->svm_free_data;
    std::vector<void*> ptrs = ev->svm_free;
    cl_command_queue qh = q;
    retain_internal(q);
    defer([this, fn, data, ptrs, qh]() mutable {
      fn(qh, static_cast<cl_uint>(ptrs.size()), ptrs.data(), data);
      std::unique_lock<runtime_lock> lk(mu);
      release_internal(qh);
    });
  } else {
    for (void* p : ev->svm_free) {
      auto it = svm.find(reinterpret_cast<uintptr_t>(p));
      if (it == svm.end()) continue;
      it->second.freed = true;
      if (it->second.pending == 0) free_svm_now(it);
    }
  }
}

void mock_runtime::record_command(_cl_event* ev, cl_int st) {
  command_record r;
  r.id = ev->command_id;
  r.queue_id = ev->queue->id;
  r.kind = ev->kind;
  r.queued = ev->queued;
  r.start = ev->started;
  r.end = ev->ended;
  for (cl_mem m : ev->mems) r.mems.push_back(m->id);
  r.svm = ev->svm;
  r.status = st;
  record(r);
  if (log_enabled()) {
    std::string mems;
    for (uint64_t id : r.mems) mems += (mems.empty() ? "" : ",") + std::to_string(id);
    log_line("{\"t\":" + std::to_string(ev->ended) + ",\"exec\":\"" + r.kind +
             "\",\"command\":" + std::to_string(r.id) + ",\"queue\":" + std::to_string(r.queue_id) +
             ",\"start\":" + std::to_string(r.start) + ",\"end\":" + std::to_string(r.end) +
             ",\"mems\":[" + mems + "],\"status\":" + std::to_string(st) + "}");
  }
}

// Drops what the command held (buffers: their bytes may come back now; SVM uses; deps), sets its
// status and breaks the queue's references to it.
void mock_runtime::complete_command(_cl_event* ev, cl_int st) {
  _cl_command_queue* q = ev->queue;
  if (ev->svm_counted) {
    for (const live_svm_range& s : ev->svm) {
      auto it = svm.find(s.address);
      if (it == svm.end()) continue;
      if (--it->second.pending == 0 && it->second.freed) free_svm_now(it);
    }
    ev->svm_counted = false;
  }
  std::vector<cl_mem> mems_used;
  mems_used.swap(ev->mems);
  for (cl_mem m : mems_used) release_internal(m);
  if (ev->kernel) {
    std::vector<kernel_arg> args;
    args.swap(ev->args);
    for (const kernel_arg& a : args)
      if (a.sampler) release_internal(a.sampler);  // The launch's hold (api_enqueue.cc).
    release_internal(std::exchange(ev->kernel, nullptr));
  }
  std::vector<cl_event> deps;
  deps.swap(ev->deps);
  for (cl_event d : deps) release_internal(d);
  set_status(ev, st);
  // A completed command is no longer a dependency: the queue's busy_until already orders whatever
  // comes next after its end. Dropping it here breaks the queue <-> last-event reference cycle
  // that kept released queues, their last event and their context alive. (run() still holds its
  // own reference to ev, so ev outlives this.)
  if (q->last == ev) {
    q->last = nullptr;
    release_internal(ev);
  }
  if (q->last_barrier == ev) {
    q->last_barrier = nullptr;
    release_internal(ev);
  }
  cv.notify_all();
}

void mock_runtime::set_status(_cl_event* ev, cl_int status) {
  ev->status = status;
  std::vector<event_callback> keep;
  for (const auto& cb : ev->callbacks) {
    if (status > cb.type) {
      keep.push_back(cb);
      continue;
    }
    retain_internal(ev);
    defer([this, cb, ev, status] {
      cb.fn(ev, status, cb.data);
      std::unique_lock<runtime_lock> lk(mu);
      release_internal(ev);
    });
  }
  ev->callbacks.swap(keep);
}

cl_int mock_runtime::wait(runtime_lock& lk, const std::vector<_cl_event*>& evs) {
  while (true) {
    run();
    bool done = true;
    for (_cl_event* e : evs)
      if (e->status > CL_COMPLETE) done = false;
    if (done) break;
    cv.wait(lk);
  }
  cl_int worst = CL_SUCCESS;
  for (_cl_event* e : evs) {
    scheduler.now = std::max(scheduler.now, e->ended);
    if (e->status < 0) worst = e->status;
  }
  return worst;
}

}  // namespace mockcl
