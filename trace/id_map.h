// flat_id_map<V>: an open-addressing hash map from 64-bit ids to values, for the live set of a
// trace. The reader and the replay engine do one lookup per event, so this is on the hot path:
// one flat array, linear probing, no allocation per insert, and backward-shift deletion (no
// tombstones, so a long trace with heavy id reuse never degrades). Key and value share a slot.
// Memory is proportional to the peak live set, not to the trace length.
//
// Every u64 is a valid key (ids come from pointers, counters, anything), so occupancy is kept in a
// separate byte array instead of a sentinel key. Not thread-safe.
#ifndef CLPOOL_TRACE_ID_MAP_H_
#define CLPOOL_TRACE_ID_MAP_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace clpool::trace {

// V must be default-constructible and move-assignable. Pointers returned by find() and insert()
// are invalidated by the next insert or erase.
template <class V>
class flat_id_map {
 public:
  flat_id_map() { rehash(16); }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  // The value of `key`, or nullptr.
  V* find(std::uint64_t key) noexcept {
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
      slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == key) return &s.value;
    }
  }

  // Starts loading the cache line where a lookup of `key` begins, so that a lookup a little later
  // does not wait for memory (replay prefetches the next event's id while applying this one).
  void prefetch(std::uint64_t key) const noexcept { __builtin_prefetch(&slots_[slot_of(key)]); }

  // Inserts `key` -> `value`. Returns the stored value, or nullptr (and changes nothing) when
  // `key` is already present.
  V* insert(std::uint64_t key, V value) {
    // Load factor <= 1/2: linear probing degrades sharply above that (expected probes for a
    // miss grow as 1 / (1 - load)^2), and the live set is small next to the trace.
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    std::size_t i = slot_of(key);
    for (; slots_[i].used; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return nullptr;
    }
    slot& s = slots_[i];
    s.used = true;
    s.key = key;
    s.value = std::move(value);
    ++size_;
    return &s.value;
  }

  // Removes `key`, moving its value into `*out` when `out` is not null. False if absent.
  bool erase(std::uint64_t key, V* out = nullptr) {
    std::size_t i = slot_of(key);
    for (;; i = (i + 1) & mask_) {
      if (!slots_[i].used) return false;
      if (slots_[i].key == key) break;
    }
    if (out != nullptr) *out = std::move(slots_[i].value);
    slots_[i].value = V();
    // Backward shift: pull later members of the probe run into the hole when their home slot
    // allows it, so lookups never need tombstones.
    std::size_t hole = i;
    for (std::size_t j = (i + 1) & mask_; slots_[j].used; j = (j + 1) & mask_) {
      const std::size_t home = slot_of(slots_[j].key);
      // Movable when `home` is not cyclically in (hole, j].
      const bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
      if (movable) {
        slots_[hole].key = slots_[j].key;
        slots_[hole].value = std::move(slots_[j].value);
        slots_[j].value = V();
        hole = j;
      }
    }
    slots_[hole].used = false;
    --size_;
    return true;
  }

  // Calls f(key, value&) for every entry, in no particular order.
  template <class F>
  void for_each(F&& f) {
    for (slot& s : slots_) {
      if (s.used) f(s.key, s.value);
    }
  }

  // Removes everything (values are destroyed in no particular order) and shrinks.
  void clear() {
    slots_.clear();
    size_ = 0;
    rehash(16);
  }

 private:
  // Key, flag and value side by side: a lookup touches one cache line, not three arrays.
  struct slot {
    std::uint64_t key = 0;
    bool used = false;
    V value{};
  };

  std::size_t slot_of(std::uint64_t key) const noexcept {
    // Fibonacci hashing: the high bits of key * 2^64/phi. Ids from aligned pointers differ only in
    // high bits, and this spreads them too.
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  void rehash(std::size_t new_capacity) {
    std::vector<slot> old(new_capacity);
    old.swap(slots_);
    mask_ = new_capacity - 1;
    shift_ = 64;
    for (std::size_t c = new_capacity; c > 1; c >>= 1) --shift_;
    size_ = 0;
    for (slot& s : old) {
      if (!s.used) continue;
      std::size_t j = slot_of(s.key);
      while (slots_[j].used) j = (j + 1) & mask_;
      slots_[j].used = true;
      slots_[j].key = s.key;
      slots_[j].value = std::move(s.value);
      ++size_;
    }
  }

  std::vector<slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;
};

// A set of live ids.
struct empty_value {};
using flat_id_set = flat_id_map<empty_value>;

}  // namespace clpool::trace

#endif  // CLPOOL_TRACE_ID_MAP_H_
