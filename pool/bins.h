// Size bins, following PyOpenCL's documented scheme.
//
// A bin is identified by the position of a size's highest set bit (its exponent) together with
// the `leading_bits` bits that follow that bit (its mantissa). Every size in a bin is rounded up
// to the largest size in the bin, so blocks in one bin are interchangeable. Sizes below
// 2^leading_bits have no bits to drop, so they are exact.
//
//   bin_number(size) = exponent << leading_bits | mantissa
//   alloc_size(bin)  = (1 mantissa) followed by ones in every dropped bit position
//
// With leading_bits = 4, 1 MiB (exponent 20, mantissa 0) rounds to 2^20 + 2^16 - 1 = 1,114,111
// bytes, the figure PyOpenCL reports. The relative waste is always below 2^-leading_bits.
//
// Everything is exact for every 64-bit size: the largest size, 2^64 - 1, is its own bin's
// alloc_size, so no rounding can overflow (PyCUDA's pool once computed this in 32 bits).
#ifndef CLPOOL_POOL_BINS_H_
#define CLPOOL_POOL_BINS_H_

#include <bit>
#include <cstdint>

namespace clpool {

// A bin's number: a dense index, so a bin's free list is found by indexing, not searching.
using bin_id = std::uint64_t;

// PyOpenCL's default.
inline constexpr unsigned default_leading_bits = 4;

// The largest leading_bits accepted. A pool allocates its free lists a row of 2^leading_bits
// bins at a time (one row per exponent used) and keeps a bitmap of 64 << leading_bits bits; 12
// keeps a row at 96 KiB and the bitmap at 32 KiB.
inline constexpr unsigned max_leading_bits = 12;

// True when `leading_bits` is an accepted value, 0 to max_leading_bits inclusive.
constexpr bool leading_bits_is_valid(unsigned leading_bits) {
  return leading_bits <= max_leading_bits;
}

// The number of distinct bin ids for `leading_bits`: every id is below this.
// Precondition: leading_bits_is_valid(leading_bits).
constexpr std::uint64_t bin_count(unsigned leading_bits) {
  return std::uint64_t{64} << leading_bits;
}

// The bin holding `size`. Size 0 shares bin 0 with size 1 (a pool never allocates it).
// Precondition: leading_bits_is_valid(leading_bits).
constexpr bin_id bin_number(std::uint64_t size, unsigned leading_bits) {
  if (size == 0) return 0;
  const unsigned exponent = 63u - static_cast<unsigned>(std::countl_zero(size));
  const std::uint64_t mantissa_mask = (std::uint64_t{1} << leading_bits) - 1;
  const std::uint64_t mantissa = exponent >= leading_bits
                                     ? (size >> (exponent - leading_bits)) & mantissa_mask
                                     : (size << (leading_bits - exponent)) & mantissa_mask;
  return (std::uint64_t{exponent} << leading_bits) | mantissa;
}

// The largest size in `bin`: what a request in that bin is rounded up to.
// Precondition: leading_bits_is_valid(leading_bits) and bin < bin_count(leading_bits).
constexpr std::uint64_t alloc_size(bin_id bin, unsigned leading_bits) {
  const unsigned exponent = static_cast<unsigned>(bin >> leading_bits);
  const std::uint64_t mantissa = bin & ((std::uint64_t{1} << leading_bits) - 1);
  // The highest set bit followed by the mantissa: leading_bits + 1 bits in all.
  const std::uint64_t head = (std::uint64_t{1} << leading_bits) | mantissa;
  if (exponent >= leading_bits) {
    const unsigned dropped = exponent - leading_bits;
    return (head << dropped) | ((std::uint64_t{1} << dropped) - 1);
  }
  return head >> (leading_bits - exponent);
}

// A request's bin and rounded size, computed together for the pool's hit path: the rounded size
// is the size with every dropped bit set, so no second shift sequence is needed.
// Equal to {bin_number(size, lb), alloc_size(bin_number(size, lb), lb)} for size > 0, and
// `exponent` is bin >> lb (the position of the size's highest set bit), which the hit path would
// otherwise shift back out of the bin.
struct bin_and_size {
  bin_id bin;
  std::uint64_t rounded;
  unsigned exponent;
};

// Precondition: size > 0 and leading_bits_is_valid(leading_bits).
constexpr bin_and_size locate(std::uint64_t size, unsigned leading_bits) {
  const unsigned exponent = 63u - static_cast<unsigned>(std::countl_zero(size));
  const std::uint64_t mantissa_mask = (std::uint64_t{1} << leading_bits) - 1;
  if (exponent >= leading_bits) {
    const unsigned dropped = exponent - leading_bits;
    return {(std::uint64_t{exponent} << leading_bits) | ((size >> dropped) & mantissa_mask),
            size | ((std::uint64_t{1} << dropped) - 1), exponent};
  }
  return {(std::uint64_t{exponent} << leading_bits) |
              ((size << (leading_bits - exponent)) & mantissa_mask),
          size, exponent};
}

// True when some size maps to `bin`. Below exponent leading_bits, the mantissa's low bits are
// always zero, so not every id in [0, bin_count) is reachable.
constexpr bool bin_is_valid(bin_id bin, unsigned leading_bits) {
  if (!leading_bits_is_valid(leading_bits) || bin >= bin_count(leading_bits)) return false;
  return bin_number(alloc_size(bin, leading_bits), leading_bits) == bin;
}

// The size a request of `size` bytes is rounded up to.
constexpr std::uint64_t rounded_size(std::uint64_t size, unsigned leading_bits) {
  return size == 0 ? 0 : alloc_size(bin_number(size, leading_bits), leading_bits);
}

// The bin that rounds sizes up to `largest` above it: the one holding `largest` when its size is
// larger; bin_count() when there is none (`largest` is its bin's size, or 0: no limit known).
// Either way every bin holding a size up to `largest` other than it rounds within `largest`, and
// every bin above the one holding `largest` holds only larger sizes.
// Precondition: leading_bits_is_valid(leading_bits).
constexpr bin_id straddling_bin(std::uint64_t largest, unsigned leading_bits) {
  if (largest == 0) return bin_count(leading_bits);
  const bin_id bin = bin_number(largest, leading_bits);
  return alloc_size(bin, leading_bits) > largest ? bin : bin_count(leading_bits);
}

static_assert(alloc_size(bin_number(std::uint64_t{1} << 20, 4), 4) == 1'114'111,
              "PyOpenCL rounds 1 MiB to 1,114,111 bytes with 4 leading bits");
static_assert(rounded_size(~std::uint64_t{0}, max_leading_bits) == ~std::uint64_t{0},
              "the largest size is its own bin's size: no rounding overflows");
static_assert(locate(1000, 4).bin == bin_number(1000, 4) && locate(1000, 4).rounded == 1023 &&
                  locate(1000, 4).exponent == 9,
              "locate() agrees with bin_number() and alloc_size()");
static_assert(straddling_bin(std::uint64_t{1} << 30, 4) == bin_number(std::uint64_t{1} << 30, 4) &&
                  straddling_bin((std::uint64_t{1} << 30) - 1, 4) == bin_count(4) &&
                  straddling_bin(~std::uint64_t{0}, 4) == bin_count(4) &&
                  straddling_bin(0, 4) == bin_count(4),
              "2^30 rounds above itself; 2^30 - 1 and 2^64 - 1 are their bins' sizes; 0 is none");
static_assert(rounded_size(15, 4) == 15 && rounded_size(31, 4) == 31 && rounded_size(32, 4) == 33,
              "sizes below 2^(leading_bits + 1) are exact; above, the dropped bits round up");

}  // namespace clpool

#endif  // CLPOOL_POOL_BINS_H_
