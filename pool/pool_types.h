// Plain value types a memory_pool reports and accepts: counters, statistics, events, options.
#ifndef CLPOOL_POOL_POOL_TYPES_H_
#define CLPOOL_POOL_POOL_TYPES_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "pool/bins.h"
#include "pool/errors.h"

namespace clpool {

// The pool's accounting at one instant. At quiescence (no call in flight):
//   managed_bytes == active_rounded_bytes + held_bytes
// and managed_bytes is exactly what the allocator has outstanding on the pool's behalf.
struct pool_counters {
  std::uint64_t held_blocks = 0;           // blocks the pool keeps for reuse
  std::uint64_t active_blocks = 0;         // blocks in live allocations
  std::uint64_t held_bytes = 0;            // rounded bytes of held blocks
  std::uint64_t active_bytes = 0;          // requested bytes of live allocations
  std::uint64_t active_rounded_bytes = 0;  // rounded bytes of live allocations
  std::uint64_t managed_bytes = 0;         // held + active rounded (+ requests in flight)
  std::uint64_t limit_bytes = unlimited;   // the pool's limit, or `unlimited`
};

// Cumulative statistics since the pool was made. Every successful non-empty request is exactly
// one hit or one miss; every failed one is one ooms_raised.
struct pool_statistics {
  std::uint64_t peak_active_bytes = 0;      // highest active_bytes seen
  std::uint64_t peak_managed_bytes = 0;     // highest managed_bytes seen
  std::uint64_t hits = 0;                   // requests served from a held block
  std::uint64_t misses = 0;                 // requests served by a new block from the allocator
  std::uint64_t allocator_allocations = 0;  // successful allocator calls (allocate/try_allocate)
  std::uint64_t allocator_failures = 0;     // allocator calls that reported out-of-memory
  std::uint64_t allocator_frees = 0;        // allocator.deallocate calls
  std::uint64_t oom_retries = 0;     // retries after freeing held memory or a reclaim callback
  std::uint64_t reclaim_calls = 0;   // reclaim callbacks called
  std::uint64_t ooms_raised = 0;     // requests that failed: out_of_memory thrown by allocate()
                                     // or std::nullopt from try_allocate()
  std::uint64_t blocks_trimmed = 0;  // held blocks freed by the trim policy or trim()
  std::uint64_t bytes_trimmed = 0;   // their rounded bytes
};

// Bounds on held memory, checked whenever a block is given back to the pool. Off by default, so a
// pool holds everything, as PyOpenCL's does. When a release leaves held_bytes above
//   min(max_held_bytes, max_held_to_active_ratio * active_bytes)
// the pool frees held blocks, largest first, until it is within the budget. Largest first because
// one allocator call then returns the most memory, and small blocks, which are reused most often
// per byte, stay. The check is one comparison on the release path and none on the hit path.
struct trim_policy {
  std::uint64_t max_held_bytes = unlimited;  // absolute cap on held bytes
  double max_held_to_active_ratio = -1.0;    // held <= ratio * active_bytes; negative: off

  // True when either bound is set.
  bool enabled() const { return max_held_bytes != unlimited || max_held_to_active_ratio >= 0.0; }
};

// The held blocks of one bin, for reports ("memory held in other bins") and model tests.
struct held_bin_summary {
  bin_id bin = 0;
  std::uint64_t block_bytes = 0;  // the bin's rounded block size
  std::uint64_t blocks = 0;       // held blocks in the bin
};

// Options fixed or initial at construction.
struct pool_options {
  unsigned leading_bits = default_leading_bits;  // see bins.h; 0 to max_leading_bits
  std::uint64_t limit_bytes = unlimited;         // managed bytes never exceed this
  trim_policy trim = {};                         // off by default
};

// What happened, for observers.
enum class pool_event_kind : std::uint8_t {
  hit,                 // a request was served from a held block
  miss,                // a request was served by a new block from the allocator
  release,             // an allocation gave its block back (kept, or freed when not holding)
  allocator_allocate,  // the allocator produced a block
  allocator_failed,    // the allocator reported out-of-memory
  allocator_free,      // a block went back to the allocator
  free_held,           // free_held() or free_all_blocks() emptied the pool's bins
  stop_holding,        // stop_holding() was called
  oom_retry,           // held memory was freed (or a reclaim callback ran) and the request retried
  reclaim,             // a reclaim callback is about to run
  out_of_memory,       // a request failed: out_of_memory is about to be thrown (allocate()) or
                       // std::nullopt returned (try_allocate())
  trim,                // the trim policy or trim() freed held blocks
  limit_changed,       // set_limit() took effect
};

// Returns a stable lower-case name for `kind`, e.g. "hit", "allocator_free".
const char* to_string(pool_event_kind kind);

// One event. `allocation_id` names the allocation for hit, miss, release and out_of_memory
// (ids start at 1 and are unique per pool; 0 means "none").
struct pool_event {
  pool_event_kind kind{};
  std::uint64_t allocation_id = 0;
  std::uint64_t bytes = 0;          // requested bytes, or a block's rounded bytes
  std::uint64_t rounded_bytes = 0;  // the block's rounded bytes
  pool_counters counters;           // the accounting just after the event
};

// Receives a pool's events. Called with the pool's lock held, so events arrive in the order they
// took effect and `counters` match them exactly. An observer must therefore be quick, must not
// call back into the pool, and must not throw.
class pool_observer {
 public:
  virtual ~pool_observer() = default;
  virtual void on_event(const pool_event& event) noexcept = 0;
};

// Called when a request cannot be satisfied even after freeing held memory, in registration order,
// with no pool lock held. It may release allocations of this pool (the analogue of PyOpenCL calling
// the garbage collector); the pool then frees what is held and retries. `bytes_needed` is the
// rounded size of the failing request.
using reclaim_callback = std::function<void(std::uint64_t bytes_needed)>;

// Names a registered reclaim callback, for removal.
using reclaim_callback_id = std::uint64_t;

}  // namespace clpool

#endif  // CLPOOL_POOL_POOL_TYPES_H_
