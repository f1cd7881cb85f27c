// object_registry: every handle the mock hands out (contexts, queues, buffers, events, programs,
// kernels): their slabs, their ids, the count of live ones, and what a handle is (live, released,
// not one of the type). Owned by mock_runtime and guarded by its lock. Internal to //mockcl.
//
// What an object's destruction does to the rest of the runtime (credits, records, callbacks,
// internal references) is the runtime's; the registry only creates, identifies and counts
// objects and takes their slots back. Everything here is inline: the express create+release
// path (express_paths.h) runs through create(), forget() and retire() with no call.
#ifndef MOCKCL_RUNTIME_OBJECT_REGISTRY_H_
#define MOCKCL_RUNTIME_OBJECT_REGISTRY_H_

#include <CL/cl_icd.h>

#include <array>
#include <cstdint>
#include <type_traits>

#include "mockcl/runtime/objects.h"
#include "mockcl/runtime/slab.h"

namespace mockcl {

class object_registry {
 public:
  // What a handle is, for validation (O(1): a slot stays readable, slab.h).
  enum class handle_state { foreign, live, released };

  // The dispatch table every created object points to (the loader calls through it).
  void set_dispatch(const cl_icd_dispatch* table) { table_ = table; }

  // The handle type's object_type.
  template <typename T>
  static constexpr object_type type_of() {
    if constexpr (std::is_same_v<T, _cl_context>)
      return object_type::context;
    else if constexpr (std::is_same_v<T, _cl_command_queue>)
      return object_type::queue;
    else if constexpr (std::is_same_v<T, _cl_mem>)
      return object_type::mem;
    else if constexpr (std::is_same_v<T, _cl_event>)
      return object_type::event;
    else if constexpr (std::is_same_v<T, _cl_program>)
      return object_type::program;
    else if constexpr (std::is_same_v<T, _cl_sampler>)
      return object_type::sampler;
    else {
      static_assert(std::is_same_v<T, _cl_kernel>, "not a handle type the registry holds");
      return object_type::kernel;
    }
  }

  // The slab of the handle type.
  template <typename T>
  object_slab<T>& slab() {
    if constexpr (std::is_same_v<T, _cl_context>)
      return contexts_;
    else if constexpr (std::is_same_v<T, _cl_command_queue>)
      return queues_;
    else if constexpr (std::is_same_v<T, _cl_mem>)
      return mems_;
    else if constexpr (std::is_same_v<T, _cl_event>)
      return events_;
    else if constexpr (std::is_same_v<T, _cl_program>)
      return programs_;
    else if constexpr (std::is_same_v<T, _cl_sampler>)
      return samplers_;
    else
      return kernels_;
  }

  // A new object with one application reference and a fresh id; its own fields keep what the
  // slot held before (the caller initialises them).
  template <typename T>
  T* create() {
    T* t = slab<T>().acquire();
    t->dispatch = table_;
    t->type = type_of<T>();
    t->in_use = true;
    t->released = false;
    t->refs = 1;
    t->holds = 0;
    t->internal = 0;
    t->id = ++next_id_;
    ++live_[live_index(type_of<T>())];
    return t;
  }
  // True when create<T>() would not allocate (the express path's precondition).
  template <typename T>
  bool has_free() {
    return slab<T>().has_free();
  }

  // A fresh id for something that is not a handle (SVM blocks). Ids are never reused.
  uint64_t next_id() { return ++next_id_; }

  // Whether `h` is a live handle of `type`, a released one (use after release), or neither.
  static handle_state state_of(const object_header* h, object_type type) {
    if (!h || h->type != type) return handle_state::foreign;
    if (h->released || !h->in_use) [[unlikely]]
      return handle_state::released;
    return handle_state::live;
  }
  // True if `p` is the address of a slot of one of the slabs (safe to read as an object_header).
  bool contains(const void* p) const;
  // True if `p` is the address of a buffer's slot.
  bool is_mem_slot(const void* p) const { return mems_.contains(p); }
  bool is_sampler_slot(const void* p) const { return samplers_.contains(p); }

  // Destruction, first half: the object is no longer live (its handle reads as released).
  // T: a handle type, or object_header for an object of any type.
  template <typename T>
  void forget(T* o) {
    o->in_use = false;
    o->released = true;
    if constexpr (std::is_same_v<T, object_header>)
      --live_[live_index(o->type)];
    else
      --live_[live_index(type_of<T>())];
  }
  // Destruction, second half: the slot goes to its slab's quarantine.
  template <typename T>
  void retire(T* o) {
    slab<T>().retire(o);
  }
  // Forgets and retires every live object without touching its fields (reset); the caller has
  // dropped what they held.
  void retire_all();

  // Calls f(T*) for every live object of the handle type.
  template <typename T, typename F>
  void for_each_live(F&& f) {
    slab<T>().for_each_slot([&](T* o) {
      if (o->in_use) f(o);
    });
  }

  uint64_t live(object_type t) const { return live_[live_index(t)]; }

 private:
  static constexpr int live_index(object_type t) {
    return t == object_type::none ? 0 : int(uint32_t(t) - uint32_t(object_type::platform));
  }

  const cl_icd_dispatch* table_ = nullptr;
  object_slab<_cl_context> contexts_;
  object_slab<_cl_command_queue> queues_;
  object_slab<_cl_mem> mems_;
  object_slab<_cl_event> events_;
  object_slab<_cl_program> programs_;
  object_slab<_cl_kernel> kernels_;
  object_slab<_cl_sampler> samplers_;
  uint64_t next_id_ = 0;
  std::array<uint64_t, 10> live_{};
};

inline bool object_registry::contains(const void* p) const {
  return contexts_.contains(p) || queues_.contains(p) || mems_.contains(p) || events_.contains(p) ||
         programs_.contains(p) || kernels_.contains(p) || samplers_.contains(p);
}

inline void object_registry::retire_all() {
  auto kill = [](auto& slab) {
    slab.for_each_slot([&](auto* o) {
      if (!o->in_use) return;
      o->in_use = false;
      o->released = true;
      o->refs = o->holds = o->internal = 0;
      slab.retire(o);
    });
  };
  kill(contexts_);
  kill(queues_);
  kill(mems_);
  kill(events_);
  kill(programs_);
  kill(kernels_);
  kill(samplers_);
  live_.fill(0);
}

}  // namespace mockcl

#endif  // MOCKCL_RUNTIME_OBJECT_REGISTRY_H_
