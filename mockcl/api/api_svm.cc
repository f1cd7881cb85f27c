// Coarse-grain buffer SVM: clSVMAlloc (NULL on out-of-memory), clSVMFree, and the SVM
// commands, clEnqueueSVMFree included (executed in queue order, with its callback). A device with
// svm_oom_at=first_use charges a block at the first command that uses it instead, whose enqueue
// then fails with the profile's status (mock_runtime::use_svm).
#include <bit>
#include <cstring>

#include "mockcl/api/enqueue_checks.h"
#include "mockcl/runtime/runtime.h"
#include "mockcl/runtime/use_scope.h"

namespace mockcl {
namespace {

void* CL_API_CALL SVMAlloc(cl_context h, cl_svm_mem_flags flags, size_t size, cl_uint alignment) {
  api_call c(rt(), entry_point::clSVMAlloc);
  c.arg("size", size);
  c.arg("flags", flags);
  // clSVMAlloc has no status to return, only NULL; the call log still says why.
  const auto refuse = [&c](cl_int why) -> void* {
    c.ret(why);
    return nullptr;
  };
  if (cl_int f = c.fault()) return refuse(f);
  _cl_context* ctx = rt().context(h);
  if (!ctx) return refuse(CL_INVALID_CONTEXT);
  int dev = ctx->devices[0]->index;
  const device_config& cfg = rt().devices[dev].cfg;
  if (!cfg.svm) return refuse(CL_INVALID_OPERATION);
  // Fine-grain buffers where the device reports them (svm_capabilities); never atomics.
  const cl_svm_mem_flags fine =
      (svm_capabilities(rt()) & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) ? CL_MEM_SVM_FINE_GRAIN_BUFFER : 0;
  if (flags & ~(kMemAccessFlags | fine)) return refuse(CL_INVALID_VALUE);
  // The access flags are mutually exclusive, as clCreateBuffer's are (OpenCL 3.0, clSVMAlloc).
  if (std::popcount(flags & kMemAccessFlags) > 1) return refuse(CL_INVALID_VALUE);
  if (size == 0) return refuse(CL_INVALID_VALUE);
  if (clpool::device_model::exceeds_max_alloc(cfg.model, size, cfg.max_alloc))
    return refuse(CL_INVALID_BUFFER_SIZE);
  if ((alignment & (alignment - 1)) || alignment > 4096) return refuse(CL_INVALID_VALUE);
  clpool::device_model::placement where;
  const bool at_first_use = cfg.svm_first_use;
  if (cl_int s = at_first_use ? CL_SUCCESS : rt().charge(dev, ctx, size, false, where)) {
    c.ret(s);
    return nullptr;
  }
  svm_allocation b;
  void* p = rt().pocl
                ? (b.pocl_svm = rt().pocl_svm_alloc(ctx, flags, size, alignment ? alignment : 128))
                : b.block.allocate(size, alignment ? alignment : 128);
  if (!p) {
    if (!at_first_use) rt().credit(dev, ctx, size, false, where);
    c.ret(CL_OUT_OF_HOST_MEMORY);
    return nullptr;
  }
  b.size = size;
  b.context = ctx;
  b.device = dev;
  b.where = where;
  b.charged = !at_first_use;
  b.id = rt().objects.next_id();
  rt().retain_internal(ctx);
  rt().svm.emplace(reinterpret_cast<uintptr_t>(p), std::move(b));
  c.arg("ret", reinterpret_cast<uint64_t>(p));
  return p;
}

void CL_API_CALL SVMFree(cl_context h, void* ptr) {
  api_call c(rt(), entry_point::clSVMFree);
  c.arg("ptr", reinterpret_cast<uint64_t>(ptr));
  if (!ptr || !rt().context(h)) return;
  auto it = rt().svm.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == rt().svm.end() || it->second.freed) {
    rt().note_double_release("clSVMFree of a pointer that is not a live SVM allocation");
    c.ret(CL_INVALID_VALUE);
    return;
  }
  it->second.freed = true;
  // Commands still using it keep the bytes charged until they complete.
  if (it->second.pending == 0) rt().free_svm_now(it);
}

// An SVM range argument: inside one live block of the queue's context.
svm_allocation* svm_range(_cl_command_queue* q, const void* p, size_t size) {
  svm_allocation* b = rt().find_svm(p);
  if (!b || b->freed || b->context != q->context) return nullptr;
  auto start = reinterpret_cast<uintptr_t>(b->data());
  if (reinterpret_cast<uintptr_t>(p) - start + size > b->size) return nullptr;
  return b;
}

void use_block(_cl_event* ev, svm_allocation* b) {
  ++b->pending;
  ev->svm.push_back({reinterpret_cast<uint64_t>(b->data()), b->size});
  ev->svm_counted = true;
}

cl_int CL_API_CALL EnqueueSVMFree(cl_command_queue h, cl_uint num, void* ptrs[],
                                  void(CL_CALLBACK* fn)(cl_command_queue, cl_uint, void*[], void*),
                                  void* data, cl_uint n, const cl_event* wait, cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueSVMFree);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  if (num == 0 || !ptrs) return c.ret(CL_INVALID_VALUE);
  std::vector<svm_allocation*> blocks;
  std::vector<void*> live_ptrs;
  for (cl_uint i = 0; i < num; ++i) {
    c.arg("ptr", reinterpret_cast<uint64_t>(ptrs[i]));
    if (!ptrs[i])
      continue;  // Like clSVMFree(NULL): nothing to do (PyOpenCL passes NULL after a failed alloc).
    live_ptrs.push_back(ptrs[i]);
    auto it = rt().svm.find(reinterpret_cast<uintptr_t>(ptrs[i]));
    if (it == rt().svm.end() || it->second.freed || it->second.free_enqueued) {
      rt().note_double_release("clEnqueueSVMFree of a pointer that is not a live SVM allocation");
      return c.ret(CL_INVALID_VALUE);
    }
    blocks.push_back(&it->second);
  }
  _cl_event* ev =
      rt().new_command(q, CL_COMMAND_SVM_FREE, "svm_free", entry_point::clEnqueueSVMFree, n, wait);
  for (svm_allocation* b : blocks) {
    b->free_enqueued = true;
    ev->svm.push_back({reinterpret_cast<uint64_t>(b->data()), b->size});
  }
  // The callback gets the list as passed; without one, only real blocks are freed.
  ev->svm_free = fn ? std::vector<void*>(ptrs, ptrs + num) : live_ptrs;
  ev->svm_free_fn = fn;
  ev->svm_free_data = data;
  return c.ret(finish_command(c, ev, out, false));
}

cl_int CL_API_CALL EnqueueSVMMemcpy(cl_command_queue h, cl_bool blocking, void* dst,
                                    const void* src, size_t size, cl_uint n, const cl_event* wait,
                                    cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueSVMMemcpy);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  if (!dst || !src || size == 0) return c.ret(CL_INVALID_VALUE);
  auto d = reinterpret_cast<uintptr_t>(dst), sr = reinterpret_cast<uintptr_t>(src);
  if (d < sr + size && sr < d + size) return c.ret(CL_MEM_COPY_OVERLAP);
  // Either side may be plain host memory; SVM sides are charged, recorded and held.
  svm_allocation* from = svm_range(q, src, size);
  svm_allocation* to = svm_range(q, dst, size);
  use_scope scope(rt(), q);
  for (svm_allocation* b : {from, to})
    if (b && (s = scope.svm(b))) return c.ret(s);
  scope.keep();
  _cl_event* ev = rt().new_command(q, CL_COMMAND_SVM_MEMCPY, "svm_memcpy",
                                   entry_point::clEnqueueSVMMemcpy, n, wait);
  if (from) use_block(ev, from);
  if (to) use_block(ev, to);
  ev->host = dst;
  ev->src = src;
  ev->bytes = size;
  return c.ret(finish_command(c, ev, out, blocking));
}

cl_int CL_API_CALL EnqueueSVMMemFill(cl_command_queue h, void* ptr, const void* pattern,
                                     size_t pattern_size, size_t size, cl_uint n,
                                     const cl_event* wait, cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueSVMMemFill);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  if (!ptr || !pattern || pattern_size == 0 || pattern_size > 128 ||
      (pattern_size & (pattern_size - 1)) || size % pattern_size ||
      reinterpret_cast<uintptr_t>(ptr) % pattern_size)
    return c.ret(CL_INVALID_VALUE);
  svm_allocation* b = svm_range(q, ptr, size);
  if (!b) return c.ret(CL_INVALID_VALUE);
  if ((s = rt().use_svm(b, q))) return c.ret(s);
  _cl_event* ev = rt().new_command(q, CL_COMMAND_SVM_MEMFILL, "svm_memfill",
                                   entry_point::clEnqueueSVMMemFill, n, wait);
  use_block(ev, b);
  ev->host = ptr;
  ev->pattern.assign(static_cast<const unsigned char*>(pattern),
                     static_cast<const unsigned char*>(pattern) + pattern_size);
  ev->bytes = size;
  return c.ret(finish_command(c, ev, out, false));
}

cl_int CL_API_CALL EnqueueSVMMap(cl_command_queue h, cl_bool blocking, cl_map_flags flags,
                                 void* ptr, size_t size, cl_uint n, const cl_event* wait,
                                 cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueSVMMap);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  if (!ptr || size == 0) return c.ret(CL_INVALID_VALUE);
  // The map flags' rules of clEnqueueMapBuffer (an SVM block has no host-access flags).
  if ((s = check_map_flags(0, flags))) return c.ret(s);
  svm_allocation* b = svm_range(q, ptr, size);
  if (!b) return c.ret(CL_INVALID_VALUE);
  if ((s = rt().use_svm(b, q))) return c.ret(s);
  _cl_event* ev =
      rt().new_command(q, CL_COMMAND_SVM_MAP, "svm_map", entry_point::clEnqueueSVMMap, n, wait);
  use_block(ev, b);
  return c.ret(finish_command(c, ev, out, blocking));
}

cl_int CL_API_CALL EnqueueSVMUnmap(cl_command_queue h, void* ptr, cl_uint n, const cl_event* wait,
                                   cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueSVMUnmap);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  svm_allocation* b = ptr ? svm_range(q, ptr, 0) : nullptr;
  if (!b) return c.ret(CL_INVALID_VALUE);
  _cl_event* ev = rt().new_command(q, CL_COMMAND_SVM_UNMAP, "svm_unmap",
                                   entry_point::clEnqueueSVMUnmap, n, wait);
  use_block(ev, b);
  return c.ret(finish_command(c, ev, out, false));
}

cl_int CL_API_CALL EnqueueSVMMigrateMem(cl_command_queue h, cl_uint num, const void** ptrs,
                                        const size_t*, cl_mem_migration_flags flags, cl_uint n,
                                        const cl_event* wait, cl_event* out) {
  api_call c(rt(), entry_point::clEnqueueSVMMigrateMem);
  cl_int s;
  _cl_command_queue* q = enqueue_prologue(c, h, n, wait, s);
  if (!q) return c.ret(s);
  if (num == 0 || !ptrs) return c.ret(CL_INVALID_VALUE);
  std::vector<svm_allocation*> blocks;
  for (cl_uint i = 0; i < num; ++i) {
    svm_allocation* b = svm_range(q, ptrs[i], 0);
    if (!b) return c.ret(CL_INVALID_VALUE);
    blocks.push_back(b);
  }
  // Migrating to the host commits nothing on the device (as for buffers).
  if (!(flags & CL_MIGRATE_MEM_OBJECT_HOST)) {
    use_scope scope(rt(), q);
    for (svm_allocation* b : blocks)
      if ((s = scope.svm(b))) return c.ret(s);
    scope.keep();
  }
  _cl_event* ev = rt().new_command(q, CL_COMMAND_SVM_MIGRATE_MEM, "svm_migrate",
                                   entry_point::clEnqueueSVMMigrateMem, n, wait);
  for (svm_allocation* b : blocks) use_block(ev, b);
  return c.ret(finish_command(c, ev, out, false));
}

}  // namespace

void fill_svm(cl_icd_dispatch& d) {
  d.clSVMAlloc = SVMAlloc;
  d.clSVMFree = SVMFree;
  d.clEnqueueSVMFree = EnqueueSVMFree;
  d.clEnqueueSVMMemcpy = EnqueueSVMMemcpy;
  d.clEnqueueSVMMemFill = EnqueueSVMMemFill;
  d.clEnqueueSVMMap = EnqueueSVMMap;
  d.clEnqueueSVMUnmap = EnqueueSVMUnmap;
  d.clEnqueueSVMMigrateMem = EnqueueSVMMigrateMem;
}

}  // namespace mockcl
