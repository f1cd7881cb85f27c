// The pool's free lists: one stack of held blocks per bin, indexed by bin id, plus a bitmap of
// non-empty bins so "the largest held block" is found without walking every bin.
//
// Not synchronised: the owning pool_state guards it with its lock.
#ifndef CLPOOL_POOL_HELD_BLOCKS_H_
#define CLPOOL_POOL_HELD_BLOCKS_H_

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <vector>

#include "pool/bins.h"

namespace clpool::detail {

template <class Handle>
class held_blocks {
 public:
  explicit held_blocks(unsigned leading_bits) : leading_bits_(leading_bits) {}

  // Takes a block from `bin`'s list, if it has one. O(1): the hit path.
  bool try_pop(bin_id bin, Handle& out) noexcept {
    if (bin >= list_count_) return false;
    std::vector<Handle>& list = lists_[bin];
    if (list.empty()) return false;
    out = list.back();
    list.pop_back();
    if (list.empty()) clear_bit(bin);
    return true;
  }

  // Adds a block to `bin`'s list if that needs no allocation (the list exists and has spare
  // capacity): the release fast path. Returns false, changing nothing, otherwise.
  bool try_push_no_alloc(bin_id bin, const Handle& handle) noexcept {
    if (bin >= list_count_) return false;
    std::vector<Handle>& list = lists_[bin];
    if (list.size() == list.capacity()) return false;
    list.push_back(handle);  // cannot reallocate: capacity was checked
    nonempty_[bin / 64] |= std::uint64_t{1} << (bin % 64);
    return true;
  }

  // Adds a block to `bin`'s list. Amortised O(1). Throws std::bad_alloc, leaving nothing changed,
  // if a list cannot grow.
  void push(bin_id bin, const Handle& handle) {
    if (bin >= list_count_) [[unlikely]] grow(bin);
    lists_[bin].push_back(handle);
    nonempty_[bin / 64] |= std::uint64_t{1} << (bin % 64);
  }

  // The highest bin that holds a block (the largest blocks), if any.
  std::optional<bin_id> largest_nonempty_bin() const noexcept {
    for (std::size_t w = nonempty_.size(); w-- > 0;) {
      if (nonempty_[w] != 0) {
        return bin_id{w * 64 + 63 - static_cast<unsigned>(std::countl_zero(nonempty_[w]))};
      }
    }
    return std::nullopt;
  }

  // Walks every held block as (bin, handle).
  template <class F>
  void for_each(F&& f) const {
    for (bin_id bin = 0; bin < lists_.size(); ++bin) {
      for (const Handle& h : lists_[bin]) f(bin, h);
    }
  }

  // Calls f(bin, count) for every non-empty bin, smallest bin first.
  template <class F>
  void for_each_bin(F&& f) const {
    for (bin_id bin = 0; bin < lists_.size(); ++bin) {
      if (!lists_[bin].empty()) f(bin, static_cast<std::uint64_t>(lists_[bin].size()));
    }
  }

  // Removes every block, handing each to `f(bin, handle)`.
  template <class F>
  void drain(F&& f) {
    for (bin_id bin = 0; bin < lists_.size(); ++bin) {
      for (const Handle& h : lists_[bin]) f(bin, h);
      lists_[bin].clear();
    }
    std::fill(nonempty_.begin(), nonempty_.end(), 0);
  }

  // Checks that the bitmap agrees with the lists. For invariant assertions and tests.
  bool is_valid() const {
    if (list_count_ != lists_.size()) return false;
    if (nonempty_.size() != (lists_.empty() ? 0 : (lists_.size() - 1) / 64 + 1)) return false;
    for (bin_id bin = 0; bin < lists_.size(); ++bin) {
      const bool bit = (nonempty_[bin / 64] >> (bin % 64)) & 1;
      if (bit == lists_[bin].empty()) return false;
      if (!lists_[bin].empty() && !bin_is_valid(bin, leading_bits_)) return false;
    }
    return true;
  }

 private:
  // The first release into a bin beyond the table: grow it (rare, so kept off the release path).
  [[gnu::noinline]] void grow(bin_id bin) {
    lists_.resize(bin + 1);
    nonempty_.resize(bin / 64 + 1, 0);
    list_count_ = lists_.size();
  }

  void clear_bit(bin_id bin) noexcept { nonempty_[bin / 64] &= ~(std::uint64_t{1} << (bin % 64)); }

  unsigned leading_bits_;
  std::vector<std::vector<Handle>> lists_;  // index: bin id; grown on first release into a bin
  std::size_t list_count_ = 0;              // lists_.size(), kept to spare the hit path a division
  std::vector<std::uint64_t> nonempty_;     // bit b set <=> lists_[b] is not empty
};

}  // namespace clpool::detail

#endif  // CLPOOL_POOL_HELD_BLOCKS_H_
