// The seam between the pool and a backend: a two-function allocator interface, and an optional
// third function that reports out-of-memory without an exception.
//
// The pool core never includes an OpenCL header. An OpenCL buffer allocator, an SVM allocator or a
// test fake all plug in here by providing a handle type and two functions.
#ifndef CLPOOL_POOL_ALLOCATOR_H_
#define CLPOOL_POOL_ALLOCATOR_H_

#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "pool/errors.h"

namespace clpool {

// A block allocator:
//   - `handle_type`: a cheap, copyable value naming one block (a cl_mem, a pointer, an id). It is
//     stored in the pool's free lists, so copies must be nothrow.
//   - `allocate(bytes)` returns a new block of at least `bytes` bytes. To say "no room" it throws
//     clpool::allocator_out_of_memory; any other exception is a different failure, which the pool
//     passes on unchanged. It is never called with 0.
//   - `deallocate(handle, bytes)` gives a block back; `bytes` is what was passed to allocate. It
//     must not throw: there is nobody to report to on the release path.
// The pool serialises its calls to one allocator, so an allocator need not be thread-safe itself.
template <class A>
concept block_allocator = std::is_nothrow_copy_constructible_v<typename A::handle_type> &&
    std::is_nothrow_copy_assignable_v<typename A::handle_type> &&
    std::is_default_constructible_v<typename A::handle_type> &&
    requires(A& a, std::uint64_t bytes, typename A::handle_type h) {
  { a.allocate(bytes) } -> std::same_as<typename A::handle_type>;
  { a.deallocate(h, bytes) }
  noexcept;
};

// What an allocator says when the device has no room for a block: the same two facts
// allocator_out_of_memory carries, for the oom_report.
struct allocator_refusal {
  int status = 0;       // the backend's status code, e.g. CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)
  std::string message;  // what the backend said, for people
  // Set when a limit refused rather than the backend (limited_allocator, pool/shared_limit.h):
  // that limit's bytes. The pool then reports oom_cause::limit with this limit.
  std::uint64_t limit_bytes = std::numeric_limits<std::uint64_t>::max();
};

// A block allocator that can also say "no room" without throwing:
//   - `try_allocate(bytes, out, refusal)` returns true with a new block of at least `bytes` bytes
//     in `out`, or returns false after filling `refusal`: the same meaning as allocate() throwing
//     allocator_out_of_memory. Any other failure still throws. It is never called with 0.
// The pool calls try_allocate() instead of allocate() when the allocator has it (and still treats
// an allocator_out_of_memory thrown from it as a refusal). Running out of
// room is routine on the pool's retry path (each failed request makes up to three attempts), and
// an exception costs microseconds where a returned status costs nanoseconds, so an allocator that
// learns about out-of-memory from a status code should provide it.
template <class A>
concept allocator_reports_oom_by_value = block_allocator<A> &&
    requires(A& a, std::uint64_t bytes, typename A::handle_type& out, allocator_refusal& why) {
  { a.try_allocate(bytes, out, why) } -> std::same_as<bool>;
};

// A block allocator that knows the largest block it can make (a device's
// CL_DEVICE_MAX_MEM_ALLOC_SIZE):
//   - `largest_block()` returns it, and does not change while the allocator lives.
// A pool rounds no request of at most that size above it: a request in the one bin whose size
// exceeds it while holding smaller sizes (bins.h straddling_bin) is served with a block of exactly
// its size, which is not kept when released (memory_pool.h). Without this, a request the device
// allows, rounded up to its bin, is one it refuses (CL_INVALID_BUFFER_SIZE). Larger requests are
// pooled as ever.
template <class A>
concept allocator_knows_largest_block = block_allocator<A> && requires(const A& a) {
  { a.largest_block() }
  noexcept->std::same_as<std::uint64_t>;
};

// largest_block() where the allocator has one, else no limit: for pools and for wrappers that
// pass it on.
template <class A>
std::uint64_t largest_block_of(const A& allocator) noexcept {
  if constexpr (allocator_knows_largest_block<A>) {
    return allocator.largest_block();
  } else {
    return std::numeric_limits<std::uint64_t>::max();
  }
}

// allocate() for an allocator whose try_allocate() does the work: a refusal becomes
// allocator_out_of_memory with the same status and message.
template <class A>
typename A::handle_type allocate_or_throw(A& allocator, std::uint64_t bytes) {
  typename A::handle_type handle{};
  allocator_refusal refusal;
  if (!allocator.try_allocate(bytes, handle, refusal)) {
    throw allocator_out_of_memory(refusal.status, refusal.message);
  }
  return handle;
}

}  // namespace clpool

#endif  // CLPOOL_POOL_ALLOCATOR_H_
