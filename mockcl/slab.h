// Slab<T>: the cheap object allocator behind every handle type.
//
// Why: handles must stay readable after release so that a stale handle answers
// CL_INVALID_MEM_OBJECT (and the like) instead of crashing. So slots are never returned to the
// OS, and a destroyed object goes through a bounded FIFO quarantine: its slot is reused only
// after `kQuarantine` newer objects were destroyed. A free list makes acquire/retire O(1)
// with no allocation on the hot path (the create+release benchmark relies on it).
// Not thread-safe: the runtime's lock guards it.
#ifndef MOCKCL_SLAB_H_
#define MOCKCL_SLAB_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace mockcl {

template <typename T>
class Slab {
 public:
  static constexpr std::size_t kChunk = 256;
  static constexpr std::size_t kQuarantine = 1024;

  // A default-constructed or previously retired T (its fields keep their old values; the
  // caller re-initialises them). Never null.
  T* acquire() {
    if (free_.empty()) grow();
    T* t = free_.back();
    free_.pop_back();
    return t;
  }

  // Gives a destroyed object back. It becomes reusable after kQuarantine newer retirements.
  void retire(T* t) {
    if (ring_.size() < kQuarantine) {
      ring_.push_back(t);
      return;
    }
    free_.push_back(ring_[head_]);
    ring_[head_] = t;
    head_ = (head_ + 1) % kQuarantine;
  }

  // True if p is the address of a slot of this slab (safe to read as a T).
  bool contains(const void* p) const {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    for (const auto& c : chunks_) {
      auto b = reinterpret_cast<std::uintptr_t>(c.get());
      if (a >= b && a < b + kChunk * sizeof(T) && (a - b) % sizeof(T) == 0) return true;
    }
    return false;
  }

  // Calls f(T*) for every slot ever allocated (live, quarantined or free).
  template <typename F>
  void for_each_slot(F&& f) {
    for (auto& c : chunks_)
      for (std::size_t i = 0; i < kChunk; ++i) f(&c[i]);
  }

 private:
  void grow() {
    chunks_.push_back(std::make_unique<T[]>(kChunk));
    T* c = chunks_.back().get();
    for (std::size_t i = kChunk; i > 0; --i) free_.push_back(&c[i - 1]);
  }

  std::vector<std::unique_ptr<T[]>> chunks_;
  std::vector<T*> free_;
  std::vector<T*> ring_;
  std::size_t head_ = 0;
};

}  // namespace mockcl

#endif  // MOCKCL_SLAB_H_
