// The express paths of clCreateBuffer and clReleaseMemObject (lock NOT held on entry), defined
// apart from mock_runtime so that runtime.h stays readable; only api_memory.cc includes this.
//
// A buffer created and released with nothing else going on (no call log, fault rule or due
// callback; plain access flags; memory at hand; the slab and the free records have room) is
// the commonest pair a pool's client makes, and the one the benchmark measures. These do that
// case with no function call at all (so no register saves), under the lock's uncontended fast
// path, with exactly the effects of the general path: the call is counted, the clock ticks,
// memory is charged or credited with peaks, the slot is acquired or quarantined, the free is
// recorded. If any condition does not hold they change nothing and return null / false, and
// the entry point takes the general path, which checks everything again and reports errors.
#ifndef MOCKCL_API_EXPRESS_PATHS_H_
#define MOCKCL_API_EXPRESS_PATHS_H_

#include "mockcl/runtime/runtime.h"

namespace mockcl {

[[gnu::always_inline]] inline _cl_mem* mock_runtime::create_buffer_express(cl_context h,
                                                                           cl_mem_flags flags,
                                                                           size_t size,
                                                                           const void* host_ptr) {
  if (!mu.try_lock_fast()) [[unlikely]]
    return nullptr;
  _cl_context* ctx = h;
  const bool plain = !hooks_ && !finish_slow_ && ctx && ctx->type == object_type::context &&
                     ctx->in_use && !ctx->released && !(flags & ~kMemAccessFlags) &&
                     !(flags & (flags - 1)) && !host_ptr && size != 0 && size <= ctx->max_alloc &&
                     objects.has_free<_cl_mem>();
  if (!plain) [[unlikely]] {
    mu.unlock_owner();
    return nullptr;
  }
  const int dev = ctx->device0;
  // No fault rule is installed (hooks_ is false), so the charge needs no fault check.
  clpool::device_model::placement where;
  if (ctx->charge_at_create &&
      charge_to<false, /*kFaults=*/false>(dev, ctx, size, where) != CL_SUCCESS) [[unlikely]] {
    mu.unlock_owner();
    return nullptr;  // the general path reports the out-of-memory
  }
  ++calls_[static_cast<size_t>(entry_point::clCreateBuffer)];
  ++scheduler.now;
  _cl_mem* m = objects.create<_cl_mem>();
  init_buffer(m, ctx, flags, size, nullptr, ctx->charge_at_create ? dev : -1, /*pinned=*/false);
  m->where = where;
  mu.unlock_owner();
  return m;
}
[[gnu::always_inline]] inline bool mock_runtime::release_mem_express(cl_mem h) {
  if (!mu.try_lock_fast()) [[unlikely]]
    return false;
  _cl_mem* m = h;
  const bool plain = !finish_slow_ && m && m->type == object_type::mem && m->in_use &&
                     !m->released && m->refs == 1 && m->holds == 0 && m->internal == 0 &&
                     !m->parent && !m->pinned && m->destructors.empty() && !m->backing.data() &&
                     !m->pocl_mem && frees_.append_is_free() && m->context &&
                     (m->context->holds > 1 || m->context->refs > 0);
  if (!plain) [[unlikely]] {
    mu.unlock_owner();
    return false;
  }
  ++calls_[static_cast<size_t>(entry_point::clReleaseMemObject)];
  ++scheduler.now;
  m->refs = 0;
  objects.forget(m);
  // Needs no allocation: append_is_free() held above.
  record_free(false, m->id, 0, m->device >= 0 ? m->size : 0, m->last_use_end);
  m->last_use_end = 0;
  if (m->device >= 0) credit(m->device, m->context, m->size, /*pinned=*/false, m->where);
  m->device = -1;
  --m->context->holds;
  objects.retire(m);
  mu.unlock_owner();
  return true;
}

}  // namespace mockcl

#endif  // MOCKCL_API_EXPRESS_PATHS_H_
