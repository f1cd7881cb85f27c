// Slab<T>: the cheap object allocator behind every handle type.
//
// Why: handles must stay readable after release so that a stale handle answers
// CL_INVALID_MEM_OBJECT (and the like) instead of crashing. So slots are never returned to the
// OS, and a destroyed object goes through a bounded FIFO quarantine: its slot is reused only
// after `kQuarantine` newer objects of its type were destroyed. While quarantined or free, a
// slot keeps its dispatch pointer and type and reads as released (object_header::in_use is false),
// so validation is O(1) and safe. acquire/retire are O(1) with no allocation on the hot path: the
// quarantine is a fixed ring, and the free list is intrusive (object_header::link).
// Not thread-safe: the runtime's lock guards it.
#ifndef MOCKCL_RUNTIME_SLAB_H_
#define MOCKCL_RUNTIME_SLAB_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace mockcl {

template <typename T>
class object_slab {
 public:
  static constexpr std::size_t kChunk = 256;
  static constexpr std::size_t kQuarantine = 1024;
  static_assert((kQuarantine & (kQuarantine - 1)) == 0, "the ring index wraps with a mask");

  // A default-constructed or previously retired T (its fields keep their old values; the
  // caller re-initialises them). Never null.
  T* acquire() {
    if (!free_) [[unlikely]]
      grow();
    T* t = free_;
    free_ = static_cast<T*>(t->link);
    return t;
  }

  // True when acquire() would not allocate (a slot is free).
  bool has_free() const { return free_ != nullptr; }

  // Gives a destroyed object back. It becomes reusable after kQuarantine newer retirements.
  void retire(T* t) {
    if (quarantined_ < kQuarantine) [[unlikely]] {
      ring_[quarantined_++] = t;
      return;
    }
    T* oldest = ring_[head_];
    ring_[head_] = t;
    head_ = (head_ + 1) & (kQuarantine - 1);
    oldest->link = free_;
    free_ = oldest;
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
  [[gnu::noinline]] void grow() {
    chunks_.push_back(std::make_unique<T[]>(kChunk));
    T* c = chunks_.back().get();
    for (std::size_t i = kChunk; i > 0; --i) {
      c[i - 1].link = free_;
      free_ = &c[i - 1];
    }
  }

  std::vector<std::unique_ptr<T[]>> chunks_;
  T* free_ = nullptr;                   // Reusable slots, linked through object_header::link.
  std::array<T*, kQuarantine> ring_{};  // The quarantine: ring_[head_] is the oldest once full.
  std::size_t quarantined_ = 0;
  std::size_t head_ = 0;
};

}  // namespace mockcl

#endif  // MOCKCL_RUNTIME_SLAB_H_
