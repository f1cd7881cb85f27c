// flat_id_map<V>: an open-addressing hash map from 64-bit ids to values, for the live set of a
// trace. The reader and the replay engine do one lookup per event, so this is on the hot path:
// one flat array, linear probing, no allocation per insert, and backward-shift deletion (no
// tombstones, so a long trace with heavy id reuse never degrades). Memory is proportional to the
// peak live set, not to the trace length.
//
// Every u64 is a valid key (ids come from pointers, counters, anything), so occupancy is kept in a
// separate byte array instead of a sentinel key. Not thread-safe.
#ifndef CLPOOL_TOOLS_TRACE_ID_MAP_H_
#define CLPOOL_TOOLS_TRACE_ID_MAP_H_

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
      if (!used_[i]) return nullptr;
      if (keys_[i] == key) return &values_[i];
    }
  }

  // Inserts `key` → `value`. Returns the stored value, or nullptr (and changes nothing) when
  // `key` is already present.
  V* insert(std::uint64_t key, V value) {
    if ((size_ + 1) * 8 > capacity() * 7) rehash(capacity() * 2);  // load factor <= 7/8
    std::size_t i = slot_of(key);
    for (; used_[i]; i = (i + 1) & mask_) {
      if (keys_[i] == key) return nullptr;
    }
    used_[i] = 1;
    keys_[i] = key;
    values_[i] = std::move(value);
    ++size_;
    return &values_[i];
  }

  // Removes `key`, moving its value into `*out` when `out` is not null. False if absent.
  bool erase(std::uint64_t key, V* out = nullptr) {
    std::size_t i = slot_of(key);
    for (;; i = (i + 1) & mask_) {
      if (!used_[i]) return false;
      if (keys_[i] == key) break;
    }
    if (out != nullptr) *out = std::move(values_[i]);
    values_[i] = V();
    // Backward shift: pull later members of the probe run into the hole when their home slot
    // allows it, so lookups never need tombstones.
    std::size_t hole = i;
    for (std::size_t j = (i + 1) & mask_; used_[j]; j = (j + 1) & mask_) {
      const std::size_t home = slot_of(keys_[j]);
      // Movable when `home` is not cyclically in (hole, j].
      const bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
      if (movable) {
        keys_[hole] = keys_[j];
        values_[hole] = std::move(values_[j]);
        values_[j] = V();
        hole = j;
      }
    }
    used_[hole] = 0;
    --size_;
    return true;
  }

  // Calls f(key, value&) for every entry, in no particular order.
  template <class F>
  void for_each(F&& f) {
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      if (used_[i]) f(keys_[i], values_[i]);
    }
  }

  // Removes everything (values are destroyed in no particular order) and shrinks.
  void clear() {
    keys_.clear();
    values_.clear();
    used_.clear();
    size_ = 0;
    rehash(16);
  }

 private:
  std::size_t capacity() const noexcept { return keys_.size(); }

  std::size_t slot_of(std::uint64_t key) const noexcept {
    // Fibonacci hashing: the high bits of key * 2^64/phi. Ids from aligned pointers differ only in
    // high bits, and this spreads them too.
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  void rehash(std::size_t new_capacity) {
    std::vector<std::uint64_t> old_keys(new_capacity);
    std::vector<V> old_values(new_capacity);
    std::vector<unsigned char> old_used(new_capacity, 0);
    old_keys.swap(keys_);
    old_values.swap(values_);
    old_used.swap(used_);
    mask_ = new_capacity - 1;
    shift_ = 64;
    for (std::size_t c = new_capacity; c > 1; c >>= 1) --shift_;
    size_ = 0;
    for (std::size_t i = 0; i < old_keys.size(); ++i) {
      if (!old_used[i]) continue;
      std::size_t j = slot_of(old_keys[i]);
      while (used_[j]) j = (j + 1) & mask_;
      used_[j] = 1;
      keys_[j] = old_keys[i];
      values_[j] = std::move(old_values[i]);
      ++size_;
    }
  }

  std::vector<std::uint64_t> keys_;
  std::vector<V> values_;
  std::vector<unsigned char> used_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;
};

// A set of live ids.
struct empty_value {};
using flat_id_set = flat_id_map<empty_value>;

}  // namespace clpool::trace

#endif  // CLPOOL_TOOLS_TRACE_ID_MAP_H_
