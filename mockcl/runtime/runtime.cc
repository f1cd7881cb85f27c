#include "mockcl/runtime/runtime.h"
#include "mockcl/runtime/use_scope.h"

#include <algorithm>
#include <cstring>

#include "common/text_escape.h"
#include "mockcl/api/dispatch.h"

extern char** environ;

namespace mockcl {

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += c;
    }
  }
  return o;
}

std::atomic<mock_runtime*> mock_runtime::instance_{nullptr};

mock_runtime& mock_runtime::init() {
  // Never destroyed: handles may be used from other static destructors (the loader's, Python's).
  static mock_runtime* rt = new mock_runtime();
  instance_.store(rt, std::memory_order_release);
  return *rt;
}

mock_runtime::mock_runtime() {
  table = dispatch_table();
  objects.set_dispatch(table);
  platform.dispatch = table;
  platform.type = object_type::platform;
  platform.in_use = true;
  platform.refs = 1;
  for (int i = 0; i < kMaxDevices; ++i) {
    device_handles[i].dispatch = table;
    device_handles[i].type = object_type::device;
    device_handles[i].index = i;
    device_handles[i].refs = 1;
  }
  std::vector<std::pair<std::string, std::string>> vars;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    vars.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  auto c = config_from_env(vars);
  if (!c.ok()) {
    env_ok_ = false;
    env_error_ = c.error();
    base_.devices = default_devices();
  } else {
    base_ = c.value();
  }
  apply(base_);
  if (!base_.call_log.empty() && !log_enabled()) {
    env_ok_ = false;
    env_error_ = "MOCKCL_CALL_LOG='" + base_.call_log + "': cannot open for writing";
  }
  if (!env_ok_) {
    // One line whatever the variables hold (a newline or an escape in MOCKCL_DEVICES).
    std::fprintf(stderr, "mockcl: invalid configuration, platform refused: %s\n",
                 clpool::common::escape_text(env_error_).c_str());
  }
}

bool mock_runtime::platform_ok() { return env_ok_; }

void mock_runtime::apply(const runtime_config& c) {
  if (std::string e = configure_backing(c.backing, c.pocl_icd); !e.empty() && env_ok_) {
    env_ok_ = false;
    env_error_ = e;
  }
  configure_devices(c.devices);
  configure_schedule(c.schedule);
  configure_faults(c.faults, false);
  configure_call_log(c.call_log);
}

// ---- Call ----

void mock_runtime::api_call::finish_slow() {
  if (rt_.log_enabled()) {
    std::string line = "{\"t\":" + std::to_string(rt_.scheduler.now) + ",\"call\":\"" +
                       std::string(entry_name(entry_)) + "\",\"args\":{" + rt_.log_.take_args() +
                       "},\"result\":" + std::to_string(status_) + ",\"status\":\"" +
                       std::string(status_name(status_)) + "\"}";
    rt_.log_line(line);
  }
  if (rt_.callbacks_.empty()) {
    rt_.mu.unlock();
    return;
  }
  std::vector<std::function<void()>> cbs;
  cbs.swap(rt_.callbacks_);
  rt_.update_flags();
  rt_.mu.unlock();
  for (auto& f : cbs) f();
}

// The arguments go to the runtime's buffer, not the Call: calls are serialised by the lock, and
// a Call that does not log then carries no string to construct and destroy.
void mock_runtime::api_call::arg_slow(const char* key, uint64_t v) {
  rt_.log_.add_arg("\"" + std::string(key) + "\":" + std::to_string(v));
}

void mock_runtime::api_call::arg_slow(const char* key, const std::string& v) {
  rt_.log_.add_arg("\"" + std::string(key) + "\":\"" + json_escape(v) + "\"");
}

void mock_runtime::api_call::handle_slow(const char* key, const void* h) {
  const auto* o = static_cast<const object_header*>(h);
  arg(key, o ? std::string(type_name(o->type)) + "#" + std::to_string(o->id) : std::string("null"));
}

// ---- Configuration ----

std::string mock_runtime::configure_devices(const std::vector<device_config>& d) {
  if (d.empty()) return "device list is empty";
  if (d.size() > kMaxDevices) return "at most 16 devices are supported";
  for (object_type t :
       {object_type::context, object_type::queue, object_type::mem, object_type::event,
        object_type::program, object_type::kernel, object_type::sampler})
    if (live(t) != 0)
      return std::string("cannot reconfigure devices while objects are alive (") + type_name(t) +
             ": " + std::to_string(live(t)) + ")";
  if (!svm.empty()) return "cannot reconfigure devices while SVM blocks are alive";
  devices.clear();
  for (const auto& c : d) devices.push_back(device_state{c});
  for (int i = 0; i < kMaxDevices; ++i) {
    device_handles[i].active = i < static_cast<int>(d.size());
    device_handles[i].in_use = device_handles[i].active;
  }
  return "";
}

std::string mock_runtime::configure_faults(const std::vector<fault_rule>& f, bool append) {
  std::string error = faults_.configure(f, append);
  update_flags();
  return error;
}

std::string mock_runtime::configure_schedule(const schedule_config& s) {
  scheduler.configure(s);
  return "";
}

std::string mock_runtime::configure_call_log(const std::string& path) {
  std::string error = log_.configure(path);
  update_flags();
  return error;
}

void mock_runtime::force_destroy_all() {
  // Drops every object without running user callbacks: after reset, stale handles read as
  // released (quarantined) and nothing refers to freed memory.
  scheduler.drop_pending();
  if (pocl) {  // POCL's twins go with them.
    objects.for_each_live<_cl_kernel>([&](_cl_kernel* k) { pocl_drop(k); });
    objects.for_each_live<_cl_sampler>([&](_cl_sampler* s) { pocl_drop(s); });
    objects.for_each_live<_cl_program>([&](_cl_program* p) { pocl_drop(p); });
    objects.for_each_live<_cl_mem>([&](_cl_mem* m) {
      if (m->parent) pocl_drop(m);
    });
    objects.for_each_live<_cl_mem>([&](_cl_mem* m) { pocl_drop(m); });
    objects.for_each_live<_cl_command_queue>([&](_cl_command_queue* q) { pocl_drop(q); });
    objects.for_each_live<_cl_context>([&](_cl_context* c) { pocl_drop(c); });
  }
  objects.for_each_live<_cl_event>([](_cl_event* e) {
    e->kernel = nullptr;
    e->args.clear();
  });
  objects.for_each_live<_cl_sampler>([](_cl_sampler* s) { s->properties.clear(); });
  objects.for_each_live<_cl_mem>([](_cl_mem* m) {
    m->backing.reset();
    m->destructors.clear();
  });
  objects.for_each_live<_cl_event>([](_cl_event* e) {
    e->deps.clear();
    e->mems.clear();
    e->callbacks.clear();
  });
  objects.retire_all();
  for (auto& [address, b] : svm)
    if (b.pocl_svm) pocl_svm_free(b.context, b.pocl_svm);
  svm.clear();
}

void mock_runtime::reset() {
  std::unique_lock<runtime_lock> lk(mu);
  force_destroy_all();
  apply(base_);
  calls_.fill(0);
  faults_.reset_count();
  commands_.clear();
  frees_.clear();
  log_.clear_lines();
  reports_ = misuse_reports{};
  leaked_at_context_release = 0;
  scheduler.restart();
  callbacks_.clear();
  update_flags();
}

accounting_snapshot mock_runtime::snapshot() {
  std::unique_lock<runtime_lock> lk(mu);
  accounting_snapshot s;
  for (const auto& d : devices)
    s.devices.push_back({d.cfg.name, d.cfg.capacity, d.memory.committed(),
                         d.memory.peak_committed(), d.pinned.committed(),
                         d.pinned.peak_committed()});
  objects.for_each_live<_cl_context>([&](_cl_context* c) {
    s.contexts.push_back({c->id, c->outstanding, c->peak});
  });
  for (size_t i = 0; i < kEntryCount; ++i)
    if (calls_[i]) s.calls[std::string(entry_name(static_cast<entry_point>(i)))] = calls_[i];
  for (object_type t :
       {object_type::context, object_type::queue, object_type::mem, object_type::event,
        object_type::program, object_type::kernel, object_type::sampler})
    s.live[type_name(t)] = live(t);
  s.live["svm"] = svm.size();
  s.commands = commands_;
  frees_.copy_to(s.frees);
  s.call_log = log_.lines();
  s.reports = reports_;
  s.reports.leaked_at_context_release = leaked_at_context_release;
  s.faults_fired = faults_.fired_count();
  s.now = scheduler.now;
  return s;
}

uint64_t mock_runtime::object_id(const void* handle) {
  std::unique_lock<runtime_lock> lk(mu);
  if (!handle) return 0;
  if (svm_allocation* b = find_svm(handle)) return b->id;
  const auto* o = static_cast<const object_header*>(handle);
  bool ours = handle == &platform || objects.contains(handle);
  for (const auto& d : device_handles) ours = ours || handle == &d;
  return ours ? o->id : 0;
}

// ---- Validation and lifetime ----

_cl_device_id* mock_runtime::device(cl_device_id h) {
  if (!h || h->type != object_type::device || !h->active) return nullptr;
  return h;
}

// release(), cold paths: a null or released handle, or one the application holds no reference to.
cl_int mock_runtime::release_invalid(object_header* o, cl_int invalid_status) {
  if (!o) return invalid_status;
  ++reports_.double_release;
  report(std::string("double release of ") + type_name(o->type) + " #" + std::to_string(o->id));
  return invalid_status;
}

// The context's last reference went. Every object made in it holds it (objects.h), so only SVM
// blocks, which are no objects, can be left.
void mock_runtime::count_leaks(_cl_context* ctx) {
  uint64_t leaked = 0;
  for (auto& [a, b] : svm)
    if (b.context == ctx && !b.freed) ++leaked;
  if (leaked) {
    leaked_at_context_release += leaked;
    report("context #" + std::to_string(ctx->id) + " released with " + std::to_string(leaked) +
           " SVM blocks not freed");
  }
}

// Destructor callbacks run in reverse order of registration, after the lock is dropped.
void mock_runtime::defer_destructors(_cl_mem* m) {
  for (auto it = m->destructors.rbegin(); it != m->destructors.rend(); ++it) {
    auto d = *it;
    defer([d, m] { d.fn(m, d.data); });
  }
  m->destructors.clear();
}

void mock_runtime::destroy_mem(_cl_mem* m) { destroy_mem_inline(m); }

void mock_runtime::destroy_other(object_header* o) {
  if (pocl) pocl_drop(o);
  objects.forget(o);
  switch (o->type) {
    case object_type::context: {
      auto* c = static_cast<_cl_context*>(o);
      // clSetContextDestructorCallback: last registered first, after the lock is dropped.
      for (auto it = c->destructors.rbegin(); it != c->destructors.rend(); ++it) {
        // Copies, not a structured binding: clang 14 (the fuzz build) cannot capture those.
        const auto fn = it->first;
        void* const data = it->second;
        defer([fn, data, c] { fn(c, data); });
      }
      c->destructors.clear();
      for (const auto& o : c->own_memory) devices[o.device].memory.release(o.where, o.bytes);
      c->own_memory.clear();
      c->devices.clear();
      c->properties.clear();
      objects.retire(c);
      break;
    }
    case object_type::queue: {
      auto* q = static_cast<_cl_command_queue*>(o);
      cl_event last = q->last, barrier = q->last_barrier;
      q->last = q->last_barrier = nullptr;
      if (last) release_internal(last);
      if (barrier) release_internal(barrier);
      drop_hold(q->context);
      objects.retire(q);
      break;
    }
    case object_type::event: {
      auto* e = static_cast<_cl_event*>(o);
      for (cl_event d : e->deps) release_internal(d);
      for (cl_mem m : e->mems) release_internal(m);
      e->deps.clear();
      e->mems.clear();
      e->callbacks.clear();
      e->svm.clear();
      for (const kernel_arg& a : e->args)
        if (a.sampler) release_internal(a.sampler);
      e->args.clear();
      if (e->kernel) release_internal(e->kernel);
      e->kernel = nullptr;
      if (e->queue) drop_hold(e->queue);
      e->queue = nullptr;
      drop_hold(e->context);
      objects.retire(e);
      break;
    }
    case object_type::program: {
      auto* p = static_cast<_cl_program*>(o);
      drop_hold(p->context);
      objects.retire(p);
      break;
    }
    case object_type::kernel: {
      auto* k = static_cast<_cl_kernel*>(o);
      k->args.clear();
      drop_hold(k->program);
      objects.retire(k);
      break;
    }
    case object_type::sampler: {
      auto* s = static_cast<_cl_sampler*>(o);
      s->properties.clear();
      drop_hold(s->context);
      objects.retire(s);
      break;
    }
    default:
      break;
  }
}

// ---- Accounting ----

cl_int mock_runtime::use_mem(_cl_mem* m, _cl_command_queue* q, bool at_execution) {
  _cl_mem* root = m->parent ? m->parent : m;
  if (root->device >= 0) return CL_SUCCESS;
  if (!at_execution && devices[q->device->index].cfg.oom_at_execution) return CL_SUCCESS;
  cl_int s = charge(q->device->index, root->context, root->size, false, root->where);
  if (s == CL_SUCCESS) root->device = q->device->index;
  return s;
}

cl_int mock_runtime::use_mems(_cl_mem* src, _cl_mem* dst, _cl_command_queue* q) {
  use_scope scope(*this, q);
  if (cl_int s = scope.mem(src)) return s;
  if (cl_int s = scope.mem(dst)) return s;
  scope.keep();
  return CL_SUCCESS;
}

void mock_runtime::unuse_mem(_cl_mem* m) {
  _cl_mem* root = m->parent ? m->parent : m;
  if (root->device < 0) return;
  credit(root->device, root->context, root->size, false, root->where);
  root->device = -1;
}

void mock_runtime::unuse_svm(svm_allocation* b) {
  if (!b->charged) return;
  credit(b->device, b->context, b->size, false, b->where);
  b->charged = false;
}

cl_int mock_runtime::use_svm(svm_allocation* b, _cl_command_queue* q) {
  if (b->charged) return CL_SUCCESS;
  cl_int s = charge(q->device->index, b->context, b->size, false, b->where);
  if (s == CL_SUCCESS) {
    b->charged = true;
    b->device = q->device->index;
  }
  return s;
}

unsigned char* mock_runtime::bytes_of(_cl_mem* m) {
  _cl_mem* root = m->parent ? m->parent : m;
  size_t off = m->parent ? m->offset : 0;
  if (root->host_ptr) return static_cast<unsigned char*>(root->host_ptr) + off;
  if (!root->backing.data() && !root->backing.allocate(root->size)) return nullptr;
  return static_cast<unsigned char*>(root->backing.data()) + off;
}

svm_allocation* mock_runtime::find_svm(const void* p) {
  if (svm.empty()) return nullptr;
  auto a = reinterpret_cast<uintptr_t>(p);
  auto it = svm.upper_bound(a);
  if (it == svm.begin()) return nullptr;
  --it;
  if (a >= it->first && a < it->first + std::max<size_t>(it->second.size, 1)) return &it->second;
  return nullptr;
}

void mock_runtime::free_svm_now(std::map<uintptr_t, svm_allocation>::iterator it) {
  svm_allocation& b = it->second;
  record_free(true, b.id, it->first, b.charged ? b.size : 0, b.last_use_end);
  if (b.charged) credit(b.device, b.context, b.size, false, b.where);
  cl_context ctx = b.context;
  if (b.pocl_svm) pocl_svm_free(ctx, b.pocl_svm);
  svm.erase(it);
  release_internal(ctx);
}

}  // namespace mockcl
