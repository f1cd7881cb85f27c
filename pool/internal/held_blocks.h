// The pool's free lists: one stack of held blocks per bin, plus a bitmap of non-empty bins.
//
// Layout: bins are grouped by exponent into 64 rows of 2^leading_bits lists each, and a row is
// allocated on the first release into one of its bins. Finding a bin's list is two indexing
// steps (row, then column), never a search, and a pool that only ever sees a few sizes pays for
// a few rows, not for a dense table up to its largest bin (which reached 6 MiB per pool at
// leading_bits 12 with one block near 2^63).
//
// The bitmap (bit b set when bin b's list may be non-empty; always set when it is) lets "the
// largest held block" and every walk (for_each, for_each_bin, drain, is_valid, take_census) visit
// only bins that were pushed to, so their cost is the number of such bins plus one word per 64
// bins up to the highest bin ever used. A push sets the bit; a pop leaves it, so the hit path and
// the release path each do one bitmap write fewer than an exact bitmap would need (a hit that
// empties a list and a release that refills it is the pool's most common pair). Bits of lists found
// empty are cleared by largest_nonempty_bin() and drain().
//
// Not synchronised: the owning pool_state guards it with its lock.
#ifndef CLPOOL_POOL_INTERNAL_HELD_BLOCKS_H_
#define CLPOOL_POOL_INTERNAL_HELD_BLOCKS_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "pool/bins.h"
#include "pool/internal/invariant.h"

namespace clpool::internal {

template <class Handle>
class held_blocks {
 public:
  // Precondition: leading_bits_is_valid(leading_bits).
  explicit held_blocks(unsigned leading_bits)
      : leading_bits_(leading_bits),
        column_mask_((bin_id{1} << leading_bits) - 1),
        marked_(std::make_unique<std::uint64_t[]>(word_count(leading_bits))) {}

  held_blocks(const held_blocks&) = delete;
  held_blocks& operator=(const held_blocks&) = delete;

  // Takes a block from `bin`'s list, if it has one. O(1). (The pool's allocate fast path uses the
  // overload below, with the exponent it already has.)
  [[gnu::always_inline]] bool try_pop(bin_id bin, Handle& out) noexcept {
    return try_pop(bin, static_cast<unsigned>(bin >> leading_bits_), out);
  }

  // try_pop() for a caller that has the bin's exponent (bin >> leading_bits) at hand.
  // Precondition: exponent == bin >> leading_bits.
  [[gnu::always_inline]] bool try_pop(bin_id bin, unsigned exponent, Handle& out) noexcept {
    CLPOOL_ASSERT(exponent == bin >> leading_bits_);
    std::vector<Handle>* row = rows_[exponent].get();
    if (row == nullptr) return false;
    std::vector<Handle>& list = row[bin & column_mask_];
    if (list.empty()) return false;
    out = list.back();
    list.pop_back();  // the bin's bit stays set: see the file comment
    return true;
  }

  // Adds a block to `bin`'s list if that needs no allocation (the row exists and the list has
  // spare capacity): the release fast path. Returns false, changing nothing, otherwise.
  [[gnu::always_inline]] bool try_push_no_alloc(bin_id bin, const Handle& handle) noexcept {
    std::vector<Handle>* row = rows_[bin >> leading_bits_].get();
    if (row == nullptr) return false;
    std::vector<Handle>& list = row[bin & column_mask_];
    if (list.size() == list.capacity()) return false;
    list.push_back(handle);  // cannot reallocate: capacity was checked
    // top_word_ already covers this bin: the list got its capacity from push(), which raised it.
    set_bit(bin);
    return true;
  }

  // Adds a block to `bin`'s list. Amortised O(1). Throws std::bad_alloc, leaving nothing changed,
  // if a row cannot be allocated or a list cannot grow.
  void push(bin_id bin, const Handle& handle) {
    std::unique_ptr<std::vector<Handle>[]>& row = rows_[bin >> leading_bits_];
    if (row == nullptr) [[unlikely]]
      row = std::make_unique<std::vector<Handle>[]>(column_mask_ + 1);
    row[bin & column_mask_].push_back(handle);
    set_bit(bin);
    top_word_ = std::max(top_word_, bin / 64 + 1);
  }

  // The highest bin that holds a block (the largest blocks), if any. O(words up to the highest
  // bin ever used, plus bins emptied since they were last looked at), amortised: clears the bits
  // of the empty lists it passes.
  std::optional<bin_id> largest_nonempty_bin() noexcept {
    for (std::uint64_t w = top_word_; w-- > 0;) {
      while (marked_[w] != 0) {
        const bin_id bin = w * 64 + 63 - static_cast<unsigned>(std::countl_zero(marked_[w]));
        if (!list(bin).empty()) return bin;
        clear_bit(bin);
      }
    }
    return std::nullopt;
  }

  // Walks every held block as (bin, handle), smallest bin first.
  template <class F>
  void for_each(F&& f) const {
    for_each_marked([&](bin_id bin) {
      for (const Handle& h : list(bin)) f(bin, h);
    });
  }

  // Calls f(bin, count) for every non-empty bin, smallest bin first.
  template <class F>
  void for_each_bin(F&& f) const {
    for_each_marked([&](bin_id bin) {
      if (!list(bin).empty()) f(bin, static_cast<std::uint64_t>(list(bin).size()));
    });
  }

  // Removes every block, handing each to `f(bin, handle)`.
  template <class F>
  void drain(F&& f) {
    for_each_marked([&](bin_id bin) {
      std::vector<Handle>& l = list(bin);
      for (const Handle& h : l) f(bin, h);
      l.clear();
    });
    std::fill(marked_.get(), marked_.get() + top_word_, 0);
  }

  // Checks the bitmap against the lists for every bin whose bit is set: its row exists and the
  // bin is one some size maps to. A non-empty list whose bit is clear is invisible to every walk,
  // so callers detect it by comparing what take_census() counts with their own block count
  // (pool_state does). O(marked bins + words up to the highest bin ever used).
  bool is_valid() const { return take_census().valid; }

  // is_valid()'s check and the totals an owner compares with its own counters, in one walk.
  struct census {
    bool valid = true;         // what is_valid() returns
    std::uint64_t blocks = 0;  // blocks held
    std::uint64_t bytes = 0;   // their bytes, each block counted at its bin's size (mod 2^64)
  };
  census take_census() const {
    census c;
    if (top_word_ > word_count(leading_bits_)) {
      c.valid = false;
      return c;
    }
    for_each_marked([&](bin_id bin) {
      if (rows_[bin >> leading_bits_] == nullptr || !bin_is_valid(bin, leading_bits_)) {
        c.valid = false;
        return;
      }
      const std::uint64_t n = list(bin).size();
      c.blocks += n;
      c.bytes += n * alloc_size(bin, leading_bits_);
    });
    return c;
  }

 private:
  static std::uint64_t word_count(unsigned leading_bits) noexcept {
    return bin_count(leading_bits) / 64;  // bin_count is 64 << leading_bits: always whole words
  }

  // Precondition: bin's row exists (true whenever its bit is set).
  std::vector<Handle>& list(bin_id bin) const noexcept {
    return rows_[bin >> leading_bits_][bin & column_mask_];
  }

  // Calls f(bin) for every bin whose bit is set (a superset of the non-empty bins), smallest
  // first.
  template <class F>
  void for_each_marked(F&& f) const {
    for (std::uint64_t w = 0; w < top_word_; ++w) {
      for (std::uint64_t bits = marked_[w]; bits != 0; bits &= bits - 1) {
        f(bin_id{w * 64 + static_cast<unsigned>(std::countr_zero(bits))});
      }
    }
  }

  void set_bit(bin_id bin) noexcept { marked_[bin / 64] |= std::uint64_t{1} << (bin % 64); }
  void clear_bit(bin_id bin) noexcept { marked_[bin / 64] &= ~(std::uint64_t{1} << (bin % 64)); }

  const unsigned leading_bits_;
  const bin_id column_mask_;  // 2^leading_bits - 1: a bin's index within its row
  // rows_[exponent][mantissa]: the lists of the bins with that exponent; null until first used.
  std::array<std::unique_ptr<std::vector<Handle>[]>, 64> rows_ {};
  std::unique_ptr<std::uint64_t[]> marked_;  // word_count(leading_bits) words: bin b's bit
  std::uint64_t top_word_ = 0;               // words [top_word_, word_count) are all zero
};

}  // namespace clpool::internal

#endif  // CLPOOL_POOL_INTERNAL_HELD_BLOCKS_H_
