// device_memory: the one ledger of a device's memory. Every simulated device in clpool (mockcl's
// devices, clpool_replay's simulated device, the layer's budget, the pool's fake test device)
// commits and releases through one of these, so what "N bytes fit" means is written once, by the
// device's profile (profile.h):
//
//   usable     = capacity - headroom (the driver keeps the headroom for itself)
//   a request  > pack_limit  commits whole pages: round_up(bytes, page)
//   a request <= pack_limit  is rounded up to pack_granule and placed in a shared page, at the
//                            start of the smallest free run of granules that holds it, of all
//                            shared pages (of equal runs, the one that has been that size
//                            longest), else at the start of a new page
//   committed  = bytes of whole-page requests + page * shared pages open; a request fits when
//                what it adds to committed keeps committed <= usable
//   release    gives the request's bytes back at once, its granules joining the free runs beside
//              them; a shared page closes when it empties
//
// With the exact profile (page 1) committed is the sum of the requests, and commit/release are a
// compare and an add, inline.
//
// Why placed, and why best fit over free runs: space freed inside a shared page is a hole that
// only a request no larger than that hole can use. An NVIDIA H200 showed it: on seven traces
// that mix 1 KiB to 64 MiB buffers without a pool (tools/replay/testdata/boundary), trials at
// 64 KiB steps around each smallest capacity agreed with this rule in all 1799 trials, and with
// the earlier model, which counted a page's free granules as one run, in 1725 (the four traces
// with frees needed 384 KiB to 1.125 MiB more than it said; the three without frees agreed in
// every trial either way). Choosing a page first (best fit by its largest run, the most or
// least recently used, the lowest, the oldest, the newest) and then a run in it agreed in 1714
// to 1768. Between equal runs the data chose too, though with fewer trials to spare: the one
// that has been that size longest agreed in 1799, the lowest page and offset in 1797, the
// newest in 1795. The same trials are //tools/replay:h200_boundary_test.
// It also keeps tools/replay/examples/pyopencl_layer.trace at the H100's measured free memory.
//
// A plain value: not thread-safe (each user already serialises its device), no OpenCL.
#ifndef CLPOOL_DEVICE_MODEL_DEVICE_MEMORY_H_
#define CLPOOL_DEVICE_MODEL_DEVICE_MEMORY_H_

#include <cstdint>
#include <vector>

#include "device_model/profile.h"

namespace clpool::device_model {

// What committing one request took, so that releasing it gives back exactly that.
struct placement {
  static constexpr std::uint32_t no_page = ~std::uint32_t{0};
  std::uint64_t whole = 0;       // bytes of whole pages (or exact bytes) it holds
  std::uint32_t page = no_page;  // its shared page, or no_page
  std::uint32_t granules = 0;    // its share of that page, in pack granules
  std::uint32_t offset = 0;      // where in that page it starts, in pack granules
};

class device_memory {
 public:
  // A device of `capacity` bytes (its free memory when the program starts) with `profile`'s rules.
  device_memory(const device_profile& profile, std::uint64_t capacity);

  // Commits a request of `bytes` (> 0). Returns false, changing nothing, when it does not fit.
  bool try_commit(std::uint64_t bytes, placement& out) {
    if (exact_) [[likely]] {
      if (bytes > usable_ || committed_ > usable_ - bytes) return false;
      out.whole = bytes;
      out.page = placement::no_page;
      whole_ += bytes;
      add_committed(bytes);
      requested_ += bytes;
      return true;
    }
    return try_commit_paged(bytes, out);
  }
  // Releases what try_commit(bytes, p) took.
  void release(const placement& p, std::uint64_t bytes) noexcept {
    requested_ -= bytes;
    if (p.page == placement::no_page) [[likely]] {
      committed_ -= p.whole;
      whole_ -= p.whole;
      return;
    }
    release_shared(p);
  }

  // Whether try_commit(bytes) would succeed now; changes nothing.
  bool fits(std::uint64_t bytes) const noexcept;

  // What a lone request of `bytes` adds to committed on an empty device: what the profile's
  // rounding makes of it (a shared request counts its granules).
  std::uint64_t rounded(std::uint64_t bytes) const noexcept;

  // A new capacity for later commits; what is committed stays (and may exceed it).
  void set_capacity(std::uint64_t capacity) noexcept {
    capacity_ = capacity;
    usable_ = capacity > profile_.headroom ? capacity - profile_.headroom : 0;
  }

  std::uint64_t capacity() const noexcept { return capacity_; }
  std::uint64_t usable() const noexcept { return usable_; }
  std::uint64_t committed() const noexcept { return committed_; }
  std::uint64_t peak_committed() const noexcept { return peak_; }
  // Sum of the sizes of the requests committed now; committed() - requested() is lost to the
  // device's rounding (pages, packing granules, partly filled shared pages).
  std::uint64_t requested() const noexcept { return requested_; }
  std::uint64_t free_bytes() const noexcept {
    return committed_ < usable_ ? usable_ - committed_ : 0;
  }
  std::uint64_t shared_pages_open() const noexcept { return shared_open_; }
  const device_profile& profile() const noexcept { return profile_; }

  // Invariants: committed = whole-page bytes + page * open shared pages, an open page is not
  // empty, the candidates are exactly the open pages with room. O(pages); for tests.
  bool state_is_valid() const;

 private:
  static constexpr std::uint32_t no_run = ~std::uint32_t{0};
  // A free run of granules in an open shared page, and its links in the list of runs of its
  // size (oldest first).
  struct run {
    std::uint32_t granules = 0, page = 0, offset = 0;
    std::uint32_t newer = no_run, older = no_run;
  };
  struct shared_page {
    std::uint32_t free_granules = 0;
    std::uint32_t requests = 0;       // placed in it now
    std::vector<std::uint32_t> runs;  // its free runs, by offset (slots of runs_)
    bool open = false;
  };
  void add_committed(std::uint64_t bytes) noexcept {
    committed_ += bytes;
    if (committed_ > peak_) peak_ = committed_;
  }
  bool try_commit_paged(std::uint64_t bytes, placement& out);
  void release_shared(const placement& p) noexcept;
  // The size index: the runs of g granules in the order they came to be that size, from
  // oldest_of_size_[g] to newest_of_size_[g]; bit g of has_size_ says whether there are any, so
  // a best fit is a bit scan.
  void link(std::uint32_t r) noexcept;
  void unlink(std::uint32_t r) noexcept;
  std::uint32_t best_fit(std::uint32_t granules) const noexcept;
  std::uint32_t new_run(std::uint32_t granules, std::uint32_t page, std::uint32_t offset) noexcept;
  void drop_run(std::uint32_t r) noexcept;

  device_profile profile_;
  bool exact_;
  std::uint64_t capacity_, usable_;
  std::uint64_t committed_ = 0, peak_ = 0, requested_ = 0, whole_ = 0;
  std::uint32_t granules_per_page_ = 0;
  std::uint64_t shared_open_ = 0;
  std::vector<shared_page> pages_;
  std::vector<std::uint32_t> closed_pages_;  // slots of pages_ to reuse
  // Every free run of every open shared page. Capacity is reserved at each commit for the runs
  // a release may add, so release never allocates.
  std::vector<run> runs_;
  std::vector<std::uint32_t> spare_runs_;  // slots of runs_ to reuse
  std::vector<std::uint32_t> oldest_of_size_, newest_of_size_;
  std::vector<std::uint64_t> has_size_;
  std::uint64_t shared_requests_ = 0;  // requests in shared pages now
};

// What the profile's rounding makes of a lone request of `bytes`: whole pages above pack_limit,
// pack granules at or below it (exact bytes with the exact profile). device_memory::rounded().
inline std::uint64_t profile_rounded(const device_profile& p, std::uint64_t bytes) noexcept {
  if (bytes <= p.pack_limit) {
    const std::uint64_t g = p.pack_granule;
    return (bytes + g - 1) / g * g;
  }
  const std::uint64_t page = p.page;
  const std::uint64_t pages = bytes / page + (bytes % page != 0);
  return pages > ~std::uint64_t{0} / page ? ~std::uint64_t{0} : pages * page;
}

// True when a request of `bytes` is refused as CL_INVALID_BUFFER_SIZE on a device reporting
// `max_alloc` as CL_DEVICE_MAX_MEM_ALLOC_SIZE (only where the profile says it is enforced).
inline bool exceeds_max_alloc(const device_profile& p, std::uint64_t bytes,
                              std::uint64_t max_alloc) {
  return p.max_alloc_enforced && bytes > max_alloc;
}

}  // namespace clpool::device_model

#endif  // CLPOOL_DEVICE_MODEL_DEVICE_MEMORY_H_
