// Blocks whose memory Python objects still reach after the pool let them go. A pooled block is
// handed out as a Python object (the pinned pool's PinnedBlock, the SVM pool's SVMBlock) whose
// memory numpy arrays, memoryviews or PyOpenCL's own objects may export. The object may be
// released and its block handed to the next user (a data race, as with any use after release),
// but its memory must stay allocated while the object exists: when the pool frees such a block
// (trimming, free_held, the pool's end), the free waits for the last object over it.
//
//   guarded_allocator<host_pinned_allocator, mem_of> a(host_pinned_allocator(queue));
//   reachable_blocks<host_pinned_allocator>::get().add_object(key);   // an object over `key`
//   reachable_blocks<host_pinned_allocator>::get().drop_object(key);  // the object dies
#ifndef CLPOOL_PYTHON_REACHABLE_BLOCKS_H_
#define CLPOOL_PYTHON_REACHABLE_BLOCKS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "pool/allocator.h"

namespace clpool::python {

// The blocks of allocator type A that objects reach, by `key` (what identifies a block's memory:
// its cl_mem, its SVM pointer), and the frees that wait for them. Process-wide, since a deferred
// free may outlive its pool; its own lock, since pools free blocks with the GIL released.
template <class A>
class reachable_blocks {
 public:
  using block_type = typename A::handle_type;

  static reachable_blocks& get() {
    static auto* r = new reachable_blocks();  // never destroyed: objects may outlive the module
    return *r;
  }
  void add_object(const void* key) {
    std::lock_guard<std::mutex> lock(mu_);
    ++table_[key].objects;
  }
  // An object over `key` is gone: runs the free that waited for it, if this was the last one.
  void drop_object(const void* key) noexcept {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = table_.find(key);
    if (it == table_.end() || --it->second.objects > 0) return;
    entry e = std::move(it->second);
    table_.erase(it);
    lock.unlock();
    if (e.release) e.release->allocator->deallocate(e.release->block, e.release->bytes);
  }
  // The pool frees `block` (at `key`): true when an object still reaches it, and the free now
  // waits for it.
  bool defer(const std::shared_ptr<A>& allocator, const void* key, block_type block,
             std::uint64_t bytes) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = table_.find(key);
    if (it == table_.end()) return false;
    it->second.release = deferred{allocator, block, bytes};
    return true;
  }

 private:
  struct deferred {
    std::shared_ptr<A> allocator;
    block_type block;
    std::uint64_t bytes;
  };
  struct entry {
    int objects = 0;
    std::optional<deferred> release;
  };
  std::mutex mu_;
  std::unordered_map<const void*, entry> table_;
};

// A, except that a block some object still reaches (reachable_blocks<A>) is freed only after that
// object. `KeyOf` names a block's memory as reachable_blocks keys it.
template <class A, const void* (*KeyOf)(const typename A::handle_type&)>
class guarded_allocator {
 public:
  using handle_type = typename A::handle_type;
  explicit guarded_allocator(A a) : inner_(std::make_shared<A>(std::move(a))) {}
  bool try_allocate(std::uint64_t bytes, handle_type& out, allocator_refusal& refusal) {
    return inner_->try_allocate(bytes, out, refusal);
  }
  handle_type allocate(std::uint64_t bytes) { return inner_->allocate(bytes); }
  void deallocate(handle_type block, std::uint64_t bytes) noexcept {
    if (!reachable_blocks<A>::get().defer(inner_, KeyOf(block), block, bytes))
      inner_->deallocate(block, bytes);
  }
  std::uint64_t largest_block() const noexcept { return inner_->largest_block(); }
  // For the OpenCL pools, which read their allocator's context.
  auto context() const noexcept requires requires(const A& a) { a.context(); }
  { return inner_->context(); }

 private:
  std::shared_ptr<A> inner_;  // shared with frees that outlive the pool
};

}  // namespace clpool::python

#endif  // CLPOOL_PYTHON_REACHABLE_BLOCKS_H_
