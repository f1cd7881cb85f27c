// handle_table<T>: the replay devices' blocks, named by small non-zero handles. A released slot
// is reused, so the table follows the blocks alive at once, not every block ever made; release
// never allocates (room for every slot on the free list is kept), so a noexcept deallocate may
// use it.
#ifndef CLPOOL_REPLAY_HANDLE_TABLE_H_
#define CLPOOL_REPLAY_HANDLE_TABLE_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace clpool::replay {

template <class T>
class handle_table {
 public:
  // Stores `value` and returns its handle (>= 1).
  std::uint64_t insert(T value) {
    std::uint64_t handle;
    if (!free_.empty()) {
      handle = free_.back();
      free_.pop_back();
    } else {
      slots_.emplace_back();
      free_.reserve(slots_.capacity());
      handle = slots_.size();
    }
    slots_[handle - 1] = std::move(value);
    return handle;
  }
  T& operator[](std::uint64_t handle) { return slots_[handle - 1]; }
  // Resets the slot to T{} and recycles its handle.
  void erase(std::uint64_t handle) noexcept {
    slots_[handle - 1] = T{};
    free_.push_back(handle);
  }
  // Calls f(handle, value) for every slot, live or free (a free one holds T{}).
  template <class F>
  void for_each_slot(F f) {
    for (std::uint64_t h = 1; h <= slots_.size(); ++h) f(h, slots_[h - 1]);
  }

 private:
  std::vector<T> slots_;  // handle h is slots_[h - 1]
  std::vector<std::uint64_t> free_;
};

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_HANDLE_TABLE_H_
